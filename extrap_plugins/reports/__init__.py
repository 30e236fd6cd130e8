"""Renderers of analyses built on the models: efficiency (:mod:`.efficiency_report`) and comparison
(:mod:`.compare_report`), each as text, CSV, JSON and a self-contained HTML page.

These are not exporter plugins: an exporter writes a :class:`~extrap_plugins.models.ModelSet`, these write
the result of :func:`extrap_plugins.efficiency` or :func:`extrap_plugins.compare`.  :func:`render` picks the
renderer by the result's type; :func:`export_report` writes it to a file atomically; :func:`notebook_html` is the
same HTML report as one element for a notebook (the results' ``_repr_html_``).

=====================  ===========================================================
module                 renders
=====================  ===========================================================
``efficiency_report``  :class:`~extrap_plugins.efficiency_analysis.Efficiency`
``compare_report``     :class:`~extrap_plugins.comparison.Comparison`
``svg``                static line charts for the HTML pages
=====================  ===========================================================
"""

from __future__ import annotations

import html
import json
import math
import os
import pathlib
import re
from typing import Any, Iterable

from extrap_plugins.errors import InputError
from extrap_plugins.files import atomic_writer

FORMATS = ("text", "csv", "json", "html")


def render(result: Any, format: str = "text", **options: Any) -> str:
    """The report of ``result`` in ``format`` (``text``, ``csv``, ``json`` or ``html``)."""
    if format not in FORMATS:
        raise InputError(f"unknown report format {format!r}; expected one of {', '.join(FORMATS)}")
    module = _renderer(result)
    known = {"title", "plot_top"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"unknown report option {', '.join(unknown)}; the options are {', '.join(sorted(known))}")
    if format == "html":
        return page(*module.html_parts(result, **options))
    if options:
        raise InputError(f"option {', '.join(sorted(options))} applies to the html report only")
    return {"text": module.text, "csv": module.csv_text, "json": module.json_text}[format](result)


def _renderer(result: Any):
    """The module that renders ``result``: :mod:`.efficiency_report` or :mod:`.compare_report`."""
    from extrap_plugins.comparison import Comparison
    from extrap_plugins.efficiency_analysis import Efficiency

    if isinstance(result, Efficiency):
        from . import efficiency_report as module
    elif isinstance(result, Comparison):
        from . import compare_report as module
    else:
        hint = "; models are written with extrap_plugins.export" if type(result).__name__ == "ModelSet" else ""
        raise InputError(f"a report is of an Efficiency (extrap_plugins.efficiency) or a Comparison "
                         f"(extrap_plugins.compare), got a {type(result).__name__}{hint}")
    return module


def notebook_html(result: Any) -> str:
    """What a notebook shows of an Efficiency or a Comparison (their ``_repr_html_``): the HTML report's header and
    body (:func:`render`'s ``html``, the same sections, tables and charts) as one ``<div>`` with the report's style
    scoped to it, so that it leaves the notebook's own style alone."""
    return fragment(*_renderer(result).html_parts(result))


def json_lines(document: dict[str, Any], listed: Iterable[str]) -> str:
    """The document with one top-level key per line and one item per line of the ``listed`` keys."""
    listed = set(listed)
    parts = []
    for key, value in document.items():
        if key in listed and value:
            items = ",\n  ".join(json.dumps(item, allow_nan=False, ensure_ascii=False) for item in value)
            parts.append(f" {json.dumps(key)}: [\n  {items}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value, allow_nan=False, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def people(value: float | None, digits: int = 4) -> str:
    """A number for people: 4 significant digits, ``n/a`` for None or NaN."""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def percent(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{0.0 if abs(value) < 5e-4 else value:.1%}"


def cell(value: float | None) -> str:
    """A CSV cell: the exact float, empty where unknown."""
    return "" if value is None or not math.isfinite(value) else repr(float(value))


STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { background: #1f3b5a; color: #fff; padding: 12px 24px; }
header h1 { margin: 0; font-size: 20px; }
header p { margin: 4px 0 0; opacity: .8; }
main { padding: 12px 24px; max-width: 1200px; }
section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 12px 16px; margin: 12px 0; }
h2 { font-size: 17px; margin: 4px 0 10px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; margin: 0; }
dt { font-weight: 600; } dd { margin: 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bar { display: inline-block; height: 10px; background: #d1495b; vertical-align: middle; margin-right: 6px; }
.differs { color: #b71c1c; font-weight: 600; }
.conclusion { font-size: 15px; }
figure { margin: 8px 0 16px; } figcaption { font-size: 13px; color: #444; max-width: 720px; }
svg.chart { max-width: 100%; height: auto; background: #fff; }
"""


FRAGMENT = "extrap-plugins-report"
"""The class of the ``<div>`` that holds a report in a notebook (:func:`fragment`), and the scope of its style."""


def scoped_style(style: str = STYLE, scope: str = f".{FRAGMENT}") -> str:
    """``style`` with every selector inside ``scope``: ``body`` becomes the scope itself, ``th, td`` becomes
    ``.scope th, .scope td``."""
    def scoped(match: re.Match[str]) -> str:
        selectors = [part.strip() for part in match.group(1).split(",")]
        inside = ", ".join(scope if name == "body" else f"{scope} {name}" for name in selectors)
        return f"{inside} {{{match.group(2)}}}"

    return "\n".join(scoped(match) for match in re.finditer(r"([^{}]+?)\s*\{([^}]*)\}", style))


def _content(title: str, subtitle: str, body: str) -> str:
    return f"""<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p></header>
<main>
{body}
</main>"""


def fragment(title: str, subtitle: str, body: str) -> str:
    """The content of :func:`page` as one ``<div>`` for a notebook, its style scoped to the ``<div>``."""
    return f'<div class="{FRAGMENT}">\n<style>{scoped_style()}</style>\n{_content(title, subtitle, body)}\n</div>\n'


def page(title: str, subtitle: str, body: str) -> str:
    """A whole self-contained page: no script, inline style, a policy that forbids every request."""
    title_text = html.escape(title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,">
<title>{title_text}</title>
<style>{STYLE}</style>
</head>
<body>
{_content(title, subtitle, body)}
</body>
</html>
"""


def definition_list(items: Iterable[tuple[str, str]], element_id: str) -> str:
    rows = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in items)
    return f'<dl id="{element_id}">{rows}</dl>'


def table(headers: list[str], rows: list[list[str]], element_id: str, numeric: Iterable[int] = (),
          raw: Iterable[int] = ()) -> str:
    """An HTML table; cells are escaped except the columns in ``raw`` (already HTML)."""
    numeric, raw = set(numeric), set(raw)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for k, value in enumerate(row):
            text = value if k in raw else html.escape(value)
            cells.append(f'<td class="num">{text}</td>' if k in numeric else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table id="{element_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def export_report(result: Any, format: str = "text", path: str | os.PathLike | None = None,
                  **options: Any) -> str | None:
    """Write an efficiency analysis or a comparison as ``text``, ``csv``, ``json`` or ``html``.

    Returns the text when ``path`` is None, else writes ``path`` atomically.
    ``options``: ``title`` (HTML), ``plot_top`` (HTML of a comparison: call paths with a figure, default 50).
    """
    text = render(result, format, **options)
    if path is None:
        return text
    target = pathlib.Path(path)
    if target.is_dir():
        raise InputError(f"is a folder; the {format} report is one file", target)
    directory = target.parent if str(target.parent) else pathlib.Path(".")
    if not directory.is_dir():
        raise InputError("the folder for the output does not exist", target)
    with atomic_writer(target) as stream:
        stream.write(text)
    return None
