"""A program that starts two more processes with ``Spawn`` and broadcasts 4 doubles to them from its rank 0 (the
spawned copies of this file, started as plain ``python``, receive them)."""

import sys

import numpy as np
from mpi4py import MPI

parent = MPI.Comm.Get_parent()
if parent != MPI.COMM_NULL:  # a spawned process
    parent.Bcast(np.empty(4), root=0)
    parent.Disconnect()
else:
    world = MPI.COMM_WORLD
    children = world.Spawn(sys.executable, args=[__file__], maxprocs=2)
    children.Bcast(np.ones(4), root=MPI.ROOT if world.Get_rank() == 0 else MPI.PROC_NULL)
    children.Disconnect()
