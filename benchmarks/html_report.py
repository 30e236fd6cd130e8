"""The HTML report at scale: export time, file size and time to interactive in headless chromium.

Usage (from the project root; needs Debian's chromium and the test extra's playwright)::

    .venv/bin/python benchmarks/html_report.py [--sizes 1000 10000] [--plot-top 50] [--repeat 3]

For each number of call paths it builds a synthetic experiment (two parameters, 5 x 5 points, 3
repetitions, one metric, call paths in a tree of depth 3 with known PMNF functions), models it with the
default modeler, and prints:

* ``extrapolate``: ``extrapolate(models, target)`` (values at the target, shares, growth, intervals);
* ``export``: the whole ``html`` export, static SVG plots of the first ``--plot-top`` rows included;
* ``size``: the report's size;
* ``interactive``: time from navigation start until the page's script has drawn the table and the call
  tree (the ``report-ready`` performance mark), best of ``--repeat`` page loads;
* ``sort``: time for a click on "value at target" to re-sort and redraw the table, measured in the page;
* ``scroll``: time to draw the rows after jumping to the bottom of the table.

The issue's goal is a time to interactive under 3 s with 10,000 call paths.  Extra-P 4.2.5 has no
HTML report (its viewer is a Qt desktop program), so there is no column to compare with.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TARGET = "p=65536,n=1e6"


def synthetic_experiment(n_callpaths: int, seed: int = 1):
    """``n_callpaths`` call paths main->kK->fJ with one of six known behaviours each, ±2 % noise."""
    from extrap_plugins import Experiment

    rng = np.random.default_rng(seed)
    p = np.array([4.0, 8, 16, 32, 64])
    n = np.array([1024.0, 2048, 4096, 8192, 16384])
    P, N = (a.ravel() for a in np.meshgrid(p, n, indexing="ij"))
    shapes = [
        lambda P, N: 0.1 + 1e-4 * N,
        lambda P, N: 0.05 + 0.01 * np.log2(P),
        lambda P, N: 0.2 + 2e-3 * P,
        lambda P, N: 0.01 + 1e-6 * N * np.log2(N),
        lambda P, N: 0.3 + 1e-5 * P**2,
        lambda P, N: 0.02 + 1e-5 * np.sqrt(N) * np.log2(P),
    ]
    names = ["main"] + [f"main->k{k // 100}->f{k % 100}" if k % 100 else f"main->k{k // 100}"
                        for k in range(n_callpaths - 1)]
    values = np.empty((len(names), P.size))
    for i in range(len(names)):
        values[i] = shapes[i % len(shapes)](P, N) * (1 + 0.1 * rng.random())
    values[0] = values[1:].sum(axis=0) + 0.01
    reps = 3
    noisy = np.repeat(values, reps, axis=1) * rng.uniform(0.98, 1.02, (len(names), P.size * reps))
    coordinates = np.tile(np.repeat(np.column_stack([P, N]), reps, axis=0), (len(names), 1))
    codes = np.repeat(np.arange(len(names)), P.size * reps)
    return Experiment.from_columns(["p", "n"], callpath=(names, codes), metric="time", coordinates=coordinates,
                                   value=noisy.ravel(), source=f"synthetic-{n_callpaths}")


def measure_page(browser, path: pathlib.Path, repeat: int) -> dict[str, float]:
    best = {"interactive": float("inf"), "sort": float("inf"), "scroll": float("inf")}
    for _ in range(repeat):
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, bypass_csp=True)
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_function("window.__reportReady === true", timeout=120_000)
        ready = page.evaluate("performance.getEntriesByName('report-ready')[0].startTime")
        sort = page.evaluate("""() => {
            const t = performance.now();
            document.querySelector('th[data-key="target"]').click();
            return performance.now() - t; }""")
        scroll = page.evaluate("""() => new Promise(resolve => {
            const s = document.getElementById('scroller');
            const t = performance.now();
            s.scrollTop = s.scrollHeight;
            requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t))); })""")
        best = {"interactive": min(best["interactive"], ready / 1000), "sort": min(best["sort"], sort / 1000),
                "scroll": min(best["scroll"], scroll / 1000)}
        context.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--plot-top", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    import extrap_plugins
    from extrap_plugins.extrapolation import extrapolate
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        for size in args.sizes:
            experiment = synthetic_experiment(size)
            start = time.perf_counter()
            models = extrap_plugins.model(experiment, executor="serial")
            modeled = time.perf_counter() - start
            start = time.perf_counter()
            extrapolate(models, TARGET)
            extrapolated = time.perf_counter() - start
            path = pathlib.Path(folder) / f"report-{size}.html"
            start = time.perf_counter()
            extrap_plugins.export(models, "html", path, target=TARGET, plot_top=args.plot_top)
            exported = time.perf_counter() - start
            page = measure_page(browser, path, args.repeat)
            rows.append([f"{size:,}", f"{modeled:.2f} s", f"{extrapolated:.2f} s", f"{exported:.2f} s",
                         f"{path.stat().st_size / 2**20:.1f} MiB", f"{page['interactive']:.2f} s",
                         f"{1000 * page['sort']:.0f} ms", f"{1000 * page['scroll']:.0f} ms",
                         "yes" if page["interactive"] < 3 else "NO"])
        browser.close()
    from tabulate import tabulate

    print(f"html report, target {TARGET}, {args.plot_top} static plots, best of {args.repeat} page loads")
    print(tabulate(rows, headers=["call paths", "model", "extrapolate", "export", "size", "interactive",
                                  "sort", "scroll", "< 3 s"], tablefmt="github", disable_numparse=True))


if __name__ == "__main__":
    sys.exit(main())
