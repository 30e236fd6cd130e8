"""The program calls MPI.Finalize() itself, inside a region, and keeps going."""

import sys

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)


@instrument.region("main")
def main():
    for _ in range(5):
        comm.Allreduce(np.ones(2), np.empty(2))
    MPI.Finalize()
    sys.stdout.write(f"finalized {MPI.Is_finalized()}\n")  # one write: ranks share the output


main()
