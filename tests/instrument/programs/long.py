"""A job that measures a region on every rank, then keeps working until it is ended (SIGTERM tests).

``long.py READY_FILE [MODE]``: after the first region has exited on every rank, rank 0 creates READY_FILE;
then each rank loops in short regions (MODE ``loop``) or waits in a barrier that never completes (``barrier``:
rank 0 sleeps in Python while the others block inside MPI), or (``straggler``) rank 1 sleeps in Python while the
others end (they wait for it in the exit gather, then in MPI_Finalize).
"""

import pathlib
import sys
import time

from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
ready, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "loop"
with instrument.region("setup"):
    time.sleep(0.05)
comm.barrier()
if comm.Get_rank() == 0:
    pathlib.Path(ready).write_text("ready")
if mode == "barrier":
    if comm.Get_rank() == 0:
        with instrument.region("wait"):
            time.sleep(600)
    comm.barrier()
if mode == "straggler":
    if comm.Get_rank() == 1:
        with instrument.region("wait"):
            time.sleep(600)
    sys.exit()
while True:
    with instrument.region("work"):
        time.sleep(0.01)
