"""RELeARN's own timer output (the ``.out`` files of github extra-p/extrap-gpr,
``relearn/relearn-125_execution_times``: p = 32…512 × size = 5000…9000 × theta = 0.1…0.5, two runs per file) as an
Extra-P text file with three parameters, a held-out real case for ``benchmarks/design.py --case data``.

Each file ``relearn_p{p}_size{n}_theta{theta}.*.out`` holds one "TIMERS GLOBAL OVER ALL RANKS" table per run; a
kernel's value is its ``max`` column over the ranks, as the repository's ``collect_execution_times.sh`` takes it
for ``relearn_data.txt`` (whose theta = 0.1 slice this reproduces, except that a file with one run gives one
value here, where that script writes the value twice)::

    git clone https://github.com/extra-p/extrap-gpr
    python benchmarks/relearn_outputs.py extrap-gpr/relearn/relearn-125_execution_times > relearn3.txt
    python benchmarks/design.py --case data --data relearn3.txt --relearn-budgets 10,20,50 --strategies ours,gpr,cpf
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

NAME = re.compile(r"relearn_p(\d+)_size(\d+)_theta([\d.]+)\.")
ROW = re.compile(r"\s+(\S.*?)\s+:\s+\S+\s+\|\s+\S+\s+\|\s+(\S+)")
"""A row of a timer table: the kernel's name and its ``max`` column (``min | avg | max``)."""


def read_folder(folder: pathlib.Path) -> tuple[list[tuple[int, int, float]], list[str], dict]:
    """The points, the kernels in the order of the tables, and per kernel per point the values of its runs."""
    values: dict[str, dict[tuple, list[float]]] = {}
    points = set()
    for path in sorted(folder.glob("*.out")):
        match = NAME.search(path.name)
        if match is None:
            continue
        point = (int(match[1]), int(match[2]), float(match[3]))
        points.add(point)
        for table in path.read_text().split("TIMERS: main()")[1:]:
            for line in table.splitlines()[1:]:
                row = ROW.match(line)
                if row is None:  # the end of the table
                    break
                values.setdefault(row[1], {}).setdefault(point, []).append(float(row[2]))
    return sorted(points), list(values), values


def to_text(points, kernels, values) -> str:
    """Extra-P's text format: parameters p, n and theta, one REGION per kernel, one DATA line per point."""
    lines = ["PARAMETER p", "PARAMETER n", "PARAMETER theta", ""]
    lines += [f"POINTS ( {p} {n} {theta} )" for p, n, theta in points]
    lines += ["", "METRIC time", ""]
    for kernel in kernels:
        lines.append(f"REGION {kernel}")
        lines += ["DATA " + " ".join(repr(v) for v in values[kernel].get(point, [])) for point in points]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=pathlib.Path, help="the folder of RELeARN's .out files")
    args = parser.parse_args(argv)
    points, kernels, values = read_folder(args.folder)
    if not points:
        print(f"{args.folder}: no relearn_p*_size*_theta*.out files", file=sys.stderr)
        return 2
    sys.stdout.write(to_text(points, kernels, values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
