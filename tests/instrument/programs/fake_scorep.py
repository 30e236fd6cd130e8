"""Stands in for a Score-P-instrumented program: rank 0 writes the given CUBE profile (a real one of Score-P)
where Score-P would write its own, ``$SCOREP_EXPERIMENT_DIRECTORY/profile.cubex``; exits with the status given
second (default 0).  ``python fake_scorep.py PROFILE [STATUS]``"""

import os
import pathlib
import shutil
import sys

rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
if rank == 0:
    experiment = pathlib.Path(os.environ["SCOREP_EXPERIMENT_DIRECTORY"])
    experiment.mkdir()  # Score-P makes it; it must not exist yet
    shutil.copy(sys.argv[1], experiment / "profile.cubex")
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
