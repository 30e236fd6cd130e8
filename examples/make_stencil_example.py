"""Write examples/stencil.jsonl: a synthetic 2-D stencil code measured at 25 configurations.

The true behaviour per call path (p = processes, n = grid points per process):

    main->setup           time        0.3 + 0.002 * p                  (the scalability bug)
    main->compute         time        0.2 + 3e-5 * n * log2(n)
    main->halo_exchange   time        0.05 + 1e-4 * n^(1/2) * log2(p)
    main->allreduce       time        0.001 + 0.004 * log2(p)
    main->halo_exchange   bytes_sent  64 * n^(1/2)                     (noise-free counter)
    main->allreduce       bytes_sent  8                                (noise-free counter)

Times carry ±2 % uniform noise and 3 repetitions.  Run ``python examples/make_stencil_example.py``
to rebuild the file; the seed is fixed, so the output is identical every time.
"""

import json
import pathlib

import numpy as np

P = (4, 8, 16, 32, 64)
N = (1024, 2048, 4096, 8192, 16384)
REPETITIONS = 3

TIME = {
    "main->setup": lambda p, n: 0.3 + 0.002 * p,
    "main->compute": lambda p, n: 0.2 + 3e-5 * n * np.log2(n),
    "main->halo_exchange": lambda p, n: 0.05 + 1e-4 * n**0.5 * np.log2(p),
    "main->allreduce": lambda p, n: 0.001 + 0.004 * np.log2(p),
}
BYTES = {
    "main->halo_exchange": lambda p, n: 64 * n**0.5,
    "main->allreduce": lambda p, n: 8.0,
}


def rows(rng):
    for p in P:
        for n in N:
            for _ in range(REPETITIONS):
                noisy = {c: f(p, n) * rng.uniform(0.98, 1.02) for c, f in TIME.items()}
                yield {"params": {"p": p, "n": n}, "callpath": "main", "metric": "time",
                       "value": round(sum(noisy.values()) + 0.01, 9)}
                for callpath, value in noisy.items():
                    yield {"params": {"p": p, "n": n}, "callpath": callpath, "metric": "time",
                           "value": round(value, 9)}
                for callpath, f in BYTES.items():
                    yield {"params": {"p": p, "n": n}, "callpath": callpath, "metric": "bytes_sent",
                           "value": float(f(p, n))}


if __name__ == "__main__":
    target = pathlib.Path(__file__).with_name("stencil.jsonl")
    with target.open("w") as out:
        for row in rows(np.random.default_rng(2026)):
            out.write(json.dumps(row) + "\n")
    print(f"wrote {target}")
