"""The HTML report says what the other exporters say, and its own drawings put things where they are."""

import json
import re

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, Factor, Model, ModelSet, Term
from extrap_plugins.exporters import html_exporter
from extrap_plugins.exporters.html_exporter import report_data
from extrap_plugins.extrapolation import extrapolate

from browser_helpers import StaticPage

P = np.array([4.0, 8.0, 16.0, 32.0, 64.0])


def _linear(callpath, metric, constant, slope):
    return Model(callpath, metric, ("p",), constant, (Term(slope, {"p": Factor(1, 0)}),))


def _model_set(models, experiment=None):
    return ModelSet(("p",), models, modeler="hand", experiment=experiment, source="hand.jsonl")


def _document(path):
    text = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script id="report-data" type="application/json">(.*?)</script>', text, re.S)
                      .group(1))


def test_a_call_path_that_outgrows_its_parent_at_the_target_is_flagged_in_its_row():
    """The text export flagged ``main->setup`` of the stencil example at 949 % of ``main`` as an inconsistent
    extrapolation; the report showed the 949 % with no word."""
    models = [Model("main", "time", ("p",), 10.0), _linear("main->setup", "time", 1.0, 0.1)]
    ranked = extrapolate(_model_set(models), "p=1000")
    rows = {row[0]: row for row in report_data(ranked, {})["rows"]}
    warnings = report_data(ranked, {})["columns"].index("warnings")
    assert rows["main->setup"][warnings] == (
        "outgrows its parent at p=1000 (1010.0% of its value): at least one of the two models is wrong there")
    assert rows["main"][warnings] == ""


def test_a_minimum_above_its_maximum_at_the_target_is_flagged_in_both_rows():
    models = [_linear("main", "Min time/rank", 1.0, 0.2), _linear("main", "Max time/rank", 2.0, 0.1)]
    ranked = extrapolate(_model_set(models), "p=100")
    document = report_data(ranked, {})
    warnings = document["columns"].index("warnings")
    said = {document["metrics"][row[1]]: row[warnings] for row in document["rows"]}
    assert said == {
        "Min time/rank": "above Max time/rank at p=100, each modelled apart: at least one of the two models is "
                         "wrong there",
        "Max time/rank": "below Min time/rank at p=100, each modelled apart: at least one of the two models is "
                         "wrong there",
    }


def test_without_matplotlib_the_report_says_why_it_has_no_plots(monkeypatch):
    """The page told the user to raise --plot-top, which changed nothing: matplotlib was missing."""
    monkeypatch.setattr(html_exporter, "_have_matplotlib", lambda: False)
    X = np.repeat(P, 2)[:, None]
    model = _linear("main", "time", 1.0, 2.0)
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=X,
                                         value=model.predict(X) * np.tile([0.99, 1.01], len(P)), reader="test")
    ranked = extrapolate(_model_set([model], experiment), "p=4096")
    document = report_data(ranked, html_exporter._plots(ranked, 50, "lines"))
    assert document["plots"] == {}
    assert document["plot_note"] == ("matplotlib is not installed, so the report has no static plots "
                                     "(pip install 'extrap-plugins[plot]'); the page draws the model curves itself")
    assert ["plots", document["plot_note"]] in document["summary"]


def test_the_page_marks_a_target_below_the_measured_range_where_it_is(browser, tmp_path):
    """The page's own curve ran over the measured range only and put the value at p=2 at p=64."""
    X = np.repeat(P, 2)[:, None]
    model = _linear("main", "time", 1.0, 2.0)
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=X,
                                         value=model.predict(X) * np.tile([0.99, 1.01], len(P)), reader="test")
    path = tmp_path / "report.html"
    extrap_plugins.export(_model_set([model], experiment), "html", path, target="p=2", plot_top=0)
    page = StaticPage(browser, path)
    page.page.wait_for_function("window.__reportReady === true")
    page.page.click("#rows tr[data-row]")
    sketch = page.page.eval_on_selector("#detail svg.sketch", """svg => {
        const c = svg.querySelector('circle'), d = svg.querySelector('path').getAttribute('d');
        const start = d.slice(1).split('L')[0].split(',').map(Number);
        const end = d.split('L').pop().split(',').map(Number);
        return {circle: [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))], start: start, end: end};
    }""")
    # the curve starts at the target, p = 2, where the model is 5: the mark sits on the curve's first point
    assert sketch["circle"] == pytest.approx(sketch["start"], abs=0.1)
    assert sketch["end"][0] > sketch["start"][0]
    assert page.console == []
    page.page.close()


def test_a_very_long_call_path_does_not_widen_the_page(browser, tmp_path):
    """A 450-character region name in the call tree made the whole page scroll sideways, three screens wide."""
    name = "main->" + "very_long_name_" * 30
    models = [Model("main", "time", ("p",), 10.0), Model(name, "time", ("p",), 1.0)]
    path = tmp_path / "report.html"
    extrap_plugins.export(_model_set(models), "html", path)
    page = StaticPage(browser, path)
    page.page.wait_for_function("window.__reportReady === true")
    widths = page.page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1]
    assert page.page.inner_text("#tree").count("very_long_name_") == 30
    page.page.close()


def test_an_unknown_plot_style_is_an_error_with_or_without_matplotlib(monkeypatch, tmp_path):
    """Without matplotlib, plot_style=bogus gave a report and exit 0."""
    monkeypatch.setattr(html_exporter, "_have_matplotlib", lambda: False)
    models = _model_set([Model("main", "time", ("p",), 10.0)])
    with pytest.raises(extrap_plugins.InputError) as error:
        extrap_plugins.export(models, "html", tmp_path / "report.html", plot_style="bogus")
    assert str(error.value) == "unknown plot style 'bogus'; expected one of lines, heatmap"
    assert not (tmp_path / "report.html").exists()


def test_the_curve_of_a_streamed_model_spans_its_measured_points():
    """Streamed models keep their measured points but no measurements: the page drew their curves from p=1."""
    model_set = ModelSet(("p", "n"), [Model("main", "time", ("p", "n"), 10.0)], modeler="hand",
                         measured_points=np.array([[27.0, 10.0], [64.0, 20.0], [343.0, 10.0]]))
    assert report_data(extrapolate(model_set, "p=4096,n=10"), {})["ranges"] == {"p": [27.0, 343.0],
                                                                                "n": [10.0, 20.0]}


def test_the_page_never_draws_a_model_of_non_negative_values_below_0(browser, tmp_path):
    """The table cut the value at 0, the page's own curve went on to -70 at p = 64 (terms of opposite sign)."""
    falling = Model("main", "time", ("p",), 10.0, (Term(-1.25, {"p": Factor(1, 0)}),), non_negative=True)
    path = tmp_path / "report.html"
    extrap_plugins.export(_model_set([falling]), "html", path, target="p=64", plot_top=0)
    assert _document(path)["rows"][0][18][2] == 0.0
    page = StaticPage(browser, path)
    page.page.wait_for_function("window.__reportReady === true")
    page.page.click("#rows tr[data-row]")
    ys = page.page.eval_on_selector("#detail svg.sketch", """svg => svg.querySelector('path').getAttribute('d')
        .slice(1).split('L').map(p => Number(p.split(',')[1]))""")
    assert max(ys) - min(ys) > 100  # the curve falls across the plot ...
    assert len([y for y in ys if y == max(ys)]) > 10  # ... to 0, where it stays (the lowest y on the screen)
    assert page.console == []
    page.page.close()
