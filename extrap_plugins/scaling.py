"""What efficiency and comparison share: the scaling parameter, totals, PMNF arithmetic, roots of model curves.

========================  =============================================================
:func:`processes_name`    which parameter counts the processes (``--processes`` or a guess)
:func:`total_models`      the models whose sum is the whole program's value of a metric
:func:`sum_predict`       the sum of several models at many points
:func:`pmnf_part`         constant and terms of a plain PMNF model (None otherwise)
:func:`combine`           a PMNF model from ``Σ weight·(terms, with factors changed)``
:func:`crossings`         every x in [lo, hi] where ``f(x) = 0``, found on a log grid, refined by Brent
========================  =============================================================

Everything here is a small function over models and arrays; :mod:`extrap_plugins.efficiency_analysis`
and :mod:`extrap_plugins.comparison` build on it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .api import names_argument, paths_argument, read
from .errors import InputError
from .experiment import CALLPATH_SEPARATOR, RESOURCE_NAMES, Experiment, matching
from .formatting import described
from .models import Factor, Model, ModelSet, Term
from .options import parse_share


GRID = 1024
"""Points of the log grid on which sign changes are looked for before Brent's method refines them."""
DATA = "a path (str or os.PathLike), a list of paths, an Experiment or a ModelSet"
"""What ``efficiency`` and ``compare`` analyse, for messages."""


# Messages of efficiency and compare reach users of the Python API and of the command line (which calls the
# same functions), so they name an argument by both: ``size (--size)``.
def argument(name: str, value: Any = None, flag: str | None = None) -> str:
    """An argument of both the API and the CLI as a message names it: ``size 'zz' (--size)``, ``total (--total)``.

    ``flag`` is the option's name when it is not ``name`` (``metrics``: ``metric``).

    >>> argument("size", "zz"), argument("total"), argument("metrics", flag="metric")
    ("size 'zz' (--size)", 'total (--total)', 'metrics (--metric)')
    """
    given = "" if value is None else f" {value!r}"
    return f"{name}{given} (--{(flag or name).replace('_', '-')})"


def share_argument(value: Any, name: str, example: str) -> float:
    """A level strictly between 0 and 1, given as a number (``0.8``) or, as on the command line, a percentage
    (``"80%"``)."""
    try:
        return parse_share(value, argument(name), example)
    except ValueError as error:
        raise InputError(str(error)) from None


def resource_parameter(parameters: Sequence[str], given: str | None, name: str) -> str | None:
    """``given`` (checked against ``parameters``, an error naming the argument ``name``), else the first
    parameter named like a resource count (:data:`RESOURCE_NAMES`), else None."""
    if given is not None and not isinstance(given, str):
        raise InputError(f"{argument(name)}: expected a parameter name (one of {', '.join(parameters)}), got "
                         f"{described(given)}")
    if given:
        if given not in parameters:
            raise InputError(f"{argument(name, given)}: no such parameter; the parameters are "
                             f"{', '.join(parameters)}")
        return given
    return next((name for name in parameters if name.lower() in RESOURCE_NAMES), None)


def processes_name(parameters: Sequence[str], given: str | None) -> str:
    """The parameter that counts processes: ``given`` (checked), else the one named like a resource count.

    >>> processes_name(["Ranks", "n"], None)
    'Ranks'
    """
    parameters = list(parameters)
    found = resource_parameter(parameters, given, "processes")
    if found is not None:
        return found
    if len(parameters) == 1:
        return parameters[0]
    raise InputError(f"which parameter counts the processes? give processes=NAME (--processes NAME), one of "
                     f"{', '.join(parameters)}")


def total_models(models: Sequence[Model], kind: str) -> list[Model]:
    """The models whose sum is the program's total.

    ``kind`` is ``"inclusive"`` (a call path's value holds its children's: the
    total is the sum of the call paths without a modelled ancestor) or
    ``"exclusive"`` (every call path counts once: the sum of all).
    """
    if kind == "exclusive":
        return list(models)
    names = {m.callpath for m in models}
    return [m for m in models if not any(a in names for a in ancestors(m.callpath))]


def ancestors(callpath: str) -> list[str]:
    """``a->b->c`` -> ``["a->b", "a"]``: the call paths above, nearest first."""
    regions = callpath.split(CALLPATH_SEPARATOR)
    return [CALLPATH_SEPARATOR.join(regions[:k]) for k in range(len(regions) - 1, 0, -1)]


def sum_predict(models: Iterable[Model], X: np.ndarray) -> np.ndarray:
    """Sum of the models at points ``X``, shape (n, n_params) -> (n,)."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    total = np.zeros(X.shape[0])
    for model in models:
        total = total + np.asarray(model.predict(X), dtype=np.float64).reshape(-1)
    return total


def pmnf_part(model: Model) -> tuple[float, tuple[Term, ...]] | None:
    """Constant and terms of a plain (unsegmented) PMNF model; None for any other model."""
    if model.predictor is not None or model.function_text is not None or model.segments:
        return None
    return float(model.constant), tuple(model.terms)


def with_factor(term: Term, name: str, exponent: float, log_exponent: float = 0.0) -> Term:
    """``term · name^exponent · log2(name)^log_exponent`` (exponents added to the term's own)."""
    factors = dict(term.factors)
    old = factors.get(name, Factor())
    new = Factor(float(old.exponent) + exponent, float(old.log_exponent) + log_exponent)
    if new.exponent == 0 and new.log_exponent == 0:
        factors.pop(name, None)
    else:
        factors[name] = new
    return Term(term.coefficient, factors)


def at_value(term: Term, name: str, value: float) -> Term:
    """The term with parameter ``name`` fixed at ``value`` (its factor folded into the coefficient)."""
    factor = term.factors.get(name)
    if factor is None:
        return term
    scale = float(factor.evaluate(np.array([value]))[0])
    return Term(term.coefficient * scale, {k: f for k, f in term.factors.items() if k != name})


def combine(callpath: str, metric: str, parameters: Sequence[str], constant: float, terms: Iterable[Term],
            tolerance: float = 1e-9) -> Model:
    """A PMNF model of ``constant + Σ terms`` with terms of equal factors merged and cancelled ones dropped.

    A merged coefficient smaller than ``tolerance`` times the largest coefficient
    that went into it counts as zero (``c·n − c·n`` computed in floating point).
    """
    merged: dict[tuple, list[float]] = {}
    for term in terms:
        key = tuple(sorted((k, float(f.exponent), float(f.log_exponent)) for k, f in term.factors.items()))
        slot = merged.setdefault(key, [0.0, 0.0])
        slot[0] += term.coefficient
        slot[1] = max(slot[1], abs(term.coefficient))
    kept = []
    for key, (coefficient, largest) in merged.items():
        if abs(coefficient) <= tolerance * largest:
            continue
        if not key:
            constant += coefficient
            continue
        kept.append(Term(coefficient, {k: Factor(e, j) for k, e, j in key}))
    return Model(callpath, metric, tuple(parameters), constant, tuple(kept))


def crossings(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float,
              grid: int = GRID) -> list[tuple[float, int]]:
    """Every root of ``f`` on [lo, hi] with the sign ``f`` takes after it (+1 or -1).

    ``f`` maps an array of x to an array of values; sign changes are looked for
    on a grid even in log x and refined with Brent's method to about 1e-12
    relatively.  Roots closer than a grid step to each other are found as one
    (or none, if the sign comes back).

    >>> [round(x, 9) for x, _ in crossings(lambda x: x - 80.0, 4, 1024)]
    [80.0]
    """
    from scipy.optimize import brentq

    if not (hi > lo > 0):
        return []
    t = np.linspace(math.log(lo), math.log(hi), grid)
    with np.errstate(all="ignore"):
        values = np.asarray(f(np.exp(t)), dtype=np.float64)
    sign = np.sign(values)
    found = []
    i = 0
    while i < grid - 1:
        a, b = sign[i], sign[i + 1]
        if not (np.isfinite(values[i]) and np.isfinite(values[i + 1])) or a == b:
            i += 1
            continue
        if a == 0:  # an exact root on the grid: take it when the sign really changes across it
            j = i + 1
            if i > 0 and sign[i - 1] != 0 and sign[j] != 0 and sign[i - 1] != sign[j]:
                found.append((float(np.exp(t[i])), int(sign[j])))
            i += 1
            continue
        if b == 0:
            i += 1
            continue
        root = brentq(lambda u: float(f(np.array([math.exp(u)]))[0]), t[i], t[i + 1], xtol=1e-14, rtol=1e-13)
        found.append((math.exp(root), int(b)))
        i += 1
    return found


def point_text(point: Mapping[str, float]) -> str:
    from .formatting import format_point

    return format_point({k: float(f"{v:.6g}") for k, v in point.items()})


def experiment_of(data, reader, reader_options, metrics, callpaths, host, where: str = "read") -> Experiment:
    """``data`` as an Experiment: read (serially) unless it is one, then the selected metrics and call paths.

    ``where`` (``"compare: a"``) begins the message when ``data`` is none of :data:`DATA`.
    """
    metrics, callpaths = names_argument(metrics, "metrics"), names_argument(callpaths, "callpaths")
    if isinstance(data, Experiment):
        selected = data.select(metrics=metrics, callpaths=callpaths) if metrics or callpaths else data
        return selected
    if reader_options is not None and not isinstance(reader_options, Mapping):
        raise InputError(f"reader_options: expected a mapping such as {{'value': 'median'}}, got "
                         f"{described(reader_options)}")
    return read(paths_argument(data, where, DATA), reader, metrics=metrics, callpaths=callpaths, executor="serial",
                host=host, **dict(reader_options or {}))


def selected_models(data: ModelSet, where: str, metrics: Sequence[str] = (), callpaths: Sequence[str] = ()) -> ModelSet:
    """A ModelSet to analyse as it is, with its measurements: only the models of ``metrics`` and of the call paths
    matching the globs ``callpaths`` (as :meth:`Experiment.select` keeps them; empty: all)."""
    if data.experiment is None or len(data.experiment) == 0:
        raise InputError(f"{where}: the ModelSet holds no measurements (ModelSet.experiment; streamed models have "
                         f"none): give the measurements, a path or an Experiment, instead")
    if not metrics and not callpaths:
        return data
    experiment = data.experiment.select(metrics=metrics, callpaths=callpaths)  # the errors name what there is
    kept = set(matching(callpaths, [m.callpath for m in data.models])) if callpaths else None
    models = [m for m in data.models if (not metrics or m.metric in metrics) and (kept is None or m.callpath in kept)]
    return dataclasses.replace(data, models=models, experiment=experiment)


def refuse_reading_options(where: str, **given: Any) -> None:
    """Arguments that say how to read (``reader``, ``reader_options``) given where nothing is read."""
    named = [name for name, value in given.items() if value]
    if named:
        raise InputError(f"{where}: {' and '.join(named)} say{'s' if len(named) == 1 else ''} how to read "
                         f"measurements, but nothing is read (ModelSets and Experiments are given): leave "
                         f"{'it' if len(named) == 1 else 'them'} out")


def report_text(result: Any) -> str:
    """``str()`` of an :class:`~extrap_plugins.efficiency_analysis.Efficiency` or a
    :class:`~extrap_plugins.comparison.Comparison`: its text report, as the command prints it.

    :mod:`extrap_plugins.reports` renders these results and imports their modules, so it is looked up by name
    when a result is printed, as :func:`extrap_plugins.models._notebook` is for models.
    """
    import importlib

    return importlib.import_module("extrap_plugins.reports").render(result, "text")
