"""Strong scaling in a real mpi4py program: a Mandelbrot image whose rows are dealt out among the ranks.

The image has ``n`` rows of ``width`` pixels.  Rank 0 broadcasts the view (two doubles: 16 bytes), every
rank computes the rows ``r, r + p, r + 2p, ...`` (one ``compute_row`` visit each) and the rows come back to
rank 0 with one ``Gatherv``.  So, as the mean over the ranks (what ``model`` fits by default):

- ``main->compute_row`` visits: ``n / p`` (the rows a rank computes; exact for any p, since the mean of the
  rows per rank is the total over p);
- ``main->MPI_Bcast`` bytes sent: ``16 / p`` (only the root sends);
- ``main->MPI_Gatherv`` bytes sent: ``8 · width · n / p`` (every rank sends its rows once);
- time falls with p where the ranks have cores of their own.

Work divided among ranks is what a modeler must predict without ever going negative: ``n / p`` has no
constant, and a rising-then-cancelling fit such as ``a·n − b·log2(p)·n`` turns negative a few doublings
beyond the data.  Run it alone (``mpiexec -n 4 python mandelbrot.py``) or sweep it::

    extrap-plugins run --np 1,2,3,4,5 --param n=60 -o runs/ -- python examples/mandelbrot/mandelbrot.py
    extrap-plugins run --np 2 --param n=16,32,128,256 -o runs/ -- python examples/mandelbrot/mandelbrot.py
    extrap-plugins model runs/ --metric visits,bytes_sent

The parameter ``n`` comes from the sweep (``EXTRAP_PARAM_N``) or defaults to 128; ``--width`` and
``--iterations`` (the escape-time limit) change the work per row.
"""

from __future__ import annotations

import argparse

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)


@instrument.region("compute_row")
def compute_row(row: int, n: int, width: int, view: np.ndarray, iterations: int) -> np.ndarray:
    """Escape times of one row of the image (as doubles)."""
    (x0, x1), (y0, y1) = (-2.0, 0.6), (float(view[0]), float(view[1]))
    c = np.linspace(x0, x1, width) + 1j * (y0 + (y1 - y0) * (row + 0.5) / n)
    z = np.zeros_like(c)
    escaped = np.full(width, float(iterations))
    for step in range(iterations):
        running = escaped == iterations
        z[running] = z[running] ** 2 + c[running]
        escaped[running & (np.abs(z) > 2.0)] = step
    return escaped


@instrument.region("main")
def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description="A Mandelbrot image, rows dealt out among the ranks")
    parser.add_argument("--width", type=int, default=64, help="pixels per row")
    parser.add_argument("--iterations", type=int, default=50, help="escape-time limit")
    args = parser.parse_args(argv)
    n = int(instrument.parameter("n", 128))  # rows: EXTRAP_PARAM_N in a sweep, else 128
    rank, size = comm.Get_rank(), comm.Get_size()

    view = np.array([-1.2, 1.2]) if rank == 0 else np.empty(2)
    comm.Bcast(view, root=0)  # 16 bytes from the root

    mine = range(rank, n, size)
    local = np.concatenate([compute_row(row, n, args.width, view, args.iterations) for row in mine]) \
        if len(mine) else np.empty(0)
    counts = [len(range(r, n, size)) * args.width for r in range(size)]
    image = np.empty(n * args.width) if rank == 0 else None
    comm.Gatherv(local, [image, counts] if rank == 0 else None, root=0)

    mean = float(image.mean()) if rank == 0 else float("nan")
    if rank == 0:
        print(f"p={size} n={n} width={args.width}: mean escape time {mean:.3f}")
    return mean


if __name__ == "__main__":
    main()
