"""A small program for the sweep runner: fails for n = 2, hangs for n = 99; ``--expect-n N`` fails unless N is n
(the value a sweep put into the arguments)."""

import sys
import time

from extrap_plugins import instrument

n = instrument.parameter("n", 1)
if "--expect-n" in sys.argv and sys.argv[sys.argv.index("--expect-n") + 1] != f"{n:g}":
    sys.exit(f"--expect-n {sys.argv[sys.argv.index('--expect-n') + 1]}, but n = {n:g}")
with instrument.region("work"):
    if n == 2:
        print("n = 2 is not supported", file=sys.stderr)
        sys.exit(3)
    if n == 99:
        time.sleep(60)
print("done", n)
