"""Known communication patterns, for exact message and byte counts (run under mpiexec -n 1, 2, 4)."""

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
rank, size = comm.Get_rank(), comm.Get_size()
assert isinstance(comm, MPI.Intracomm) and instrument.mpi.is_wrapped(comm)
assert instrument.mpi.wrap(comm) is comm
try:
    instrument.mpi.wrap("COMM_WORLD")
except TypeError as error:
    assert str(error) == "wrap() expects an mpi4py communicator such as MPI.COMM_WORLD, got str"
else:
    raise AssertionError("wrap() accepted a string")
right, left = (rank + 1) % size, (rank - 1) % size


@instrument.region
def ring():
    """10 doubles around the ring, 3 times (Isend + Recv), then a dict (sendrecv)."""
    data, got = np.arange(10, dtype=np.float64), np.empty(10)
    for _ in range(3):
        request = comm.Isend(data, dest=right, tag=1)
        comm.Recv(got, source=left, tag=1)
        request.Wait()
    assert got[3] == 3.0
    received = comm.sendrecv({"rank": rank}, dest=right, source=left)
    assert received == {"rank": left}


@instrument.region
def nonblocking():
    """10 doubles around the ring (Irecv + Isend, MPI.Request.Waitall), then an int (irecv + isend, wait)."""
    data, got = np.arange(10, dtype=np.float64), np.empty(10)
    requests = [comm.Irecv(got, source=left, tag=4), comm.Isend(data, dest=right, tag=4)]
    assert isinstance(requests[0], MPI.Request) and issubclass(MPI.Prequest, MPI.Request)

    class Mine(MPI.Request):  # a program's own subclass answers for its own instances only
        pass

    assert not isinstance(requests[0], Mine) and isinstance(Mine(requests[1]), Mine) and not issubclass(MPI.Prequest, Mine)
    MPI.Request.Waitall(requests)
    assert got[3] == 3.0
    incoming = comm.irecv(source=left, tag=5)
    comm.isend(rank, dest=right, tag=5).wait()
    assert incoming.wait() == left
    assert requests[0].Test()  # completed already: one call


@instrument.region
def halo():
    """A non-periodic 1-D halo exchange of 6 floats: the edges talk to MPI.PROC_NULL."""
    grid = comm.Create_cart([size], periods=[False])
    assert isinstance(grid, MPI.Cartcomm) and instrument.mpi.is_wrapped(grid)
    up, down = grid.Shift(0, 1)
    row, ghost = np.ones(6, dtype=np.float32), np.zeros(6, dtype=np.float32)
    grid.Sendrecv(row, dest=down, recvbuf=ghost, source=up)
    grid.Sendrecv([row, 6, MPI.FLOAT], dest=up, recvbuf=[ghost, MPI.FLOAT], source=down)
    sub = grid.Sub([True])
    assert isinstance(sub, MPI.Cartcomm) and instrument.mpi.is_wrapped(sub)
    sub.Barrier()


@instrument.region
def reduce():
    x = np.full(4, rank, dtype=np.int64)
    out = np.zeros(4, dtype=np.int64)
    comm.Reduce(x, out if rank == 0 else None, op=MPI.SUM, root=0)
    comm.Allreduce(MPI.IN_PLACE, x)
    assert x[0] == size * (size - 1) // 2
    assert comm.allreduce(rank) == size * (size - 1) // 2
    blocks = np.empty(size * 2) if rank == 0 else None
    comm.Gather([np.zeros(2), "d"], blocks, root=0)  # a type code instead of a datatype
    comm.Bcast(buf=out, root=0)  # keyword arguments
    halves = comm.Split(rank % 2, rank)
    assert isinstance(halves, MPI.Intracomm) and instrument.mpi.is_wrapped(halves)
    halves.Allreduce(sendbuf=np.ones(3), recvbuf=np.empty(3), op=MPI.MAX)
    twin = halves.Dup()
    assert instrument.mpi.is_wrapped(twin)
    twin.Free()


with instrument.region("main"):
    ring()
    nonblocking()
    halo()
    reduce()
