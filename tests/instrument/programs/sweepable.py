"""A small program for the sweep runner: fails for n = 2, hangs for n = 99."""

import sys
import time

from extrap_plugins import instrument

n = instrument.parameter("n", 1)
with instrument.region("work"):
    if n == 2:
        print("n = 2 is not supported", file=sys.stderr)
        sys.exit(3)
    if n == 99:
        time.sleep(60)
print("done", n)
