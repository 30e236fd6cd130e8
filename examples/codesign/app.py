"""A small mpi4py application that records its requirements: memory footprint and operation counts per region.

Each of the ``p`` ranks owns ``n`` values (``n``, the problem size per process, comes from the sweep as
``EXTRAP_PARAM_N``).  Every iteration it

* ``stencil``: exchanges a halo of 64 values with both ring neighbours (``Sendrecv``) and smooths its values
  with a three-point stencil: 3 FLOPs and 4 loads/stores per value;
* ``spectral`` (variant ``spectral`` only): filters its values through a real FFT and back,
  5 · n · log2(n) FLOPs and 4 · n · log2(n) loads/stores (the textbook counts of a radix-2 FFT);
* ``coarse``: averages blocks of its values down to 64 coarse values (n FLOPs, n loads), gathers every rank's
  coarse values (``Allgather``: 64 · p values arrive) and sorts them (2 · m · log2(m) loads/stores for m = 64 · p).

The program records, with the instrument shim, besides time and bytes/messages (measured by the wrapped
communicator) its memory footprint and operation counts:

    instrument.peak("bytes_used", sum(array.nbytes for array in arrays))   # the footprint, in bytes
    instrument.count("flop", 3 * n, unit="flop")                           # operations done in this region
    instrument.count("loads_stores", 4 * n, unit="accesses")

Counts are analytic (what the kernel does, as a PAPI counter would count it); the footprint is the bytes of the
arrays the rank holds: 8 · n for the values and 8 · n for the stencil's output, 16 · (n/2 + 1) for the spectrum
(variant ``spectral``), and 8 · 64 · p for the gathered coarse values.

Sweep it (see the README section "Co-design: requirements and what-if")::

    extrap-plugins run --np 1,2,3,4,5 --param n=4096,8192,16384,32768,65536 --repetitions 2 \
        -o runs/spectral/ -- python examples/codesign/app.py --variant spectral
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from mpi4py import MPI

from extrap_plugins import instrument

comm = instrument.mpi.wrap(MPI.COMM_WORLD)
HALO = 64
COARSE = 64


@instrument.region("setup")
def setup(n: int, variant: str) -> dict[str, np.ndarray]:
    rank, size = comm.Get_rank(), comm.Get_size()
    arrays = {
        "u": 0.25 + 0.5 * np.random.default_rng(rank).random(n),
        "new": np.empty(n),
        "coarse": np.empty(COARSE * size),
    }
    if variant == "spectral":
        arrays["spectrum"] = np.empty(n // 2 + 1, dtype=np.complex128)
    instrument.peak("bytes_used", sum(a.nbytes for a in arrays.values()))
    return arrays


@instrument.region("stencil")
def stencil(arrays: dict[str, np.ndarray]) -> None:
    u, new = arrays["u"], arrays["new"]
    n, size, rank = u.size, comm.Get_size(), comm.Get_rank()
    left, right = (rank - 1) % size, (rank + 1) % size
    from_left, from_right = np.empty(HALO), np.empty(HALO)
    comm.Sendrecv(u[-HALO:], dest=right, recvbuf=from_left, source=left)
    comm.Sendrecv(u[:HALO], dest=left, recvbuf=from_right, source=right)
    new[1:-1] = (u[:-2] + u[1:-1] + u[2:]) * (1.0 / 3.0)
    new[0] = (from_left[-1] + u[0] + u[1]) * (1.0 / 3.0)
    new[-1] = (u[-2] + u[-1] + from_right[0]) * (1.0 / 3.0)
    u[:] = new
    instrument.count("flop", 3 * n, unit="flop")
    instrument.count("loads_stores", 4 * n, unit="accesses")


@instrument.region("spectral")
def spectral(arrays: dict[str, np.ndarray]) -> None:
    u, spectrum = arrays["u"], arrays["spectrum"]
    n = u.size
    spectrum[:] = np.fft.rfft(u)
    spectrum *= np.exp(-np.arange(spectrum.size) / spectrum.size)  # damp the high frequencies
    u[:] = np.fft.irfft(spectrum, n)
    instrument.count("flop", 5 * n * math.log2(n), unit="flop")  # 2.5 · n · log2(n) each way
    instrument.count("loads_stores", 4 * n * math.log2(n), unit="accesses")


@instrument.region("coarse")
def coarse(arrays: dict[str, np.ndarray]) -> float:
    u, gathered = arrays["u"], arrays["coarse"]
    local = u.reshape(COARSE, -1).mean(axis=1)
    comm.Allgather(local, gathered)
    gathered.sort()
    m = gathered.size
    instrument.count("flop", u.size, unit="flop")
    instrument.count("loads_stores", u.size + 2 * m * math.log2(m) if m > 1 else u.size, unit="accesses")
    return float(gathered[m // 2])


@instrument.region("main")
def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description="An mpi4py application that records its requirements")
    parser.add_argument("--variant", choices=("spectral", "stencil"), default="spectral",
                        help="spectral: stencil, FFT filter and coarse gather; stencil: no FFT")
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    n = instrument.parameter("n", 16384)
    if n % COARSE or n < 2 * HALO:
        raise SystemExit(f"n must be a multiple of {COARSE} and at least {2 * HALO}, got {n}")
    arrays = setup(n, args.variant)
    median = math.nan
    for _ in range(args.iterations):
        stencil(arrays)
        if args.variant == "spectral":
            spectral(arrays)
        median = coarse(arrays)
    if comm.Get_rank() == 0:
        print(f"{args.variant}: p={comm.Get_size()} n={n}: median coarse value {median:.6f}")
    return median


if __name__ == "__main__":
    main()
