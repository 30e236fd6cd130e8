"""Instrumentation shim for mpi4py programs (``from extrap_plugins import instrument``).

Built in a later step: regions, MPI traffic counting and a sweep runner.
"""
