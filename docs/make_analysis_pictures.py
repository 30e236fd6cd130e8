"""Make docs/efficiency.png and docs/compare.png, the README's pictures of the efficiency and compare reports.

Usage (from the project root; needs Debian's chromium, the test extra's playwright, and ../shared/data)::

    .venv/bin/python docs/make_analysis_pictures.py

The efficiency picture is the report of ``examples/isoefficiency.csv`` (the efficiency plot with the level, and
the iso-efficiency curve); the compare picture is the figure of MPI_Barrier, Intel MPI against Open MPI from
``mpi_data.csv`` (two curves, the crossover marked).
"""

import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
MPI = str(ROOT / ".." / "shared" / "data" / "extrap" / "mpi_data.csv")


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        efficiency = pathlib.Path(folder) / "efficiency.html"
        compare = pathlib.Path(folder) / "compare.html"
        run = [sys.executable, "-m", "extrap_plugins"]
        subprocess.run(run + ["efficiency", "examples/isoefficiency.csv", "--size", "n", "--target", "1024",
                              "--export", "html", "-o", str(efficiency)], check=True, cwd=ROOT)
        subprocess.run(run + ["compare", MPI, MPI, "--reader-option", "value=median", "--reader-option",
                              "parameters=Ranks", "--reader-option", "callpath=mpi,variable", "--callpath-a",
                              "IntelMPI->*", "--callpath-b", "OpenMPI->*", "--map-rule", "IntelMPI->*=OpenMPI->*",
                              "--label", "A=IntelMPI", "--label", "B=OpenMPI", "--target", "Ranks=4096",
                              "--export", "html", "-o", str(compare)], check=True, cwd=ROOT)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1560, "height": 900}, device_scale_factor=1)
            page.goto(efficiency.as_uri())
            page.evaluate("""() => {  // the two figures side by side
                const a = document.querySelector('#efficiency-figure');
                const b = document.querySelector('#isoefficiency-figure');
                const row = document.createElement('div'); row.style.display = 'flex'; row.style.gap = '16px';
                a.parentNode.insertBefore(row, a); row.appendChild(a); row.appendChild(b);
                document.querySelector('main').style.maxWidth = 'none'; }""")
            page.locator("#plots").screenshot(path=str(ROOT / "docs" / "efficiency.png"))
            page.goto(compare.as_uri())
            barrier = page.locator(".pair", has_text="IntelMPI->MPI_Barrier")  # the README's caption: by name,
            barrier.locator("svg").screenshot(path=str(ROOT / "docs" / "compare.png"))  # not its rank
            browser.close()
    print("docs/efficiency.png, docs/compare.png")


if __name__ == "__main__":
    main()
