"""Make docs/report.png, the README's picture of the HTML report of the shipped example.

Usage (from the project root; needs Debian's chromium and the test extra's playwright)::

    .venv/bin/python docs/make_report_picture.py

It runs ``extrap-plugins model examples/stencil.jsonl --target p=65536,n=16384 --export html``,
opens the report in headless chromium, shows the time metric sorted by value at the target, clicks the
row of ``main->setup`` (the scalability bug of the example) and takes a screenshot of the table and the
plot.  Rerun it when the models change.
"""

import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        report = pathlib.Path(folder) / "report.html"
        subprocess.run([sys.executable, "-m", "extrap_plugins", "model", "examples/stencil.jsonl",
                        "--target", "p=65536,n=16384", "--export", "html", "-o", str(report)],
                       check=True, cwd=ROOT)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000}, device_scale_factor=1)
            page.goto(report.as_uri())
            page.wait_for_function("window.__reportReady === true")
            page.select_option("#metric-filter", label="time")
            page.click('th[data-key="target"]')
            page.click('#rows tr[data-row] >> text="main->setup"')
            page.wait_for_selector("#detail figure svg")
            top = page.eval_on_selector("#paths", "e => e.getBoundingClientRect().top + window.scrollY")
            bottom = page.eval_on_selector("#detail", "e => e.getBoundingClientRect().bottom + window.scrollY")
            page.set_viewport_size({"width": 1280, "height": int(bottom) + 20})
            target = ROOT / "docs" / "report.png"
            page.screenshot(path=str(target), clip={"x": 0, "y": max(0, int(top) - 10), "width": 1280,
                                                    "height": int(bottom - top) + 24})
            browser.close()
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
