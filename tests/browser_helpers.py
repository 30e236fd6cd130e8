"""Headless Chromium for the report tests (the HTML exporter, efficiency, compare): one browser fixture and its skips."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path():
    for candidate in (os.environ.get("EXTRAP_PLUGINS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


@pytest.fixture(scope="module")
def browser():
    executable = chromium_path()
    if executable is None:
        reason = "no chromium browser found (apt-get install chromium); the report's browser tests are skipped"
        print(reason)
        pytest.skip(reason)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "the playwright package is missing (pip install -e '.[test]'); browser tests skipped"
        print(reason)
        pytest.skip(reason)
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


class StaticPage:
    """A page opened from a file, with every console message, page error and request recorded."""

    def __init__(self, browser, path):
        self.page = browser.new_page(viewport={"width": 1300, "height": 900})
        self.console, self.requests = [], []
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.url = path.as_uri()
        self.page.goto(self.url, wait_until="load")

    def count(self, selector: str) -> int:
        return self.page.eval_on_selector_all(selector, "nodes => nodes.length")

    def width(self, selector: str) -> float:
        return self.page.eval_on_selector(selector, "node => node.getBoundingClientRect().width")
