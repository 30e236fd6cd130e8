"""What real mpi4py codes do beside the patterns: vector collectives given one count on an intercommunicator of
unequal groups (ranks 0 and 2 against rank 1), vector collectives given counts as numpy arrays and numbers, and a thread of rank 0 that waits for any message on
``MPI.COMM_WORLD`` (rank 2's, sent last) while rank 1 has ended (the shim's own exit messages must not reach it)."""

import threading
import time

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

world = instrument.mpi.wrap(MPI.COMM_WORLD)
rank = world.Get_rank()
group = rank % 2
local = world.Split(group, rank)
inter = local.Create_intercomm(0, world, 1 - group, tag=7)
remote = inter.Get_remote_size()
root = (MPI.ROOT if local.Get_rank() == 0 else MPI.PROC_NULL) if group == 0 else 0
with instrument.region("vectors"):
    inter.Gatherv(None if group == 0 else np.ones(2), [np.empty(2 * remote), 2, MPI.DOUBLE] if group == 0 else None,
                  root=root)
    inter.Scatterv([np.ones(3 * remote), 3, MPI.DOUBLE] if group == 0 else None, None if group == 0 else np.empty(3),
                   root=root)
    inter.Alltoallv([np.ones(remote, "i"), 1, MPI.INT], [np.empty(remote, "i"), 1, MPI.INT])
    inter.Allgatherv(np.ones(1), [np.empty(remote), 1, MPI.DOUBLE])
counts = np.array([1, 2, 3])  # rank k has k + 1 doubles: counts as numpy computes them
displs = np.cumsum(counts) - counts
with instrument.region("numpy_counts"):
    if rank == 0:
        world.Gatherv(MPI.IN_PLACE, [np.zeros(6), counts, displs, MPI.DOUBLE], root=0)
        world.Scatterv([np.zeros(6), counts, displs, MPI.DOUBLE], MPI.IN_PLACE, root=0)
    else:
        world.Gatherv(np.ones(rank + 1), None, root=0)
        world.Scatterv(None, np.empty(rank + 1), root=0)
    world.Gatherv(np.ones(2), [np.empty(6), np.int64(2), MPI.DOUBLE] if rank == 0 else None, root=0)
    world.Allgatherv(MPI.IN_PLACE, [np.zeros(6), (counts, displs), MPI.DOUBLE])
    world.Reduce_scatter(MPI.IN_PLACE, np.ones(6), recvcounts=counts)
if rank == 0:  # waits for rank 2's last word while rank 1 has ended already
    heard = []
    listener = threading.Thread(target=lambda: heard.append(world.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG)))
    listener.start()
if rank == 2:
    time.sleep(0.3)
    world.send("bye", dest=0, tag=3)
if rank == 0:
    listener.join()
    print("rank 0 heard", heard)
