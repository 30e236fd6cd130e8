"""Rank 1 raises after the communication; the others finish normally."""

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)


@instrument.region("main")
def main():
    comm.Allreduce(np.ones(2), np.empty(2))
    if comm.Get_rank() == 1:
        raise ZeroDivisionError("rank one divides by zero")


main()
