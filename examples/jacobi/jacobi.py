"""A small real mpi4py application: Jacobi iterations for the Laplace equation, instrumented.

Each of the p ranks owns ``rows`` × ``n`` points of a grid that is periodic in
the row direction (a cylinder) and held at fixed values on its left and right
edges.  Every iteration exchanges one halo row of ``n`` doubles with each of
the two neighbours (two ``Sendrecv`` calls), updates the interior, and every
``check`` iterations an ``Allreduce`` sums the squared change (the residual).

So, per rank: the halo exchange sends and receives ``2 · 8 · n`` bytes per
iteration whatever p is (constant in p, linear in n), and the residual
check sends 8 bytes per ``Allreduce``.

Run it alone (``mpiexec -n 4 python jacobi.py``), or sweep it::

    extrap-plugins run --np 1,2,3,4,5 --param n=64,128,256,512,1024 -o runs/ -- python examples/jacobi/jacobi.py
    extrap-plugins model runs/ --metric bytes_sent

The parameter ``n`` comes from the sweep (``EXTRAP_PARAM_N``) or defaults to
256; ``--rows``, ``--iterations`` and ``--check`` on the command line change
the work per run.
"""

from __future__ import annotations

import argparse

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)


@instrument.region("setup")
def setup(rows: int, n: int, rank: int) -> tuple[np.ndarray, MPI.Cartcomm]:
    """The local block with two ghost rows, and a periodic 1-D process grid."""
    grid = comm.Create_cart([comm.Get_size()], periods=[True], reorder=False)
    u = np.zeros((rows + 2, n))
    u[:, 0] = 1.0  # hot left edge, cold right edge
    u[:, -1] = 0.0
    # a start between the edge values keeps every value far from subnormal numbers (slow arithmetic)
    u[1:-1, 1:-1] = 0.25 + 0.5 * np.random.default_rng(rank).random((rows, n - 2))
    return u, grid


@instrument.region("halo_exchange")
def exchange(u: np.ndarray, grid: MPI.Cartcomm) -> None:
    """Send the first and last owned rows to the neighbours; fill the ghost rows."""
    up, down = grid.Shift(0, 1)
    grid.Sendrecv(u[1], dest=up, recvbuf=u[-1], source=down)
    grid.Sendrecv(u[-2], dest=down, recvbuf=u[0], source=up)


@instrument.region("update")
def update(u: np.ndarray, new: np.ndarray) -> float:
    """One Jacobi sweep over the interior; returns the local squared change."""
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    change = new[1:-1, 1:-1] - u[1:-1, 1:-1]
    return float(np.square(change).sum())  # not np.dot: BLAS threads would fight the MPI ranks for cores


@instrument.region("residual")
def residual(local: float, grid: MPI.Cartcomm) -> float:
    total = np.zeros(1)
    grid.Allreduce(np.array([local]), total, op=MPI.SUM)
    return float(np.sqrt(total[0]))


@instrument.region("main")
def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description="Jacobi iterations on a periodic cylinder, instrumented")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--check", type=int, default=10, help="iterations between residual checks")
    parser.add_argument("--rows", type=int, default=32, help="rows per rank")
    args = parser.parse_args(argv)
    n = instrument.parameter("n", 256)  # columns: EXTRAP_PARAM_N in a sweep, else 256
    rows = args.rows
    u, grid = setup(rows, n, comm.Get_rank())
    new = u.copy()
    norm = float("nan")
    for iteration in range(1, args.iterations + 1):
        exchange(u, grid)
        local = update(u, new)
        u, new = new, u
        if iteration % args.check == 0:
            norm = residual(local, grid)
    if comm.Get_rank() == 0:
        print(f"p={comm.Get_size()} n={n} rows={rows}: residual after {args.iterations} iterations {norm:.3e}")
    return norm


if __name__ == "__main__":
    main()
