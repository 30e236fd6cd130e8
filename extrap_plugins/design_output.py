"""What ``extrap-plugins suggest`` prints: a :class:`~extrap_plugins.design.Suggestion` as text.

``str(suggestion)`` and a notebook's display of one use it too, so the command line and the Python API say
the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .formatting import (callpath_labels, format_callpath, format_callpaths, format_count, format_point, format_share,
                         format_value, text_table)
from .selector import COPY_OF, NARROWS, NOT_JUDGED, SERVES_SAID

if TYPE_CHECKING:
    from .design import Suggestion

NAMES_WIDTH = 160
"""Kernels judged through another are named up to three while their names fit this width, else the first alone."""

WHY_WIDTH = 60
"""The plan table's ``why`` names the kernels a run serves one a line, shortened to this width (a run's ``why`` in
the exported plan keeps them on one line, its ``serves`` whole)."""


def format_suggestion(result: Suggestion) -> str:
    """The suggestion as text: what the space is, the runs as a table, and what to do after (what ``suggest``
    prints, and ``str(suggestion)``)."""
    names = result.plan.parameters
    sizes = " × ".join(names)
    if result.space is not None:
        sizes = " × ".join(f"{n} ({format_count(v.size, 'value')})" for n, v in zip(names, result.space.values))
    lines = [
        f"design space: {sizes} = {format_count(result.full_points, 'point')}; cost of a run: "
        f"{result.cost_model.describe()} (full factorial, every point "
        f"{format_count(result.reference_repetitions, 'time')}: {result.full_cost:g})",
        f"measured so far: {format_count(result.measured_points, 'point')}, "
        f"{result.measured_share:.1%} of the full factorial's cost",
    ]
    if result.plan.runs:  # (without runs to plan, the advised repetitions would speak of none)
        reason = result.repetitions_reason if result.repetitions_reason != "given" else result.repetitions
        lines.append(f"repetitions per run: {reason}")
    heading = {
        "base": ("next: the base design (a line of values per parameter through a common corner, and one point "
                 "off the lines)" if len(_varied(result)) > 1 else "next: the base design (a line of values)"),
        "add": ("next: the runs that narrow the intervals at the target most per unit of cost; measure them "
                "(the first at least), then run suggest again with all measurements"
                if result.strategy == "uncertainty" else
                "next: the cheapest point not measured yet; measure it, then run suggest again with all "
                "measurements"),
        "done": "no further runs needed",
        "budget": "no further runs: the budget left buys none the selector would plan",
        "exhausted": "no further runs: every candidate point is measured",
    }[result.status]
    if result.status == "add" and result.holdout is not None:
        point = format_point(result.holdout["point"], names, brackets=True)
        heading += (f" (the model without {point} predicts it only within {result.holdout['worst']:.1%})")
    lines.append(heading)
    lines.extend(format_widths(result))
    if result.plan.runs:
        rows, spent = [], result.measured_cost
        labels = callpath_labels([name for run in result.plan.runs for name, _, _ in run.serves[:SERVES_SAID]],
                                 WHY_WIDTH)
        for k, run in enumerate(result.plan.runs, 1):
            spent += run.cost * run.repetitions
            rows.append([k, *(format_value(run.point[n]) for n in names), run.repetitions, f"{run.cost:g}",
                         f"{spent / result.full_cost if result.full_cost else 0:.1%}", _why(run, labels)])
        table = text_table(["#", *names, "repetitions", "cost of a run", "share so far", "why"], rows,
                           lines_in_cells=True)
        lines.extend(["", table, ""])
        points = len({tuple(run.point[n] for n in names) for run in result.plan.runs})
        runs = sum(run.repetitions for run in result.plan.runs)
        planned = format_count(runs, "run") if runs == points else \
            f"{format_count(points, 'point')}, {format_count(runs, 'run')} with the repetitions"
        lines.append(f"planned: {planned}; with the measured ones {result.share:.1%} of the full factorial's cost")
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines) + "\n"


def _varied(result: Suggestion) -> tuple[str, ...]:
    """The parameters the suggestion's design varies (those of more than one candidate value)."""
    return result.space.varied if result.space is not None else tuple(result.plan.parameters)


def _why(run, labels: dict[str, str]) -> str:
    """A run's reason in the plan table: the kernels it serves one a line (``labels``: their names as shown)."""
    if not run.serves or NARROWS not in run.role:
        return run.role
    head = run.role[: run.role.index(NARROWS) + len(NARROWS)]
    lines = [f"{labels[name]} ±{format_share(before)}→±{format_share(after)}"
             for name, before, after in run.serves[:SERVES_SAID]]
    if len(run.serves) > SERVES_SAID:
        lines.append(f"+{len(run.serves) - SERVES_SAID} more")
    return head + ("\n" + " " * len(head)).join(lines)


def format_widths(result: Suggestion) -> list[str]:
    """The judged kernels' intervals at the target, before and (as expected) after the plan."""
    if not result.widths:
        return []
    where = format_point(result.target, brackets=True)
    lines = [f"interval at the target {where} (95 %, relative half-width):"]
    ranked = sorted(result.widths.items(), key=lambda kv: -kv[1])
    for (name, width), shown in zip(ranked[:10], format_callpaths([name for name, _ in ranked[:10]])):
        after = ""
        if result.predicted and result.plan.runs:
            after = f" -> ±{format_share(result.predicted[name])} expected after the plan"
        lines.append(f"  {shown}: ±{format_share(width)}{after}")
    if len(ranked) > 10:
        lines.append(f"  ... {len(ranked) - 10} more kernels")
    copies = [name for name, why in (result.not_judged or {}).items() if why.startswith(COPY_OF)]
    small = len(result.not_judged or {}) - len(copies)
    if small:
        lines.append(f"  not judged: {format_count(small, 'kernel')} ({NOT_JUDGED})")
    if copies:
        copies = [format_callpath(name) for name in copies]
        named = copies[:3] if sum(len(name) for name in copies[:3]) <= NAMES_WIDTH else copies[:1]
        shown = ", ".join(named) + (f" and {len(copies) - len(named)} more" if len(copies) > len(named) else "")
        lines.append(f"  judged through another: {format_count(len(copies), 'kernel')} with {COPY_OF} a judged "
                     f"one ({shown})")
    return lines
