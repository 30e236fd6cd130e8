"""What every built-in exporter shares: the common options and their reading.

``COMMON_OPTIONS`` (``target``, ``sort``, ``values``, ``level``) are taken by
every exporter (the host refuses any other name an exporter does not list
in ``ExporterInfo.options``: :func:`check_option_names`); :func:`from_options` reads them into
:class:`~extrap_plugins.extrapolation.Extrapolations` and returns the
exporter's own options; :func:`option_int` reads a whole-number option.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from extrap_plugins.errors import InputError
from extrap_plugins.extrapolation import LEVEL, Extrapolations, extrapolate
from extrap_plugins.models import ModelSet
from extrap_plugins.options import parse_int

COMMON_OPTIONS = {
    "target": "the point to extrapolate to, e.g. p=65536,n=1e6",
    "sort": "order of the rows: growth, target or share (default: the model order)",
    "values": "whether values include the children's: auto (default), inclusive or exclusive",
    "level": "confidence level of the prediction intervals: 95% or 0.95 (the default)",
}
"""Options every built-in exporter takes; :func:`from_options` reads them."""


def from_options(model_set: ModelSet, options: dict[str, str], exporter: str,
                 own: Mapping[str, str] | None = None,
                 intervals: bool | None = None) -> tuple[Extrapolations, dict[str, str]]:
    """Read the common options (:data:`COMMON_OPTIONS`) an exporter received.

    Returns the extrapolations and the remaining (exporter's own) options;
    options that are neither common nor in ``own`` are an error naming the
    exporter.  ``intervals`` goes to :func:`extrapolate` (plots want them
    even without a target).
    """
    own = dict(own or {})
    check_option_names(options, exporter, own)
    result = extrapolate(model_set, options.get("target") or None, sort=options.get("sort") or None,
                         level=options.get("level", LEVEL), values=options.get("values") or "auto",
                         intervals=intervals)
    rest = {k: v for k, v in options.items() if k in own}
    return result, rest


def check_option_names(options: Iterable[str], exporter: str, own: Iterable[str] = ()) -> None:
    """Every name in ``options`` is one of :data:`COMMON_OPTIONS` or of the exporter's ``own``.

    The host checks this for every exporter before it runs (:func:`extrap_plugins.api.check_export_options`),
    and the built-in exporters again when they read their options (:func:`from_options`).

    Raises
    ------
    InputError
        Naming the exporter and the unknown names, and listing the known ones.
    """
    own = list(own)
    unknown = sorted(k for k in options if k not in COMMON_OPTIONS and k not in own)
    if unknown:
        theirs = (f"its options are: {', '.join(sorted(own))}, and those of every exporter" if own
                  else "its options are those of every exporter")
        raise InputError(f"exporter {exporter!r} has no option {', '.join(map(repr, unknown))}; "
                         f"{theirs}: {', '.join(COMMON_OPTIONS)}")


def option_int(options: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    """An integer option (``plot_top=50``), checked."""
    text = options.get(name)
    if text is None:
        return default
    try:
        return parse_int(text, name, minimum)
    except ValueError as error:
        raise InputError(str(error)) from None


def describe(extrapolations: Extrapolations) -> dict[str, Any]:
    """The settings behind a set of extrapolations, as plain values (for reports)."""
    return {
        "target": extrapolations.target,
        "largest": extrapolations.largest,
        "level": extrapolations.level,
        "sort": extrapolations.sort,
        "values": dict(extrapolations.values),
    }
