"""The HTML report, opened in a real headless browser (Debian's chromium driven by Playwright).

The browser tests are skipped, with the reason printed, only where no
chromium can be found (``.ci/run`` installs it with apt-get when it can).
"""

import json
import re

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, Factor, Model, ModelSet, Term
from extrap_plugins.exporters.html_exporter import GROWTH_CATEGORIES, growth_category, report_data
from extrap_plugins.extrapolation import extrapolate

P = np.array([4.0, 8.0, 16.0, 32.0, 64.0])


def test_the_headers_say_at_which_point_and_of_what_a_value_or_share_is(browser, known_report):
    """They said "value now" and "share now": now was the largest measured point, the share that of the root."""
    page = Page(browser, known_report)
    headers = page.page.eval_on_selector_all("#table th", "nodes => nodes.map(n => n.textContent)")
    assert headers[6:11] == ["value at p=64", "value at p=4096", "95% interval", "share of root at p=64",
                             "share of root at p=4096"]
    assert page.console == []
    page.page.close()


class Page:
    """A page with every console message, page error and request recorded."""

    def __init__(self, browser, path):
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.console, self.requests = [], []
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.url = path.as_uri()
        self.page.goto(self.url)
        self.page.wait_for_function("window.__reportReady === true", timeout=30_000)

    def column(self, index):
        return self.page.eval_on_selector_all(
            "#rows tr[data-row]", f"rows => rows.map(r => r.children[{index}].textContent)")


def term(coefficient, exponent, log_exponent=0):
    return Term(coefficient, {"p": Factor(exponent, log_exponent)})


# Growth order (x, y, z, main) differs from the order by value at p = 4096 (y, z, x, main)
# and from the order now, at p = 64 (z, y, x, main).
KNOWN = [
    Model("main", "time", ("p",), 1.0),
    Model("main->x", "time", ("p",), 1.0, (term(1e-6, 2),)),
    Model("main->y", "time", ("p",), 10.0, (term(3.0, 1),)),
    Model("main->z", "time", ("p",), 500.0, (term(1.0, 0, 1),)),
]


@pytest.fixture(scope="module")
def known_report(tmp_path_factory):
    pytest.importorskip("matplotlib", reason="the report's figures need matplotlib (pip install -e '.[plot]')")
    X = np.repeat(P, 2)[:, None]
    experiment = Experiment.from_columns(
        ["p"], callpath=np.repeat([m.callpath for m in KNOWN], len(X)), metric="time",
        coordinates=np.tile(X, (len(KNOWN), 1)),
        value=np.concatenate([m.predict(X) * np.tile([0.99, 1.01], len(P)) for m in KNOWN]), reader="test")
    model_set = ModelSet(("p",), list(KNOWN), modeler="hand", experiment=experiment, source="known.jsonl")
    path = tmp_path_factory.mktemp("html") / "report.html"
    extrap_plugins.export(model_set, "html", path, target="p=4096", sort="growth", plot_top=3)
    return path


def test_report_data_ranks_and_names_growth(known_report):
    text = known_report.read_text()
    document = json.loads(re.search(r'<script id="report-data" type="application/json">(.*?)</script>', text, re.S)
                          .group(1))
    assert [row[0] for row in document["rows"]] == ["main->x", "main->y", "main->z", "main"]
    assert [row[3] for row in document["rows"]] == ["O(p^2)", "O(p)", "O(log p)", "O(1)"]
    assert sorted(document["plots"]) == ["0", "1", "2"]  # the first three of the ranking
    assert document["settings"]["target"] == {"p": 4096.0}
    assert dict(document["summary"])["repetitions"] == "2" and dict(document["summary"])["reader"] == "test"
    # The only addresses in the page are the SVG namespace names (identifiers, never fetched).
    assert set(re.findall(r"https?://[^\"\\]*", text)) == {"http://www.w3.org/1999/xlink", "http://www.w3.org/2000/svg"}


def test_growth_categories_colour_from_harmless_to_alarming():
    assert [GROWTH_CATEGORIES[growth_category(d)][0] for d in
            [(0, 0), (0, 1), (0.5, 2), (1, 0), (1, 1), (1.5, 0), (2, 0), (3, 1), (float("nan"),) * 2, (-1, 0),
             (0, -1)]] == [
        "constant", "logarithmic", "sublinear", "linear", "superlinear", "superlinear", "quadratic or worse",
        "quadratic or worse", "unknown", "falling", "falling"]  # falling: its own class (was "constant")


def test_opens_without_errors_or_network_and_sorts_by_value_at_target(browser, known_report):
    page = Page(browser, known_report)
    assert page.column(0) == ["main->x", "main->y", "main->z", "main"]  # the ranking: by growth
    page.page.click('th[data-key="target"]')
    assert page.column(0)[0] == "main->y"  # dominant at p = 4096
    assert page.column(0) == ["main->y", "main->z", "main->x", "main"]
    page.page.click('th[data-key="target"]')  # a second click reverses
    assert page.column(0) == ["main", "main->x", "main->z", "main->y"]
    page.page.click('th[data-key="now"]')
    assert page.column(0)[0] == "main->z"  # dominant now, at p = 64
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


def test_clicking_a_row_shows_its_plot(browser, known_report):
    page = Page(browser, known_report)
    page.page.click('#rows tr[data-row] >> text="main->y"')
    svg = page.page.wait_for_selector("#detail figure svg")
    assert "main->y [time]" in svg.text_content()
    assert page.page.eval_on_selector("#detail figure svg", "s => s.getBoundingClientRect().width") > 300
    assert "selected" in page.page.get_attribute('#rows tr[data-row="1"]', "class")
    page.page.click('#rows tr[data-row] >> text="main"')  # fourth in the ranking: no static plot
    assert page.page.query_selector("#detail figure svg:not(.sketch)") is None
    assert "No plot for this row" in page.page.text_content("#detail")
    assert "main [time]" in page.page.text_content("#detail figure svg.sketch")  # the model curve, drawn in the page
    assert page.page.get_attribute("#detail svg.sketch path", "d").count("L") == 120
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


def test_filter_and_call_tree(browser, known_report):
    page = Page(browser, known_report)
    page.page.fill("#filter", "y")
    assert page.column(0) == ["main->y"] and page.page.text_content("#count") == "1 of 4 rows"
    page.page.fill("#filter", "/^main->[xz]$/")
    assert sorted(page.column(0)) == ["main->x", "main->z"]
    badges = page.page.eval_on_selector_all(
        "#tree .node",
        "nodes => nodes.map(n => [n.dataset.path, getComputedStyle(n.querySelector('.badge')).backgroundColor])")
    assert dict(badges)["main->x"] == "rgb(183, 28, 28)"  # quadratic or worse
    assert dict(badges)["main->z"] == "rgb(124, 179, 66)"  # logarithmic
    page.page.click('#tree .node[data-path="main"] .toggle')  # collapse
    assert not page.page.is_visible('#tree .node[data-path="main->x"]')
    page.page.click('#tree .node[data-path="main"] .toggle')
    page.page.click('#tree .node[data-path="main->y"] .label')
    assert "main->y [time]" in page.page.text_content("#detail figure svg")
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


def test_ten_thousand_call_paths_render_lazily(browser, tmp_path):
    n = 10_000
    models = [Model(f"main->r{k:05d}", "time", ("p",), 1.0, (term(1.0 + k, 1),)) for k in range(n)]
    model_set = ModelSet(("p",), models, modeler="hand")
    path = tmp_path / "big.html"
    extrap_plugins.export(model_set, "html", path, target="p=1024", plot_top=0)
    page = Page(browser, path)
    assert page.page.text_content("#count") == f"{n} rows"
    assert len(page.column(0)) < 100
    assert page.column(0)[0] == f"main->r{n - 1:05d}"  # ranked by value at the target
    page.page.eval_on_selector("#scroller", "s => { s.scrollTop = s.scrollHeight; }")
    page.page.wait_for_selector('#rows tr[data-row] >> text="main->r00000"')
    assert len(page.column(0)) < 100
    page.page.click('#rows tr[data-row] >> text="main->r00000"')
    assert "main->r00000 [time]" in page.page.text_content("#detail figure svg.sketch")
    assert page.console == [] and page.requests == [page.url]
    page.page.close()


def test_without_measurements_the_report_still_opens(host, tmp_path):
    model_set = ModelSet(("p",), list(KNOWN), modeler="hand")
    document = report_data(extrapolate(model_set, "p=4096"), {})
    assert document["plots"] == {} and document["settings"]["largest"] is None
    text = extrap_plugins.export(model_set, "html")
    assert text.startswith("<!DOCTYPE html>") and "<script id=\"report-data\"" in text


def test_a_streamed_report_lists_the_metrics_with_their_units(host):
    # the summary named the metrics only from the measurements: a streamed set's were left out
    from extrap_plugins.experiment import Metric

    streamed = ModelSet(("p",), list(KNOWN), modeler="hand", metrics=(Metric("time", "sec"),),
                        measured_points=P[:, None])
    summary = dict(report_data(extrapolate(streamed), {})["summary"])
    assert summary["metrics"] == "time [sec]"
    assert "metrics" not in dict(report_data(extrapolate(ModelSet(("p",), list(KNOWN))), {})["summary"])


def test_the_interval_is_labelled_with_the_level_given(browser, tmp_path):
    # level=0.975 was "98% interval" in the table's header, the detail and the summary
    path = tmp_path / "level.html"
    extrap_plugins.export(ModelSet(("p",), list(KNOWN), modeler="hand"), "html", path, target="p=4096",
                          level="0.975", plot_top=0)
    page = Page(browser, path)
    assert page.page.text_content('th[data-key="interval"]') == "97.5% interval"
    page.page.click('#rows tr[data-row] >> text="main->y"')
    assert "97.5% interval" in page.page.text_content("#detail dl")
    assert "97.5% prediction intervals" in page.page.text_content("#summary-list")
    assert page.console == []
    page.page.close()
