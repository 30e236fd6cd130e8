"""Rank r counts 100·(r+1) flop in work (twice 50·(r+1)) and 7 more in main; its footprint peaks at 1000·(r+1)."""

from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
rank = comm.Get_rank()

with instrument.region("main"):
    instrument.count("flop", 7, unit="flop")
    for _ in range(2):
        with instrument.region("work"):
            instrument.count("flop", 50 * (rank + 1), unit="flop")
            instrument.peak("bytes_used", 1000 * (rank + 1))
            instrument.peak("bytes_used", 10)  # smaller: the peak stays
    comm.Barrier()
