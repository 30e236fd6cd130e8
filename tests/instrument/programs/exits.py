"""Every rank wraps the communicator, then ends with the builtin exit('...') before any region runs."""

from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
exit("n = 7 is not supported")
