"""Neighbourhood collectives given one count per block, receives of matched messages (Mprobe) and exclusive scans,
run under ``python -m extrap_plugins.instrument`` (MPI.COMM_WORLD recorded without a wrap)."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
left, right = (rank - 1) % size, (rank + 1) % size

ring = comm.Create_cart([size], periods=[True])  # two neighbours, whatever the size
ring.Neighbor_alltoallv([np.ones(6, dtype=np.int32), 3], [np.empty(6, dtype=np.int32), 3])  # 2 blocks of 3
ring.Neighbor_allgatherv([np.ones(3, dtype=np.int32), 3, MPI.INT], [np.empty(6, dtype=np.int32), [3, 3], MPI.INT])
chain = comm.Create_dist_graph_adjacent([left], [right])  # one neighbour
chain.Neighbor_alltoallv([np.ones(2, dtype=np.int32), 2], [np.empty(2, dtype=np.int32), 2])

comm.Send(np.ones(5), right, tag=1)
comm.Mprobe(left, 1).Recv(np.empty(5))
comm.send({"rank": rank}, right, tag=2)
comm.mprobe(left, 2).recv()
comm.Send(np.ones(2), right, tag=3)
message = None
while message is None:
    message = comm.Improbe(left, 3)
message.Irecv(np.empty(2)).Wait()
comm.Mprobe(MPI.PROC_NULL).Recv(np.empty(4))  # no message

comm.Exscan(np.ones(3), np.zeros(3))  # rank 0 receives nothing
comm.exscan(rank)
