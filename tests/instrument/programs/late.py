"""Rank 1 reaches the end long after the exit timeout: every rank writes its own file."""

import time

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)

with instrument.region("main"):
    comm.Bcast(np.ones(5), root=0)
    if comm.Get_rank() == 1:
        time.sleep(3.0)
