"""Rank 1 raises while the others still compute (as they would wait in a collective): rank 0 cannot answer
rank 1's exit gather in time, so rank 1 writes its own file, which must say why rank 1 failed."""

import time

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)

with instrument.region("main"):
    comm.Allreduce(np.ones(2), np.empty(2))
    if comm.Get_rank() == 1:
        raise ZeroDivisionError("rank one divides by zero")
    time.sleep(3.0)
