"""Write ``examples/isoefficiency.csv``: a strong-scaling experiment whose efficiency answers are known.

The true time per call path (p = processes, n = total problem size), measured at p = 1, 2, 4, 8, 16, 32 and
n = 10,000 ... 160,000, without noise::

    main                  n/p + 1.5·log2(p)
    main->compute         n/p
    main->allreduce       log2(p)
    main->barrier         0.5·log2(p)

So the resource consumption is C = p·T = n + 1.5·p·log2(p), the work W = C(1, n) = n, the overhead
O = 1.5·p·log2(p) (two thirds of it in main->allreduce), and E = W / C = 0.8 needs n = 6·p·log2(p).
"""

import csv
import math
import pathlib

FUNCTIONS = {
    "main": lambda p, n: n / p + 1.5 * math.log2(p),
    "main->compute": lambda p, n: n / p,
    "main->allreduce": lambda p, n: math.log2(p),
    "main->barrier": lambda p, n: 0.5 * math.log2(p),
}

if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("isoefficiency.csv")
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["callpath", "p", "n", "value"])
        for name, f in FUNCTIONS.items():
            for p in (1, 2, 4, 8, 16, 32):
                for n in (10000, 20000, 40000, 80000, 160000):
                    writer.writerow([name, p, n, repr(f(p, n))])
    print(path)
