"""A program that never starts MPI, launched on several ranks: what the shim says of its files."""

from __future__ import annotations

import sys

from shim_helpers import records, run_program


def test_ranks_of_a_program_that_never_started_mpi_say_so_not_that_mpi_was_finalised(tmp_path):
    # (mpiexec -n 2 python -m extrap_plugins.instrument app.py, app.py without mpi4py: each rank writes its own
    # file, and the note said "MPI was finalised before the shim could gather the ranks")
    (tmp_path / "app.py").write_text("import time\ntime.sleep(0.001)\n")
    result = run_program([sys.executable, "-m", "extrap_plugins.instrument", "app.py"], tmp_path,
                         PMI_RANK="0", PMI_SIZE="2", EXTRAP_RUN_ID="r1")
    assert result.returncode == 0, result.stderr
    why = "the program did not start MPI, so the shim could not gather the ranks"
    [fragment] = tmp_path.glob("out.r1.rank0.extrap.jsonl")
    assert result.stderr == (f"extrap-plugins instrument: {why}; each rank wrote its own measurements "
                             f"({tmp_path / 'out.r1.rank*.extrap.jsonl'}); read the folder to join them\n")
    [record] = records(fragment)
    assert record["status"] == "partial" and record["errors"] == [why] and record["size"] == 2
