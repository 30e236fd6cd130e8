"""Rooted collectives on an intercommunicator: the even ranks' group holds the root (``MPI.ROOT`` on its local
rank 0, ``MPI.PROC_NULL`` on the others), the odd ranks' group passes the root's rank, 0."""

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

world = instrument.mpi.wrap(MPI.COMM_WORLD)
rank = world.Get_rank()
group = rank % 2
local = world.Split(group, rank)
inter = local.Create_intercomm(0, world, 1 - group, tag=7)
if group == 0:
    root = MPI.ROOT if local.Get_rank() == 0 else MPI.PROC_NULL
else:
    root = 0
remote = inter.Get_remote_size()
with instrument.region("main"):
    inter.Bcast(np.ones(4), root=root)
    inter.bcast({"x": 1} if group == 0 else None, root=root)
    inter.Reduce(None if group == 0 else np.ones(2), np.empty(2) if group == 0 else None, root=root)
    inter.Gather(None if group == 0 else np.ones(1), np.empty(remote) if group == 0 else None, root=root)
    inter.gather(None if group == 0 else rank, root=root)
    inter.Scatter(np.ones(remote) if group == 0 else None, None if group == 0 else np.empty(1), root=root)
