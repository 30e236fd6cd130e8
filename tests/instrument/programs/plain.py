"""No MPI at all: a plain Python run is p = 1."""

from extrap_plugins import instrument


@instrument.region
def work(n):
    return sum(range(n))


instrument.parameters(m=3)
n = instrument.parameter("n", 10)
for _ in range(4):
    work(n)
print("n", n)
