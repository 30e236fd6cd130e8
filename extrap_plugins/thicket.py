"""Thicket in and out: a drop-in for ``thicket.model_extrap.Modeling``, and :func:`from_thicket`.

A Thicket user switches from Extra-P to this project by changing one import::

    from extrap_plugins.thicket import Modeling     # was: from thicket.model_extrap import Modeling

    mdl = Modeling(tk, "jobsize", chosen_metrics=["Avg time/rank"])
    mdl.produce_models()
    tk.statsframe.dataframe["Avg time/rank_extrap-model"]      # one ModelWrapper per node
    mdl.componentize_statsframe()

``Modeling`` takes Thicket's arguments (``tht, param_name, params=None,
chosen_metrics=None``) and writes the same columns into
``tk.statsframe.dataframe``: ``<metric>_extrap-model`` holding a
:class:`ModelWrapper` (``str()`` in Extra-P's notation, ``eval(x)``,
``display()``, ``.mdl.hypothesis`` with ``function``, ``RSS``, ``rRSS``,
``SMAPE``, ``AR2``, ``RE``), and ``<metric>_RSS_extrap-model`` ... for the
quality figures, as Extra-P defines them.  Extra keyword arguments choose
any registered modeler (``modeler="exhaustive"``) and its options.  Neither
Extra-P nor PySide6 is needed, and numpy 2 works.

:func:`from_thicket` turns a Thicket into an
:class:`~extrap_plugins.experiment.Experiment` for everything else
(several parameters, extrapolation, the HTML report, segmented models,
``suggest``).

pandas and Thicket are used through the objects passed in; matplotlib is
imported only by :meth:`ModelWrapper.display`.
"""

from __future__ import annotations

import math
import statistics
import warnings
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .errors import ExtrapWarning, InputError
from .experiment import Experiment, Metric
from .hatchet import (build, frame_columns, given, is_thicket, metric_names, metric_values, node_callpath,
                      node_labels, numeric_column, read_argument, spot_metrics)

MODEL_TAG = "_extrap-model"
"""The suffix of the columns ``Modeling`` writes, as Thicket names them."""
STATISTICS = ("RSS", "rRSS", "SMAPE", "AR2", "RE")

__all__ = ["Modeling", "ModelWrapper", "from_thicket", "MODEL_TAG"]


# ----------------------------------------------------------------- from_thicket
def from_thicket(tk, parameters: str | Sequence[str] | Mapping[str, Any] | None = None, *,
                 metrics: Sequence[str] | None = None) -> Experiment:
    """An Experiment from a Thicket: one run per profile, parameters from its metadata.

    Parameters
    ----------
    tk : thicket.Thicket
    parameters : str, sequence of str, or mapping, optional
        Metadata columns to use as parameters (``"jobsize"`` or
        ``["jobsize", "problem_size"]``); or ``{name: {profile_or_file: value}}``
        for values that are not in the metadata.  Default: the integer-valued
        numeric metadata columns that vary across the profiles (dates left
        out, columns that vary together kept once), as the caliper reader
        chooses; the experiment's notes say which.
    metrics : sequence of str, optional
        Default: ``tk.exc_metrics + tk.inc_metrics`` (the numeric ones).

    Returns
    -------
    Experiment
        Profiles with equal parameters are repetitions.  Each metric says
        whether its values are inclusive where the Thicket does
        (:func:`~extrap_plugins.hatchet.metric_values`).

    Raises
    ------
    InputError
        ``tk`` is not a Thicket; a parameter column that is missing, not
        numeric or without a value in some profiles (naming their files); no
        varying one; a node name containing ``->``.

    Warns
    -----
    ExtrapWarning
        By default, a column that would be a parameter but some profiles
        lack, naming their files.
    """
    _check_thicket(tk, "from_thicket")
    dataframe = tk.dataframe
    profiles = list(dict.fromkeys(dataframe.index.get_level_values(_profile_level(dataframe))))
    names, points, notes = _profile_points(tk, profiles, parameters)
    if metrics is None:
        listed = list(dict.fromkeys([*tk.exc_metrics, *tk.inc_metrics]))
        metrics = [m for m in listed if m in dataframe.columns and np.issubdtype(dataframe[m].dtype, np.number)]
    metrics = metric_names(metrics)
    level = _profile_level(dataframe)
    files = _files(tk)
    columns = []
    for profile, group in dataframe.groupby(level=level, sort=False):
        columns.append((profiles.index(profile), frame_columns(group, metrics, _profile_name(profile, files))))
    columns.sort(key=lambda item: item[0])
    hints = thicket_metric_values(tk, metrics)
    experiment = build(names, points[[i for i, _ in columns]], [c for _, c in columns], source="thicket",
                       hints=[hints])
    experiment.reader = "thicket"
    experiment.notes.extend(notes)
    return experiment


def _profile_level(dataframe) -> int:
    names = list(dataframe.index.names)
    return names.index("profile") if "profile" in names else 1


def _check_thicket(tk, what: str) -> None:
    """The InputError for a call given something other than a Thicket, saying what it was given."""
    if is_thicket(tk):
        return
    if hasattr(tk, "dataframe"):
        instead = "model GraphFrames with extrap_plugins.from_graphframes(frames, parameters)"
    elif isinstance(tk, Mapping) and tk and all(is_thicket(v) for v in tk.values()):
        raise InputError(f"{what}: expected a thicket.Thicket, got a dict of {len(tk)} Thickets (what tk.groupby "
                         f"returns); model the Thicket before the groupby, whose profiles are the runs: "
                         f"{what}(tk, ...)")
    else:
        files = read_argument(tk)
        instead = (f"read .cali files with extrap_plugins.read({files}), or make a Thicket of them with "
                   f"Thicket.from_caliperreader({files})")
    raise InputError(f"{what}: expected a thicket.Thicket, got {given(tk)}; {instead}")


def thicket_metric_values(tk, metrics: Sequence[str]) -> dict[str, str]:
    """Whether each metric's values are inclusive, as the Thicket says (:func:`~extrap_plugins.hatchet.metric_values`
    of its ``exc_metrics``, ``inc_metrics`` and the ``spot.metrics`` of its profiles' metadata); ``""`` where the
    profiles' metadata disagree."""
    metadata = tk.metadata
    listed = metadata["spot.metrics"].tolist() if "spot.metrics" in getattr(metadata, "columns", ()) else [None]
    said = [metric_values(metrics, tk.exc_metrics, tk.inc_metrics, spot_metrics({"spot.metrics": value}))
            for value in dict.fromkeys(v if isinstance(v, str) else None for v in listed)]
    return {m: said[0][m] if all(s[m] == said[0][m] for s in said) else "" for m in metrics}


def _files(tk) -> dict:
    """profile -> the file it was read from (``tk.profile_mapping``; empty when the Thicket has none)."""
    return {p: str(f) for p, f in dict(getattr(tk, "profile_mapping", None) or {}).items()}


def _profile_name(profile, files: Mapping) -> str:
    """How messages name a profile: its file where the Thicket knows it, else ``profile <hash>``."""
    return files.get(profile) or f"profile {profile}"


def _listed(names: Sequence[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _having(key: str) -> str:
    """The expression of a Thicket of the profiles that have a value of ``key``.

    >>> _having("jobsize")
    "tk.filter_metadata(lambda m: m.notna()['jobsize'])"
    """
    return f"tk.filter_metadata(lambda m: m.notna()['{key}'])"


def _profile_points(tk, profiles: list, parameters) -> tuple[list[str], np.ndarray, list[str]]:
    metadata = tk.metadata
    files = _files(tk)
    where = [_profile_name(p, files) for p in profiles]
    notes: list[str] = []
    if parameters is None:
        from .readers.caliper_reader import choose_parameters, missing_keys

        rows = _numeric_rows(metadata, profiles)
        names, notes = choose_parameters(rows)
        if not names:
            raise InputError(_nothing_varies(rows, where))
        fix = "from_thicket(" + _having("{first}") + ") models the profiles that have {them}"
        for message in missing_keys(rows, where, "profile", fix):
            warnings.warn(ExtrapWarning(message), stacklevel=3)
        notes = [f"parameters from the Thicket metadata: {', '.join(names)}", *notes]
        return names, np.array([[row[n] for n in names] for row in rows]), notes
    asked = parameters
    if isinstance(parameters, str):
        parameters = [parameters]
    if not len(parameters):
        raise InputError("from_thicket: no parameter named; name metadata columns (parameters='jobsize'), or leave "
                         "parameters out to take the columns that vary")
    if isinstance(parameters, Mapping):
        names = [str(n) for n in parameters]
        points = np.empty((len(profiles), len(names)))
        for j, name in enumerate(names):
            values = parameters[name]
            for i, profile in enumerate(profiles):
                key = profile if profile in values else files.get(profile, profile)
                if key not in values:
                    raise InputError(f"parameter {name!r} has no value for {where[i]}; give one for every profile, "
                                     f"by its file (tk.profile_mapping) or its profile")
                points[i, j] = _number(values[key], name, where[i])
        return names, points, notes
    names = list(parameters)
    missing = [n for n in names if n not in metadata.columns]
    if missing:
        raise InputError(f"no metadata column {', '.join(map(repr, missing))} in this Thicket")
    for name in names:
        lacking = [w for p, w in zip(profiles, where) if _absent(metadata.at[p, name])]
        if lacking:
            raise InputError(f"metadata column {name} has no value in {len(lacking)} of the {len(profiles)} "
                             f"profiles: {_listed(lacking)} (runs of another program?); model the profiles that "
                             f"have it: from_thicket({_having(name)}, parameters={asked!r})")
    points = np.array([[_number(metadata.at[p, n], n, w) for n in names] for p, w in zip(profiles, where)],
                      dtype=float)
    warn_also_varying(metadata, profiles, names, "from_thicket")
    return names, points.reshape(len(profiles), len(names)), notes


def _numeric_rows(metadata, profiles: Sequence) -> list[dict[str, float]]:
    """Each profile's numeric metadata with a value, as the caliper reader's :func:`choose_parameters` takes it:
    numbers and numeric text (Caliper's JSON exports hold every metadata value as text: ``"jobsize": "64"``), as
    the reader takes a run's metadata (:func:`~extrap_plugins.readers.caliper_reader.numeric_metadata`)."""
    rows = []
    for profile in profiles:
        row = {}
        for column in metadata.columns:
            number = _metadata_number(metadata.at[profile, column])
            if number is not None:
                row[column] = number
        rows.append(row)
    return rows


def _metadata_number(value) -> float | None:
    """A metadata cell as a finite number (a number, or text of one), or None (text, a list, a flag, no value)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, int, float, np.number)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def warn_also_varying(metadata, profiles: Sequence, names: Sequence[str], call: str) -> None:
    """Warn, naming them, of the metadata columns that would be parameters besides ``names``
    (:func:`choose_parameters`) and take several values among profiles of equal ``names``: a model over ``names``
    alone averages them as repetitions of one point (the runs at two problem sizes of one rank count).

    Columns that vary with ``names`` (``mpi.world.size`` with ``jobsize``) take one value there and are not named.
    """
    from .readers.caliper_reader import choose_parameters

    rows = _numeric_rows(metadata, profiles)
    groups: dict = {}
    for row, profile in zip(rows, profiles):
        groups.setdefault(tuple(metadata.at[profile, n] for n in names), []).append(row)
    others = [key for key in choose_parameters(rows)[0] if key not in names
              and any(len({row.get(key) for row in group}) > 1 for group in groups.values())]
    if others:
        one = len(others) == 1
        warnings.warn(ExtrapWarning(
            f"{call}: metadata {', '.join(others)} {'varies' if one else 'vary'} between profiles of equal "
            f"{', '.join(names)}: their values are averaged as repetitions of one point; to model "
            f"{'it' if one else 'them'} too: extrap_plugins.from_thicket(tk, {[*names, *others]!r})"), stacklevel=3)


def _nothing_varies(rows: list[dict], where: list[str]) -> str:
    """Why no parameter was found, and what to do: model each set of profiles on its own (profiles of different
    programs have different metadata columns, as the caliper reader says of runs), or give each profile's value."""
    from .readers.caliper_reader import choose_parameters, metadata_sets

    sets = metadata_sets(where, rows, "profile")
    if len(sets) > 1:
        groups: dict[frozenset, list[dict]] = {}
        for row in rows:
            groups.setdefault(frozenset(row), []).append(row)
        varying = next((taken[0] for group in groups.values() for taken in [choose_parameters(group)[0]] if taken),
                       None)
        fix = (f"model each set on its own, e.g. from_thicket({_having(varying)})" if varying else
               "model each set on its own (tk.filter_metadata)")
        return (f"no numeric metadata column varies across all {len(rows)} profiles: they fall into {len(sets)} "
                f"sets with different metadata columns, as profiles of different programs do: {'; '.join(sets)}; "
                f"{fix}")
    return (f"no numeric metadata column varies across the {len(rows)} profiles; give each profile's value by its "
            f"file: from_thicket(tk, parameters={{'NAME': {{file: value, ...}}}}), the files as in tk.profile_mapping")


def _absent(value) -> bool:
    """Whether a metadata cell holds no value (None, NaN, pandas' NA)."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN and NA are not equal to themselves
    except (TypeError, ValueError):
        return False


def _number(value, name: str, where: str) -> float:
    """``value`` as a finite float, or the InputError naming the profile (``where``: its file) and the value as
    written (``jobsize='many'``, ``jobsize=inf``)."""
    if _absent(value):
        raise InputError(f"{where}: parameter {name} has no value (a run of another program?)")
    if isinstance(value, (bool, np.bool_)):  # as _metadata_number: a flag is no number
        raise InputError(f"{where}: parameter {name}={value} is a flag (True or False), not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        shown = repr(value) if isinstance(value, str) else str(value)
        raise InputError(f"{where}: parameter {name}={shown[:60]} is not a number") from None
    if not math.isfinite(number):
        raise InputError(f"{where}: parameter {name}={number} is not a finite number")
    return number


# ------------------------------------------------------------ Extra-P's objects
def _exponent(value: float) -> str:
    """Extra-P's notation of an exponent: ``(1)``, ``(9/4)``."""
    fraction = Fraction(value).limit_denominator(64)
    return f"({fraction.numerator})" if fraction.denominator == 1 else f"({fraction.numerator}/{fraction.denominator})"


class SimpleTerm:
    """One factor as Extra-P has it: ``p^(9/4)`` or ``log2(p)^(1)``."""

    def __init__(self, term_type: str, exponent: float, parameter: str = "p"):
        self.term_type = term_type
        self.exponent = exponent
        self.parameter = parameter

    def to_string(self, parameter: str | None = None) -> str:
        name = parameter or self.parameter
        if self.term_type == "logarithm":
            return f"log2({name})^{_exponent(self.exponent)}"
        return f"{name}^{_exponent(self.exponent)}"

    def __repr__(self) -> str:
        return f"SimpleTerm({self.to_string()!r})"


class CompoundTerm:
    """A coefficient times simple terms (Extra-P's ``CompoundTerm``)."""

    def __init__(self, coefficient: float, simple_terms: list[SimpleTerm]):
        self.coefficient = coefficient
        self.simple_terms = simple_terms

    def to_string(self) -> str:
        return " * ".join([repr(float(self.coefficient)), *(t.to_string() for t in self.simple_terms)])


class Function:
    """The model's function with Extra-P's attributes: ``constant_coefficient``, ``compound_terms``, ``evaluate``."""

    def __init__(self, model, parameter_names: Sequence[str]):
        self._model = model
        self.constant_coefficient = float(model.constant)
        names = {p: ("p", "q", "r", "s", "t")[i] if i < 5 else p for i, p in enumerate(parameter_names)}
        self.compound_terms = []
        for term in model.terms:
            simple = []
            for parameter, factor in term.factors.items():
                if factor.exponent:
                    simple.append(SimpleTerm("polynomial", float(factor.exponent), names[parameter]))
                if factor.log_exponent:
                    simple.append(SimpleTerm("logarithm", float(factor.log_exponent), names[parameter]))
            self.compound_terms.append(CompoundTerm(float(term.coefficient), simple))

    def evaluate(self, value):
        """The function at ``value``: a number (float returned) or an array of shape (n,) or (n, n_params)."""
        x = np.asarray(value, dtype=np.float64)
        n_params = len(self._model.parameters)
        if x.ndim == 0:
            return float(self._model.predict(np.full((1, n_params), float(x)))[0])
        return self._model.predict(x.reshape(-1, n_params))

    def __str__(self) -> str:
        if self._model.function_text is not None or self._model.segments:
            return self._model.function
        text = repr(self.constant_coefficient)
        for term in self.compound_terms:
            text += " + " + term.to_string()
        return text


class Hypothesis:
    """The model and its quality figures, named as Extra-P's hypothesis names them."""

    def __init__(self, function: Function, figures: Mapping[str, float]):
        self.function = function
        self.RSS = figures["RSS"]
        self.rRSS = figures["rRSS"]
        self.SMAPE = figures["SMAPE"]
        self.AR2 = figures["AR2"]
        self.RE = figures["RE"]


class Measurement:
    """One measured point (Extra-P's ``Measurement``: ``coordinate`` and ``value(mean)``)."""

    def __init__(self, coordinate: tuple, values: np.ndarray):
        self.coordinate = coordinate
        self.values = values
        self.mean = float(np.mean(values))
        self.median = float(np.median(values))
        self.minimum = float(np.min(values))
        self.maximum = float(np.max(values))

    def value(self, use_median: bool = False) -> float:
        """The mean of the repetitions, or their median when ``use_median`` (as in Extra-P)."""
        return self.median if use_median else self.mean


class ExtrapModel:
    """What Thicket reaches through ``ModelWrapper.mdl``: ``hypothesis``, ``measurements``, ``callpath``, ``metric``;
    ``model`` is this project's :class:`~extrap_plugins.models.Model`."""

    def __init__(self, model, hypothesis: Hypothesis, measurements: list[Measurement], callpath: str, metric: str):
        self.model = model
        self.hypothesis = hypothesis
        self.measurements = measurements
        self.callpath = callpath
        self.metric = metric


class ModelWrapper:
    """One model in a Thicket statsframe cell, with the interface of Thicket's ``ModelWrapper``."""

    def __init__(self, mdl: ExtrapModel, param_name: str):
        self.mdl = mdl
        self.param_name = param_name

    @property
    def model(self):
        """This project's :class:`~extrap_plugins.models.Model`."""
        return self.mdl.model

    def __str__(self) -> str:
        """The function in Extra-P's notation: ``1.92e-05 + 9.09e-09 * p^(9/4)``."""
        return str(self.mdl.hypothesis.function)

    def __repr__(self) -> str:
        return f"ModelWrapper({self.mdl.callpath!r}, {self.mdl.metric!r}: {self})"

    def eval(self, val):
        """The model at ``val`` (a number or an array of numbers).

        Where every measured value is 0 or more (a time, a count), a value below 0 (a target below the
        measurements, where a falling term wins) is given as 0, with an
        :class:`~extrap_plugins.errors.ExtrapWarning` naming the lowest, as the command line's targets are
        (:func:`~extrap_plugins.extrapolation.warn_below_floor`); ``mdl.hypothesis.function.evaluate`` is the
        function itself.
        """
        from .extrapolation import warn_below_floor
        from .notebook import never_negative

        value = self.mdl.hypothesis.function.evaluate(val)
        if not never_negative(self.mdl.model, [m.minimum for m in self.mdl.measurements]):
            return value
        values = np.atleast_1d(value)
        with np.errstate(invalid="ignore"):
            below = values < 0
        if not below.any():
            return value
        lowest = int(np.nanargmin(values))
        at = float(np.atleast_1d(np.asarray(val, dtype=np.float64)).reshape(len(values), -1)[lowest, 0])
        warn_below_floor([self.mdl.model], values[lowest:lowest + 1], np.zeros(1), {self.param_name: at})
        return np.where(below, 0.0, values) if np.ndim(value) else 0.0

    def _repr_html_(self) -> str:
        from .notebook import model_html

        return model_html(self.mdl.model, points=[m.coordinate for m in self.mdl.measurements],
                          values=[m.mean for m in self.mdl.measurements])

    def display(self, RSS: bool = False):
        """Plot the model from the smallest measured value to 1.5 times the largest, and the measurements.

        Returns
        -------
        (matplotlib.figure.Figure, matplotlib.axes.Axes)
        """
        import matplotlib.pyplot as plt

        measured = sorted(self.mdl.measurements, key=lambda m: m.coordinate[0])
        xs = [m.coordinate[0] for m in measured]
        ys = [m.value(False) for m in measured]
        x = np.linspace(xs[0], 1.5 * xs[-1], 100)
        y = self.eval(x)
        fig, ax = plt.subplots()
        ax.plot(x, y, label=str(self))
        ax.plot(xs, ys, "ro", label=self.mdl.callpath)
        ax.set_xlabel(self.param_name)
        ax.set_ylabel(self.mdl.metric)
        if RSS:
            ax.text(x[0], max([*y, *ys]), f"RSS = {self.mdl.hypothesis.RSS:.4g}")
        ax.legend(loc=1)
        return fig, ax


def quality_figures(model, points: np.ndarray, values: np.ndarray) -> dict[str, float]:
    """RSS, rRSS, SMAPE (%), RE (a fraction) over the per-point means, as Extra-P computes them; AR2 from the fit."""
    predicted = np.asarray(model.predict(points), dtype=np.float64)
    difference = predicted - values
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(values != 0, difference / values, np.nan)
        denominator = np.abs(values) + np.abs(predicted)
        smape = np.where(denominator != 0, np.abs(difference) / denominator * 2, 0.0)
    return {
        "RSS": float(np.sum(difference ** 2)),
        "rRSS": float(np.nansum(relative ** 2)),
        "SMAPE": float(np.mean(smape) * 100),
        "AR2": float(model.quality.ar2),
        "RE": float(np.nanmean(np.abs(relative))) if np.isfinite(relative).any() else math.nan,
    }


# ------------------------------------------------------------------- Modeling
class Modeling:
    """Produce models for all the metrics across the profiles of a Thicket (Thicket's ``Modeling``).

    Parameters
    ----------
    tht : thicket.Thicket
    param_name : str
        The metadata column holding each profile's parameter value, or the
        name to give the values in ``params``.
    params : dict, optional
        ``{file name: value}`` for every profile; written into
        ``tht.metadata[param_name]`` (as Thicket does).
    chosen_metrics : list of str, optional
        Default: ``tht.exc_metrics + tht.inc_metrics``.
    modeler : str
        Any registered modeler (``extrap-plugins plugins`` lists them).
    measure : {"mean", "median", "minimum", "maximum"}
        How profiles with the same parameter value (repetitions) combine.
    **options
        The modeler's options.
    """

    def __init__(self, tht, param_name: str, params: dict | None = None, chosen_metrics: list | None = None, *,
                 modeler: str = "default", measure: str = "mean", **options):
        _check_thicket(tht, "Modeling")
        self.tht = tht
        self.param_name = param_name
        self.modeler = modeler
        self.measure = measure
        self.options = options
        if not params:
            if param_name not in tht.metadata.columns:
                raise InputError(f"no metadata column {param_name!r} in this Thicket; give params={{file: value}} "
                                 f"or one of: {', '.join(map(str, tht.metadata.columns))}")
            self.params = tht.metadata[param_name].tolist()
        else:
            if not isinstance(params, dict):
                raise TypeError("'params' must be provided as a dict")
            if len(params) != len(tht.profile):
                raise ValueError(f"length of params must equal the number of profiles: "
                                 f"{len(params)} != {len(tht.profile)}")
            by_file = {v: k for k, v in tht.profile_mapping.items()}
            for file_name, value in params.items():
                if file_name not in by_file:
                    raise ValueError(f"params names {file_name!r}, which is not a profile of this Thicket")
                tht.metadata.at[by_file[file_name], param_name] = value
            self.params = tht.metadata[param_name].tolist()
        self.chosen_metrics = metric_names(chosen_metrics) if chosen_metrics else list(tht.exc_metrics) + list(
            tht.inc_metrics)
        self.model_set = None
        """The :class:`~extrap_plugins.models.ModelSet` of the last :meth:`produce_models`."""

    # ----------------------------------------------------------------- models
    def produce_models(self, agg_func: Callable = statistics.mean, add_stats: bool = True):
        """Model every chosen metric of every node; write the model columns into ``tht.statsframe.dataframe``.

        Parameters
        ----------
        agg_func : callable
            Combines several rows of one node in one profile (ranks,
            threads) into one value; the mean by default, as in Thicket.
        add_stats : bool
            Also write the ``_RSS``, ``_rRSS``, ``_SMAPE``, ``_AR2`` and
            ``_RE`` columns.
        """
        import pandas as pd

        from .api import model as fit

        tht, metrics = self.tht, self.chosen_metrics
        missing = [m for m in metrics if m not in tht.dataframe.columns]
        if missing:
            raise InputError(f"no metric {', '.join(map(repr, missing))} in this Thicket's dataframe")
        frame = pd.DataFrame({m: numeric_column(tht.dataframe, m, "this Thicket") for m in metrics},
                             index=tht.dataframe.index)
        if frame.index.nlevels > 2 or not frame.index.is_unique:
            how = "mean" if agg_func in (statistics.mean, np.mean) else agg_func
            frame = frame.groupby(level=[0, 1], sort=False).agg(how)
        nodes = frame.index.get_level_values(0)
        profiles = frame.index.get_level_values(1)
        value_of = tht.metadata[self.param_name].to_dict()
        files = _files(tht)
        names: dict = {}  # node -> a unique call path
        seen: set[str] = set()
        labels = node_labels(tht.dataframe)
        for node in dict.fromkeys(nodes):
            name = node_callpath(node, "this Thicket", labels)
            unique, k = name, 2
            while unique in seen:
                unique, k = f"{name} #{k}", k + 1
            seen.add(unique)
            names[node] = unique
        callpath = np.array([names[n] for n in nodes], dtype=object)
        number = {p: _number(value_of[p], self.param_name, _profile_name(p, files)) for p in dict.fromkeys(profiles)}
        warn_also_varying(tht.metadata, list(number), [self.param_name], "Modeling")
        point = np.array([number[p] for p in profiles], dtype=np.float64)
        cp_rows, mt_rows, x_rows, y_rows = [], [], [], []
        for j, metric in enumerate(metrics):
            column = frame[metric].to_numpy()
            keep = np.isfinite(column)
            cp_rows.append(callpath[keep])
            mt_rows.append(np.full(int(keep.sum()), j))
            x_rows.append(point[keep])
            y_rows.append(column[keep])
        cp_names = list(names.values())
        cp_code = {n: i for i, n in enumerate(cp_names)}
        cps = np.concatenate(cp_rows)
        if not len(cps):
            raise InputError(f"Modeling: no values: {', '.join(map(repr, metrics))} "
                             f"{'is' if len(metrics) == 1 else 'are'} empty (NaN) in every profile of this Thicket")
        experiment = Experiment.from_columns(
            [self.param_name],
            callpath=(cp_names, np.fromiter((cp_code[c] for c in cps), dtype=np.int32, count=len(cps))),
            metric=(list(metrics), np.concatenate(mt_rows).astype(np.int32)),
            coordinates=np.concatenate(x_rows).reshape(-1, 1), value=np.concatenate(y_rows),
            metrics=[Metric(m, values=v) for m, v in thicket_metric_values(tht, list(metrics)).items()],
            source="thicket", reader="thicket",
        )
        self.model_set = fit(experiment, self.modeler, measure=self.measure, **self.options)
        node_of = {name: node for node, name in names.items()}
        statsframe = tht.statsframe.dataframe
        cells = {m: {} for m in metrics}
        for group in experiment.series_groups():
            reduced = group.reduce(self.measure)
            for (cp, mt), values, raw in zip(group.keys, reduced, group.values):
                model = self.model_set.get(cp.name, mt.name)
                measurements = [Measurement(tuple(pt), r[~np.isnan(r)]) for pt, r in zip(group.points, raw)]
                figures = quality_figures(model, group.points, values)
                hypothesis = Hypothesis(Function(model, [self.param_name]), figures)
                wrapper = ModelWrapper(ExtrapModel(model, hypothesis, measurements, cp.name, mt.name),
                                       self.param_name)
                cells[mt.name][node_of[cp.name]] = (wrapper, figures)
        for metric in metrics:
            found = cells[metric]
            statsframe[metric + MODEL_TAG] = pd.Series(
                [found[n][0] if n in found else None for n in statsframe.index], index=statsframe.index,
                dtype=object)
            if add_stats:
                for name in STATISTICS:
                    statsframe[f"{metric}_{name}{MODEL_TAG}"] = [
                        found[n][1][name] if n in found else np.nan for n in statsframe.index]
        return self

    # ------------------------------------------------------------------ tables
    def to_html(self, RSS: bool = False) -> str:
        """The model columns as an HTML table with a plot (JPEG) per model, as Thicket's ``to_html``."""
        import base64
        from io import BytesIO

        import matplotlib.pyplot as plt

        def image(wrapper):
            if wrapper is None:
                return ""
            fig, _ = wrapper.display(RSS)
            buffer = BytesIO()
            fig.savefig(buffer, format="jpg")
            plt.close(fig)
            return f'<img src="data:image/jpg;base64,{base64.b64encode(buffer.getvalue()).decode()}" />'

        columns = [m + MODEL_TAG for m in self.chosen_metrics]
        return self.tht.statsframe.dataframe[columns].to_html(escape=False, formatters={c: image for c in columns})

    @staticmethod
    def _componentize_function(model_object: ModelWrapper) -> dict[str, float]:
        """``{"c": constant, "p^(9/4)": coefficient, "p^(1) * log2(p)^(1)": ...}`` of one model."""
        function = model_object.mdl.hypothesis.function
        parts = {"c": function.constant_coefficient}
        for term in function.compound_terms:
            parts[" * ".join(t.to_string() for t in term.simple_terms)] = term.coefficient
        return parts

    def componentize_statsframe(self, columns: list | None = None) -> None:
        """Add one column per model term (``c``, ``p^(9/4)``, ...) under each model column, as Thicket does."""
        import pandas as pd

        statsframe = self.tht.statsframe.dataframe
        if columns is None:
            columns = [c for c in statsframe.columns
                       if len(statsframe) and isinstance(statsframe[c].iloc[0], ModelWrapper)]
        for c in columns:
            if c not in statsframe.columns:
                raise ValueError(f"column {c} is not in the aggregated statistics table.")
            if not isinstance(statsframe[c].iloc[0], ModelWrapper):
                raise TypeError(f"column {c} is not the right type (extrap_plugins.thicket.ModelWrapper).")
        parts = [statsframe]
        for c in columns:
            components = [Modeling._componentize_function(w) if w is not None else {} for w in statsframe[c]]
            frame = pd.DataFrame(data=components, index=statsframe.index)
            frame.columns = pd.MultiIndex.from_product([[c], frame.columns.to_list()])
            parts.append(frame)
        self.tht.statsframe.dataframe = pd.concat(parts, axis=1)
