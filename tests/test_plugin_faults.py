"""Broken plugins: every case is exit 3 with one line naming the plugin and its distribution.

Each case registers a third-party plugin (distribution ``broken-dist``) in a fresh host and runs
``extrap-plugins model`` through the CLI's main(); nothing a broken plugin does is exported.  A plugin whose
hooks register something wrong, or names that clash, is a warning that sets those registrations aside: the rest
of the tool works, and asking for a name set aside is the exit 3 (``EXTRAP_PLUGINS_STRICT=1``: every one is).
"""

from __future__ import annotations

import math
import pathlib
import sys
import types

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import Experiment, ExporterInfo, Model, ModelerInfo, ReaderInfo, Term, cli, engine, hookimpl
from extrap_plugins.errors import PluginError
from extrap_plugins.models import Factor
from extrap_plugins.plugins import PluginHost, get_host, set_host
from plugin_helpers import Exits, Interrupted, fake_distribution, installed, third_party_rows  # noqa: F401
from plugin_helpers import cli as run_command

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "stencil.jsonl"
DIST = "broken-dist"


class Batched:
    """A batched modeler returning what ``make(group)`` makes."""

    def __init__(self, make):
        self.make = make

    def fit_group(self, group, *, measure):
        return self.make(group)


def models(group, constant=1.0, terms=(), callpath=None, predictor=None):
    return [Model(callpath=callpath or c.name, metric=m.name, parameters=tuple(p.name for p in group.parameters),
                  constant=constant, terms=terms, function_text=None if predictor is None else "own",
                  predictor=predictor) for c, m in group.keys]


class Raises:
    def fit(self, X, y):
        raise RuntimeError("the fit fell over")


class WrongShape:
    def fit(self, X, y):
        self.constant_ = 1.0
        return self

    def predict(self, X):
        return np.ones((len(X), 2))


class AllNaN(WrongShape):
    def predict(self, X):
        return np.full(len(X), math.nan)


def boom(*args, **kwargs):
    raise RuntimeError("boom")


def _exporter_that_raises(model_set, out, options):
    raise KeyError("column")


def _exporter_that_exits(model_set, out, options):
    sys.exit(4)


def _read_exits(path, options):
    sys.exit(5)


def _sniff_exits(path):
    sys.exit("sniffed")


def _parts(path, options):
    """Two runs per input, each ``PATH:WHAT`` with WHAT the file's text (``none``, ``exit``)."""
    what = pathlib.Path(path).read_text().strip()
    return [f"{path}:{what}", f"{path}:{what}"]


def _read_part(part, options):
    what = part.rsplit(":", 1)[1]
    if what == "exit":
        sys.exit(7)
    if what == "none":
        return None
    return Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[1], [2], [4], [8], [16]],
                                   value=[1, 2, 4, 8, 16], source=part)


class TupleFactor:
    """A PMNF fit whose factor is a tuple, not a Factor: it passed the checks and crashed the export (exit 1)."""

    def fit(self, X, y):
        self.constant_, self.terms_ = 1.0, [Term(1.0, {"p": (1.0, 0)})]
        return self

    def predict(self, X):
        return np.ones(len(X))


class TextCoefficient(TupleFactor):
    def fit(self, X, y):
        self.constant_, self.terms_ = 1.0, [Term("2.0", {"p": Factor(1.0, 0)})]
        return self


class TextConstant(TupleFactor):
    def fit(self, X, y):
        self.constant_, self.terms_ = "2.0", []
        return self


class TermNotInList(TupleFactor):
    def fit(self, X, y):
        self.constant_, self.terms_ = 1.0, Term(1.0, {"p": Factor(1.0, 0)})
        return self


MODELERS = {
    "raises": (lambda: Raises(), "failed on main [time]: RuntimeError: the fit fell over"),
    "group-raises": (lambda: Batched(boom), "failed on 7 series fitted together, from main [time]: RuntimeError: boom"),
    "too-few": (lambda: Batched(lambda g: models(g)[:-1]), "returned 6 models for 7 series"),
    "not-models": (lambda: Batched(lambda g: ["3 + p"] * len(g)),
                   "returned a str for main [time], expected an extrap_plugins.Model"),
    "unknown-parameter": (lambda: Batched(lambda g: models(g, terms=(Term(2.0, {"q": Factor(1.0)}),))),
                          "main [time]: a term uses 'q', which is not a parameter (the parameters are n, p)"),
    "nan": (lambda: Batched(lambda g: models(g, constant=math.nan, terms=(Term(math.nan, {"p": Factor(1.0)}),))),
            "main [time]: the constant is nan, expected a finite number"),
    "nan-coefficient": (lambda: Batched(lambda g: models(g, constant=13.46, terms=(Term(1.0, {"p": Factor(1.0)}),
                                                                                   Term(math.inf, {"n": Factor(1.0)})))),
                        "main [time]: the coefficient of term 2 is inf, expected a finite number"),
    "nan-exponent": (lambda: Batched(lambda g: models(g, terms=(Term(1.0, {"p": Factor(math.nan)}),))),
                     "main [time]: the exponent of 'p' in term 1 is nan, expected a finite number"),
    "tuple-factor": (lambda: TupleFactor(),
                     "main [time]: the factor of 'p' in term 1 is a tuple ((1.0, 0)), expected an extrap_plugins.Factor"),
    "text-coefficient": (lambda: TextCoefficient(),
                         "main [time]: the coefficient of term 1 is a str ('2.0'), expected a real number"),
    "text-constant": (lambda: TextConstant(), "main [time]: constant_ is a str ('2.0'), expected a real number"),
    "term-not-in-list": (lambda: TermNotInList(),
                         "main [time]: terms_ is a Term (Term(coefficient=1.0, factors={'p': F...), expected a list "
                         "of extrap_plugins.Term"),
    "batched-text-exponent": (lambda: Batched(lambda g: models(g, terms=(Term(1.0, {"p": Factor("1", 0)}),))),
                              "main [time]: the exponent of 'p' in term 1 is a str ('1'), expected a real number"),
    "batched-terms-text": (lambda: Batched(lambda g: models(g, terms="p")),
                           "main [time]: the terms are a str ('p'), expected a tuple of extrap_plugins.Term"),
    "invented-callpath": (lambda: Batched(lambda g: models(g, callpath="nowhere")),
                          "returned a model for nowhere [time] in place of main [time]"),
    "wrong-shape": (lambda: WrongShape(), "main [time]: predict returned shape (25, 2) for 25 points, expected (25,)"),
    "all-nan": (lambda: AllNaN(), "main [time]: predict returned values that are not finite (NaN or infinity)"),
    "factory-raises": (boom, "failed to start: RuntimeError: boom"),
    "factory-exits": (lambda: sys.exit(2), "failed to start: called sys.exit(2)"),
    "predictor-raises": (lambda: Batched(lambda g: models(g, predictor=boom)),
                         "main [time]: predict failed: RuntimeError: boom"),
    "predictor-shape": (lambda: Batched(lambda g: models(g, predictor=lambda X: np.ones(3))),
                        "main [time]: predict returned shape (3,) for 25 points, expected (25,)"),
    "predictor-nan": (lambda: Batched(lambda g: models(g, predictor=lambda X: np.full(len(X), math.nan))),
                      "main [time]: predict returned values that are not finite (NaN or infinity)"),
    "exit-0": (lambda: Exits(0), "called sys.exit(0)"),
    "exit-3": (lambda: Exits(3), "called sys.exit(3)"),
    "exit-str": (lambda: Exits("bye from plugin"), "called sys.exit('bye from plugin')"),
    "exit-none": (lambda: Exits(None), "called sys.exit(None)"),
}


class Plugin:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo(name, factory) for name, (factory, _) in MODELERS.items()]

    @hookimpl
    def extrap_exporters(self):
        return [ExporterInfo("raises", _exporter_that_raises), ExporterInfo("exits", _exporter_that_exits)]

    @hookimpl
    def extrap_readers(self):
        return [ReaderInfo("raises", boom, patterns=("*.broken",)),
                ReaderInfo("none", lambda path, options: None, patterns=("*.none",)),
                ReaderInfo("str", lambda path, options: "not an experiment", patterns=("*.str",)),
                ReaderInfo("empty", _read_nothing, patterns=("*.empty",)),
                ReaderInfo("exits", _read_exits, patterns=("*.exits",)),
                ReaderInfo("runs", boom, patterns=("*.runs",), parts=_parts, read_part=_read_part)]


def _read_nothing(path, options):
    return Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=np.zeros((0, 1)), value=[])


class HookRaises:
    @hookimpl
    def extrap_exporters(self):
        raise ValueError("no exporters today")


@pytest.fixture
def broken(monkeypatch):
    monkeypatch.setenv("EXTRAP_PLUGINS_NO_AUTOLOAD", "1")
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    host = PluginHost(autoload=False)
    host.register(Plugin(), name="broken_plugin", distribution=DIST)
    set_host(host)
    yield host
    set_host(None)


def run(capsys, *argv, executor="serial") -> tuple[int, str]:
    status = cli.main(["model", *map(str, argv), "--executor", executor, "--progress", "off"])
    captured = capsys.readouterr()
    return status, captured.err


def command(capsys, *argv) -> tuple[int, str, str]:
    """``extrap-plugins ARGV`` on the process-wide host as it is: (exit status, stdout, stderr)."""
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def who(kind, name):
    return f"{kind} {name!r} (plugin broken_plugin from distribution {DIST!r})"


@pytest.mark.parametrize("name", sorted(MODELERS))
def test_a_broken_modeler_is_exit_3_naming_it_and_nothing_is_exported(broken, capsys, tmp_path, name):
    out = tmp_path / "models.json"
    status, err = run(capsys, EXAMPLE, "--modeler", name, "--export", "json", "-o", out)
    expected = MODELERS[name][1]
    lines = [line for line in err.splitlines() if "error" in line]
    assert status == 3
    assert lines == [f"extrap-plugins: error: modeler {name!r} (plugin broken_plugin from distribution {DIST!r})"
                     f"{'' if expected.startswith('failed') else ':'} {expected}"]
    assert not out.exists()


def test_a_broken_exporter_is_exit_3_naming_it(broken, capsys):
    assert run(capsys, EXAMPLE, "--export", "raises") == (
        3, f"extrap-plugins: error: exporter 'raises' (plugin broken_plugin from distribution {DIST!r}) failed: "
           "KeyError: 'column'\n")


def test_a_broken_reader_is_exit_3_naming_it(broken, capsys, tmp_path):
    path = tmp_path / "in.broken"
    path.write_text("anything")
    assert run(capsys, path) == (
        3, f"extrap-plugins: error: reader 'raises' (plugin broken_plugin from distribution {DIST!r}) failed on "
           f"{path}: RuntimeError: boom\n")


HOOK_RAISES = (f"plugin hook_raises ({DIST}): extrap_exporters failed: ValueError: no exporters today; none of the "
               "exporters it registers is used")


def test_a_hook_that_raises_is_a_warning_naming_it_and_the_rest_works(broken, capsys):
    """It was exit 3 for every command, even those that never use the plugin."""
    broken.register(HookRaises(), name="hook_raises", distribution=DIST)
    status, err = run(capsys, EXAMPLE, "--callpath", "main")
    assert (status, err) == (0, f"extrap-plugins: warning: {HOOK_RAISES}\n")
    set_host(PluginHost(autoload=False))  # a new command: a new host
    get_host().register(Plugin(), name="broken_plugin", distribution=DIST)
    get_host().register(HookRaises(), name="hook_raises", distribution=DIST)
    status, out, err = command(capsys, "plugins")
    assert (status, err) == (0, f"extrap-plugins: warning: {HOOK_RAISES}\n")
    rows = third_party_rows(out)
    assert rows[-1] == ["plugin", "hook_raises", DIST, "BROKEN: extrap_exporters failed: ValueError: no exporters "
                                                       "today; none of the exporters it registers is used"]
    assert ["exporter", "raises", DIST] in [row[:3] for row in rows]  # the same distribution's other plugin: listed


def test_a_hook_that_raises_is_exit_3_naming_it_when_strict(broken, capsys, monkeypatch):
    broken.register(HookRaises(), name="hook_raises", distribution=DIST)
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    assert run(capsys, EXAMPLE) == (3, f"extrap-plugins: error: {HOOK_RAISES}\n")


def test_sys_exit_at_import_is_a_load_warning_not_the_end_of_the_tool(tmp_path, monkeypatch, capsys):
    from test_plugins import fake_distribution

    fake_distribution(tmp_path, monkeypatch, "exits-dist", {"exits": "exits_at_import"},
                      {"exits_at_import": "import sys\nsys.exit(4)\n"})
    monkeypatch.delenv("EXTRAP_PLUGINS_NO_AUTOLOAD", raising=False)
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    set_host(None)
    try:
        status, err = run(capsys, EXAMPLE)
        assert status == 0
        assert ("extrap-plugins: warning: plugin 'exits' from distribution 'exits-dist' failed to load: "
                "SystemExit: 4") in err
        monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
        set_host(None)
        status, err = run(capsys, EXAMPLE)
        assert (status, err) == (3, "extrap-plugins: error: plugin 'exits' from distribution 'exits-dist' failed "
                                    "to load: SystemExit: 4\n")
    finally:
        set_host(None)


@pytest.mark.parametrize("suffix, returned", [("none", "None"), ("str", "a str")])
def test_a_reader_returning_something_other_than_an_experiment_is_exit_3_naming_it(broken, capsys, tmp_path,
                                                                                   suffix, returned):
    path = tmp_path / f"in.{suffix}"
    path.write_text("anything")
    assert run(capsys, path) == (
        3, f"extrap-plugins: error: {who('reader', suffix)}: returned {returned} for {path}, expected an "
           "extrap_plugins.Experiment\n")


def test_a_reader_returning_no_measurements_is_bad_input_naming_it(broken, capsys, tmp_path):
    # an empty table and exit 0, without a word
    path = tmp_path / "in.empty"
    path.write_text("anything")
    assert run(capsys, path) == (
        2, f"extrap-plugins: error: {path}: no measurements: {who('reader', 'empty')} read none\n")


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_run_reader_returning_none_is_exit_3_naming_it_whatever_the_executor(broken, capsys, tmp_path, executor):
    path = tmp_path / "in.runs"
    path.write_text("none")
    assert run(capsys, path, executor=executor) == (
        3, f"extrap-plugins: error: {who('reader', 'runs')}: returned None for {path}:none, expected an "
           "extrap_plugins.Experiment\n")


def test_a_run_reader_returning_none_is_exit_3_naming_it_when_streamed(broken, capsys, tmp_path):
    """--stream reads the runs in its own loop: it was exit 1, 'internal error: PluginFault: ...'."""
    path = tmp_path / "in.runs"
    path.write_text("none")
    assert run(capsys, path, "--stream", "on") == (
        3, f"extrap-plugins: error: {who('reader', 'runs')}: returned None for {path}:none, expected an "
           "extrap_plugins.Experiment\n")


# ---------------------------------------------------------------- sys.exit() in a plugin
@pytest.mark.parametrize("executor", ["serial", "process"])
@pytest.mark.parametrize("code, shown", [(0, "0"), ("bye from plugin", "'bye from plugin'")])
def test_a_modeler_calling_sys_exit_is_exit_3_naming_it_whatever_the_executor(broken, capsys, executor, code, shown):
    broken.register(ExitingModeler(code), name="exiting_plugin", distribution=DIST)
    assert run(capsys, EXAMPLE, "--modeler", "exiting", "--jobs", "2", executor=executor) == (
        3, f"extrap-plugins: error: modeler 'exiting' (plugin exiting_plugin from distribution {DIST!r}): "
           f"called sys.exit({shown})\n")


class ExitingModeler:
    def __init__(self, code):
        self.code = code

    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("exiting", lambda: Exits(self.code))]


def test_a_reader_calling_sys_exit_is_exit_3_naming_it(broken, capsys, tmp_path):
    path = tmp_path / "in.exits"
    path.write_text("anything")
    assert run(capsys, path) == (3, f"extrap-plugins: error: {who('reader', 'exits')}: called sys.exit(5) on {path}\n")


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_run_reader_calling_sys_exit_is_exit_3_naming_it_whatever_the_executor(broken, capsys, tmp_path, executor):
    path = tmp_path / "in.runs"
    path.write_text("exit")
    assert run(capsys, path, executor=executor) == (
        3, f"extrap-plugins: error: {who('reader', 'runs')}: called sys.exit(7) on {path}:exit\n")


class SniffExits:
    @hookimpl
    def extrap_readers(self):
        return [ReaderInfo("sniff-exits", boom, sniff=_sniff_exits)]


def test_a_sniff_calling_sys_exit_is_exit_3_naming_its_reader(broken, capsys, tmp_path):
    broken.register(SniffExits(), name="sniffing_plugin", distribution=DIST)
    path = tmp_path / "in.unclaimed"
    path.write_text("anything")
    assert run(capsys, path) == (
        3, f"extrap-plugins: error: reader 'sniff-exits' (plugin sniffing_plugin from distribution {DIST!r}): "
           f"called sys.exit('sniffed') on {path}\n")


def test_an_exporter_calling_sys_exit_is_exit_3_naming_it(broken, capsys):
    assert run(capsys, EXAMPLE, "--export", "exits") == (
        3, f"extrap-plugins: error: {who('exporter', 'exits')}: called sys.exit(4)\n")


class InterruptedModeler:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("interrupted", Interrupted)]


def test_an_interrupt_in_a_plugin_stays_an_interrupt(broken, capsys):
    broken.register(InterruptedModeler(), name="interrupted_plugin", distribution=DIST)
    assert run(capsys, EXAMPLE, "--modeler", "interrupted") == (130, "extrap-plugins: interrupted\n")


def test_a_predictor_may_say_nan_only_where_the_series_has_no_value(broken):
    """Only measured points are checked: NaN where a value is missing is the modeler's right, not where one is."""
    broken.register(OwnPredictor(lambda X: np.where(X[:, 0] == 4, math.nan, X[:, 0])), name="predicting_plugin",
                    distribution=DIST)
    e = Experiment.from_columns(["p"], callpath=["gap"] * 5 + ["full"] * 5, metric="time",
                                coordinates=[[1], [2], [4], [8], [16]] * 2,
                                value=[1, 2, math.nan, 8, 16, 1, 2, 4, 8, 16])
    (m,) = extrap_plugins.model(e, "predicting", callpaths=["gap"], host=broken, executor="serial")
    assert m.function == "own"
    with pytest.raises(PluginError) as error:
        extrap_plugins.model(e, "predicting", host=broken, executor="serial")
    assert str(error.value) == (f"modeler 'predicting' (plugin predicting_plugin from distribution {DIST!r}): "
                                "full [time]: predict returned values that are not finite (NaN or infinity)")


class OwnPredictor:
    def __init__(self, predictor):
        self.predictor = predictor

    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("predicting", lambda: Batched(lambda g: models(g, predictor=self.predictor)))]


# ---------------------------------------------------------------- bad registrations
class BadRegistrations:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("uncallable", 42)]


class EmptyName:
    @hookimpl
    def extrap_readers(self):
        return [ReaderInfo("", boom)]


class ReturnsDict:
    @hookimpl
    def extrap_readers(self):
        return {"x": 1}


BAD_REGISTRATIONS = {
    "factory-not-callable": (BadRegistrations(), "modeler", "uncallable",
                             "extrap_modelers returned the modeler 'uncallable' with a factory that is not callable "
                             "(got int); none of the modelers it registers is used"),
    "empty-name": (EmptyName(), "plugin", "bad_plugin",
                   "extrap_readers returned a reader with the name '': a name must be non-empty text without spaces "
                   "around it; none of the readers it registers is used"),
    "dict": (ReturnsDict(), "plugin", "bad_plugin",
             "extrap_readers must return a list of ReaderInfo objects, got dict; none of the readers it registers is "
             "used"),
}


@pytest.mark.parametrize("case", sorted(BAD_REGISTRATIONS))
def test_a_bad_registration_is_a_warning_naming_the_plugin_and_listed_as_broken(broken, capsys, case):
    """It was exit 3 for every command, ``plugins`` included."""
    plugin, kind, name, line = BAD_REGISTRATIONS[case]
    broken.register(plugin, name="bad_plugin", distribution=DIST)
    status, out, err = command(capsys, "plugins")
    assert (status, err) == (0, f"extrap-plugins: warning: plugin bad_plugin ({DIST}): {line}\n")
    assert [kind, name, DIST, f"BROKEN: {line}"] in third_party_rows(out)


@pytest.mark.parametrize("case", sorted(BAD_REGISTRATIONS))
def test_a_bad_registration_leaves_the_other_commands_working(broken, capsys, case):
    plugin, kind, name, line = BAD_REGISTRATIONS[case]
    broken.register(plugin, name="bad_plugin", distribution=DIST)
    status, out, err = command(capsys, "model", EXAMPLE, "--progress", "off", "--callpath", "main")
    assert (status, err) == (0, f"extrap-plugins: warning: plugin bad_plugin ({DIST}): {line}\n")
    assert out.splitlines()[2].split()[:2] == ["main", "time"]


@pytest.mark.parametrize("case", sorted(BAD_REGISTRATIONS))
@pytest.mark.parametrize("command", [["plugins"], ["model", str(EXAMPLE), "--progress", "off"]])
def test_a_bad_registration_is_exit_3_naming_the_plugin_when_strict(broken, capsys, monkeypatch, case, command):
    plugin, _, _, line = BAD_REGISTRATIONS[case]
    broken.register(plugin, name="bad_plugin", distribution=DIST)
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    status = cli.main(command)
    assert (status, *capsys.readouterr()) == (3, "", f"extrap-plugins: error: plugin bad_plugin ({DIST}): {line}\n")


def test_asking_for_a_name_set_aside_is_exit_3_naming_the_plugin(broken, capsys):
    plugin, _, name, line = BAD_REGISTRATIONS["factory-not-callable"]
    broken.register(plugin, name="bad_plugin", distribution=DIST)
    status, err = run(capsys, EXAMPLE, "--modeler", name)
    assert (status, err) == (3, f"extrap-plugins: warning: plugin bad_plugin ({DIST}): {line}\n"
                                f"extrap-plugins: error: plugin bad_plugin ({DIST}): {line}\n")


# ---------------------------------------------------------------- through real entry points
HOOKFAIL = """
    import os
    from extrap_plugins import ModelerInfo, hookimpl

    class Mean:
        def fit(self, X, y):
            self.constant_, self.terms_ = float(sum(y) / len(y)), []
            return self

        def predict(self, X):
            import numpy as np
            return np.full(len(X), self.constant_)

    @hookimpl
    def extrap_modelers():
        if os.environ.get("HUNT_HOOK") == "raise":
            raise RuntimeError("boom in hook")
        return [ModelerInfo("twice", Mean), ModelerInfo("twice", Mean), ModelerInfo("once", Mean)]
    """

CLASH = """
    from extrap_plugins import ExporterInfo, hookimpl

    def mine(model_set, out, options):
        out.write("mine\\n")

    @hookimpl
    def extrap_exporters():
        return [ExporterInfo("csv", mine, "my csv"), ExporterInfo("markdown", mine, "my markdown")]
    """

MARKDOWN = """
    from extrap_plugins import ExporterInfo, hookimpl

    def markdown(model_set, out, options):
        out.write("| markdown |\\n")

    @hookimpl
    def extrap_exporters():
        return [ExporterInfo("markdown", markdown, "a markdown table"), ExporterInfo("md-only", markdown, "also")]
    """


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize("mode, problem", [
    ("raise", "extrap_modelers failed: RuntimeError: boom in hook"),
    ("dup", "extrap_modelers returned the modeler 'twice' more than once"),
])
def test_an_installed_plugin_with_a_broken_hook_leaves_every_command_working(tmp_path, monkeypatch, capsys, mode,
                                                                             problem):
    fake_distribution(tmp_path, monkeypatch, "hunt-hookfail", {"hunt_hookfail": "hunt_hookfail_mod"},
                      {"hunt_hookfail_mod": HOOKFAIL})
    monkeypatch.setenv("HUNT_HOOK", mode)
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    message = f"plugin hunt_hookfail (hunt-hookfail): {problem}; none of the modelers it registers is used"
    status, out, err = run_command(capsys, "plugins")
    assert (status, err) == (0, f"extrap-plugins: warning: {message}\n")
    assert third_party_rows(out) == (
        [["plugin", "hunt_hookfail", "hunt-hookfail", f"BROKEN: {problem}; none of the modelers it registers is used"]]
        if mode == "raise" else
        [["modeler", "once", "hunt-hookfail", f"BROKEN: {problem}; none of the modelers it registers is used"],
         ["modeler", "twice", "hunt-hookfail", f"BROKEN: {problem}; none of the modelers it registers is used"]])
    status, out, err = run_command(capsys, "model", EXAMPLE, "--progress", "off", "--callpath", "main")
    assert (status, err) == (0, f"extrap-plugins: warning: {message}\n")
    if mode == "dup":  # one plugin naming a modeler twice is said as such, not as "two plugins"
        assert run_command(capsys, "model", EXAMPLE, "--progress", "off", "--modeler", "twice") == (
            3, "", f"extrap-plugins: warning: {message}\nextrap-plugins: error: {message}\n")


@pytest.mark.usefixtures("installed")
def test_installed_plugins_whose_names_clash_are_all_reported_and_the_built_in_keeps_its_name(tmp_path, monkeypatch,
                                                                                              capsys):
    fake_distribution(tmp_path / "clash", monkeypatch, "hunt-clash", {"hunt_clash": "hunt_clash_mod"},
                      {"hunt_clash_mod": CLASH})
    fake_distribution(tmp_path / "md", monkeypatch, "hunt-md", {"hunt_md": "hunt_md_mod"}, {"hunt_md_mod": MARKDOWN})
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    csv = "plugin hunt_clash (hunt-clash): its exporter 'csv' is not used: a built-in exporter has that name"
    markdown = ("two plugins register the exporter 'markdown': hunt_clash (hunt-clash) and hunt_md (hunt-md); "
                "neither is used (uninstall one, or switch one off with EXTRAP_PLUGINS_DISABLE=DISTRIBUTION)")
    warned = {f"extrap-plugins: warning: {csv}", f"extrap-plugins: warning: {markdown}"}
    status, out, err = run_command(capsys, "plugins")
    assert (status, set(err.splitlines())) == (0, warned)
    assert third_party_rows(out) == [
        ["exporter", "csv", "hunt-clash", "NOT USED: a built-in exporter has this name"],
        ["exporter", "markdown", "hunt-clash", "NOT USED: two plugins register this name: hunt_clash (hunt-clash) and "
                                               "hunt_md (hunt-md)"],
        ["exporter", "markdown", "hunt-md", "NOT USED: two plugins register this name: hunt_clash (hunt-clash) and "
                                            "hunt_md (hunt-md)"],
        ["exporter", "md-only", "hunt-md", "also"]]
    status, out, err = run_command(capsys, "plugins", "markdown")  # each registration of the name, and why unused
    assert (status, set(err.splitlines())) == (0, warned)
    assert out == "\n".join(
        f"exporter markdown\n  provided by: {dist} (plugin {plugin})\n  not used: {markdown}\n  description: {what}\n"
        "  options: none\n  and the options of every exporter: target, sort, values, level\n"
        for dist, plugin, what in (("hunt-clash", "hunt_clash", "my markdown"), ("hunt-md", "hunt_md", "a markdown table")))
    status, out, err = run_command(capsys, "model", EXAMPLE, "--progress", "off", "--export", "csv")
    assert (status, set(err.splitlines())) == (0, warned)
    assert out.startswith("callpath,metric,")  # the built-in csv exporter
    status, out, err = run_command(capsys, "model", EXAMPLE, "--progress", "off", "--export", "markdown")
    assert (status, out) == (3, "")
    assert err.splitlines()[-1] == f"extrap-plugins: error: {markdown}"
    monkeypatch.setenv("EXTRAP_PLUGINS_DISABLE", "hunt-clash")  # the way out: switch one off
    assert run_command(capsys, "model", EXAMPLE, "--progress", "off", "--export", "markdown") == (
        0, "| markdown |\n", "")


# ---------------------------------------------------------------- found by the plugin-author hunt (/tmp/s57)
HUNT_READER = """
    import pathlib
    import threading

    from extrap_plugins import Experiment, InputError, ReaderInfo, hookimpl

    def read(path, options):
        rows = [line.split() for line in pathlib.Path(path).read_text().splitlines() if line.strip()]
        names = ["p"]
        if rows and rows[0][0] == "params":
            names, rows = rows[0][1:], rows[1:]
        if not rows:
            raise InputError("no measurements in it")  # no path: the host names the input
        return Experiment.from_columns(names, callpath="main", metric="time",
                                       coordinates=[[float(x) for x in row[:-1]] for row in rows],
                                       value=[float(row[-1]) for row in rows], source=str(path))

    def parts(path, options):
        folders = path if isinstance(path, list) else [path]
        return [str(run) for folder in folders for run in sorted(pathlib.Path(folder).glob("*.run"))]

    def read_part(part, options):
        return read(part, options)

    def read_part_buggy(part, options):
        if pathlib.Path(part).name.startswith("run64"):
            return {}["bug in read_part"]
        return read(part, options)

    class Run:
        '''A run that cannot be pickled (it holds a lock).'''

        def __init__(self, path):
            self.path, self.lock = path, threading.Lock()

        def __repr__(self):
            return f"Run({pathlib.Path(self.path).name!r})"

    def unsendable_parts(path, options):
        return [Run(run) for run in parts(path, options)]

    def read_run(part, options):
        return read(part.path, options)

    @hookimpl
    def extrap_readers():
        return [ReaderInfo("ptab", read, patterns=("*.ptab",)),
                ReaderInfo("ptabdir", None, directories=True, parts=parts, read_part=read_part),
                ReaderInfo("ptabdir-buggy", None, directories=True, parts=parts, read_part=read_part_buggy),
                ReaderInfo("ptabdir-lambda", None, directories=True, parts=parts,
                           read_part=lambda part, options: read(part, options)),
                ReaderInfo("ptabdir-unsendable", None, directories=True, parts=unsendable_parts, read_part=read_run)]
    """

HUNT_EXPORTER = """
    import errno

    from extrap_plugins import ExporterInfo, hookimpl

    def markdown(model_set, out, options):
        digits = int(options.get("digits", "3"))  # a bad value is a ValueError: the user's mistake
        for m in model_set:
            out.write(f"| {m.callpath} | {m.metric} | {m.constant:.{digits}f} |\\n")

    def elsewhere(model_set, out, options):
        open("/nonexistent-dir/x")  # a file the user never named

    def on_output(model_set, out, options):
        raise OSError(errno.EIO, "Input/output error", f"/proc/self/fd/{out.fileno()}")  # the file opened for -o

    def tables(model_set, out, options):
        (out / "table.md").write_text("| table |\\n")  # into the folder -o names

    @hookimpl
    def extrap_exporters():
        return [ExporterInfo("markdown", markdown, "a table", options={"digits": "decimal places (default 3)"}),
                ExporterInfo("bad-oserror", elsewhere), ExporterInfo("out-oserror", on_output),
                ExporterInfo("tables", tables, kind="path")]
    """

HUNT = "(plugin hunt_reader from distribution 'hunt-plug')"


@pytest.fixture
def hunt(request, tmp_path, monkeypatch):
    """The hunt's plugins, installed as a real distribution (``hunt-plug``); a folder ``runs`` of six runs (p = 2
    to 64, ``run64.run`` the one the buggy reader fails on) and a file ``good.ptab``."""
    request.getfixturevalue("installed")
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    fake_distribution(tmp_path / "site", monkeypatch, "hunt-plug",
                      {"hunt_reader": "hunt_reader_mod", "hunt_exporter": "hunt_exporter_mod"},
                      {"hunt_reader_mod": HUNT_READER, "hunt_exporter_mod": HUNT_EXPORTER})
    runs = tmp_path / "runs"
    runs.mkdir()
    for p in (2, 4, 8, 16, 32, 64):
        (runs / f"run{p}.run").write_text(f"{p} {3 + 2 * p}\n")
    good = tmp_path / "good.ptab"
    good.write_text("".join(f"{p} {3 + 2 * p}\n" for p in (1, 2, 4, 8, 16)))
    return types.SimpleNamespace(runs=runs, good=good, tmp=tmp_path)


@pytest.mark.parametrize("how", [["--executor", "serial"], ["--executor", "process", "--jobs", "2"],
                                 ["--stream", "on", "--executor", "serial"]], ids=["serial", "process", "streamed"])
def test_a_bug_in_a_plugins_read_part_is_exit_3_naming_the_reader_and_the_run(hunt, capsys, how):
    """It was a warning, 'skipped: ...: reading failed (KeyError: ...)', and models of the other runs (exit 0)."""
    assert run_command(capsys, "model", hunt.runs, "--reader", "ptabdir-buggy", "--progress", "off", *how) == (
        3, "", f"extrap-plugins: error: reader 'ptabdir-buggy' {HUNT} failed on {hunt.runs / 'run64.run'}: KeyError: "
               "'bug in read_part'\n")


def test_a_bug_in_a_built_in_readers_code_skips_the_run_with_a_warning(tmp_path):
    """The built-in readers keep the documented rule for long sweeps: one odd file is skipped, not the end."""
    def read_part(part, options):
        return {}["bug"]

    read_part.__module__ = "extrap_plugins.readers.cube_reader"
    result, error, caught = engine.read_one_part((read_part, str(tmp_path / "r1"), {}))
    assert (result, type(error), str(error), caught) == (
        None, extrap_plugins.InputError, f"{tmp_path / 'r1'}: reading failed (KeyError: 'bug')", [])


def test_a_read_part_that_cannot_be_sent_to_worker_processes_is_exit_3_saying_what_it_must_be(hunt, capsys):
    """It was exit 1, 'internal error: AttributeError: Can't pickle local object ...'."""
    assert run_command(capsys, "model", hunt.runs, "--reader", "ptabdir-lambda", "--progress", "off",
                       "--executor", "process") == (
        3, "", f"extrap-plugins: error: reader 'ptabdir-lambda' {HUNT}: read_part cannot be sent to worker processes "
               "(AttributeError: Can't pickle local object 'extrap_readers.<locals>.<lambda>'): it must be a "
               "module-level function, not a lambda, a closure or a local function; or use --executor serial\n")
    status, out, err = run_command(capsys, "model", hunt.runs, "--reader", "ptabdir-lambda", "--progress", "off",
                                   "--executor", "serial")
    assert (status, err) == (0, "") and out.splitlines()[2].split()[:2] == ["main", "time"]


def test_runs_that_cannot_be_sent_to_worker_processes_are_exit_3_naming_one(hunt, capsys):
    assert run_command(capsys, "model", hunt.runs, "--reader", "ptabdir-unsendable", "--progress", "off",
                       "--executor", "process") == (
        3, "", f"extrap-plugins: error: reader 'ptabdir-unsendable' {HUNT}: parts returned a run that cannot be sent "
               "to worker processes, a Run (Run('run16.run')) (TypeError: cannot pickle '_thread.lock' object): each "
               "run must be picklable (a path, a str, a tuple); or use --executor serial\n")


def test_a_folder_given_to_a_reader_of_one_file_is_bad_input_naming_the_reader(hunt, capsys):
    """The plugin declared directories=False and got the folder all the same, and the blame (exit 3)."""
    assert run_command(capsys, "model", hunt.runs, "--reader", "ptab") == (
        2, "", f"extrap-plugins: error: {hunt.runs}: is a folder; the ptab reader reads one file\n")
    assert run_command(capsys, "model", hunt.runs, "--reader", "text") == (
        2, "", f"extrap-plugins: error: {hunt.runs}: is a folder; the text reader reads one file\n")


def test_a_parameter_value_that_is_not_finite_is_bad_input_naming_the_file_the_parameter_and_the_reader(hunt,
                                                                                                         capsys):
    """It was taken as a point: 'main time 3  adj. R² 0.0000', exit 0."""
    path = hunt.tmp / "nancoord.ptab"
    path.write_text("nan 1\n1 2\n2 3\n4 4\n8 5\n")
    assert run_command(capsys, "model", path, "--progress", "off") == (
        2, "", f"extrap-plugins: error: {path}: parameter 'p' has the value nan in 1 of 5 measurements (as reader "
               f"'ptab' {HUNT} read it); a parameter's values must be finite numbers\n")
    (hunt.runs / "run128.run").write_text("inf 1\n")  # a run: skipped with a warning naming it
    status, out, err = run_command(capsys, "model", hunt.runs, "--reader", "ptabdir", "--progress", "off",
                                   "--executor", "serial")
    assert (status, err) == (0, f"extrap-plugins: warning: skipped: {hunt.runs / 'run128.run'}: parameter 'p' has "
                                f"the value inf in 1 of 1 measurement (as reader 'ptabdir' {HUNT} read it); a "
                                "parameter's values must be finite numbers\n")


def test_an_input_error_a_reader_raises_without_a_path_names_the_input(hunt, capsys):
    duplicated = hunt.tmp / "dupparam.ptab"
    duplicated.write_text("params p p\n1 1 3\n2 2 5\n")
    assert run_command(capsys, "model", duplicated) == (
        2, "", f"extrap-plugins: error: {duplicated}: parameter names must be unique, got ['p', 'p']\n")
    empty = hunt.tmp / "empty.ptab"
    empty.write_text("\n")
    assert run_command(capsys, "model", empty) == (2, "", f"extrap-plugins: error: {empty}: no measurements in it\n")
    (hunt.runs / "run128.run").write_text("\n")  # a run: its warning names it
    status, out, err = run_command(capsys, "model", hunt.runs, "--reader", "ptabdir", "--progress", "off",
                                   "--executor", "serial")
    assert (status, err) == (0, f"extrap-plugins: warning: skipped: {hunt.runs / 'run128.run'}: no measurements in "
                                "it\n")


def test_an_exporters_options_are_checked_before_the_reading(hunt, capsys):
    """A key that is neither common nor the exporter's own is refused by the host, before the reading: here the
    buggy reader would fail (exit 3) if it were reached."""
    assert run_command(capsys, "model", hunt.runs, "--reader", "ptabdir-buggy", "--export", "markdown",
                       "--export-option", "digitz=3") == (
        2, "", "extrap-plugins: error: exporter 'markdown' has no option 'digitz'; its options are: digits, and those "
               "of every exporter: target, sort, values, level\n")
    assert run_command(capsys, "model", hunt.good, "--export", "markdown", "--target", "p=1024", "--sort", "target",
                       "--export-option", "digits=1") == (0, "| main | time | 3.0 |\n", "")


def test_a_bad_option_value_an_exporter_raises_as_value_error_is_bad_input(hunt, capsys):
    """It was exit 3, a broken plugin, as if the user's 'digits=x' were the plugin's fault."""
    assert run_command(capsys, "model", hunt.good, "--export", "markdown", "--export-option", "digits=x") == (
        2, "", "extrap-plugins: error: exporter 'markdown': invalid literal for int() with base 10: 'x'\n")


def test_an_os_error_of_an_exporter_is_the_users_only_on_the_output(hunt, capsys):
    """A file the user never named was reported as their error (exit 2), without the plugin's name."""
    assert run_command(capsys, "model", hunt.good, "--export", "bad-oserror") == (
        3, "", "extrap-plugins: error: exporter 'bad-oserror' (plugin hunt_exporter from distribution 'hunt-plug') "
               "failed: FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent-dir/x'\n")
    out = hunt.tmp / "models.md"
    assert run_command(capsys, "model", hunt.good, "--export", "out-oserror", "-o", out) == (
        2, "", f"extrap-plugins: error: {out}: Input/output error\n")  # named as -o, never the temporary file
    assert not out.exists()
    out.write_text("a file, where the exporter writes into a folder\n")
    assert run_command(capsys, "model", hunt.good, "--export", "tables", "-o", out) == (
        2, "", f"extrap-plugins: error: {out / 'table.md'}: Not a directory\n")


def unsendable():
    """A modeler object that cannot be pickled: it holds a lambda."""
    return Batched(lambda g: models(g))


class LambdaPredictions:
    """A batched modeler (picklable) whose models cannot be pickled: their predictor is a lambda."""

    def fit_group(self, group, *, measure):
        return models(group, predictor=lambda X: np.full(len(X), 2.0))


class Unsendable:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("unsendable", unsendable), ModelerInfo("lambda-predictions", LambdaPredictions)]


@pytest.mark.parametrize("name, what", [
    ("unsendable", "the modeler object cannot be sent to worker processes (AttributeError: Can't pickle local object "
                   "'unsendable.<locals>.<lambda>')"),
    ("lambda-predictions", "the models it returned cannot be sent back from worker processes (AttributeError: "
                           "Can't pickle local object 'LambdaPredictions.fit_group.<locals>.<lambda>')"),
])
def test_a_modeler_that_cannot_be_sent_to_worker_processes_says_what_it_must_be(broken, capsys, name, what):
    """It said only 'failed: AttributeError: Can't pickle local object ...', and only on large inputs."""
    broken.register(Unsendable(), name="unsendable_plugin", distribution=DIST)
    assert run(capsys, EXAMPLE, "--modeler", name, "--jobs", "2", executor="process") == (
        3, f"extrap-plugins: error: modeler {name!r} (plugin unsendable_plugin from distribution {DIST!r}): {what}: "
           "with --executor process or mpi, which --executor auto chooses for large inputs, the modeler and the "
           "models it returns (a predictor too) must be picklable: use module-level classes and functions, not "
           "lambdas, closures or local classes; or use --executor serial\n")
    assert run(capsys, EXAMPLE, "--modeler", name, "--callpath", "main")[0] == 0  # serial: nothing is pickled


class Negative:
    """Fits ``100 - 200 p``: below 0 at every measured point of a series that is above 0 at each."""

    def fit(self, X, y):
        self.constant_, self.terms_ = 100.0, [Term(-200.0, {"p": Factor(1.0, 0)})]
        return self

    def predict(self, X):
        return 100.0 - 200.0 * X[:, 0]


class NegativeModelers:
    @hookimpl
    def extrap_modelers(self):
        return [ModelerInfo("negative", Negative),
                ModelerInfo("negative-predictor", lambda: Batched(lambda g: models(
                    g, predictor=lambda X: np.where(X[:, 0] > 1, 1.0, -1.0))))]


NEGATIVE = "the model of modeler {!r} is negative at measured points, though every measured value is positive"


@pytest.mark.parametrize("name", ["negative", "negative-predictor"])
def test_a_model_below_0_where_every_value_is_above_0_is_a_quality_warning_naming_the_modeler(broken, name):
    broken.register(NegativeModelers(), name="negative_plugin", distribution=DIST)
    e = Experiment.from_columns(["p"], callpath=["positive"] * 5 + ["zero"] * 5, metric="time",
                                coordinates=[[1], [2], [4], [8], [16]] * 2, value=[1, 2, 3, 4, 5, 0, 2, 3, 4, 5])
    with pytest.warns(extrap_plugins.QualityWarning) as caught:
        result = extrap_plugins.model(e, name, host=broken, executor="serial")
    said = [str(w.message) for w in caught if isinstance(w.message, extrap_plugins.QualityWarning)]
    assert said == [f"positive [time]: {NEGATIVE.format(name)}"]  # not the series with a 0 in it
    assert [m.warnings for m in result] == [(NEGATIVE.format(name),), ()]


def test_a_model_below_0_is_said_on_the_command_line(broken, capsys):
    broken.register(NegativeModelers(), name="negative_plugin", distribution=DIST)
    status, err = run(capsys, EXAMPLE, "--modeler", "negative", "--callpath", "main", "--metric", "time")
    assert (status, err) == (0, f"extrap-plugins: warning: main [time]: {NEGATIVE.format('negative')}\n")


class PerSeriesMean:
    @hookimpl
    def extrap_modelers(self):
        from plugin_helpers import Mean
        return [ModelerInfo("series-mean", Mean)]


def test_a_series_without_finite_values_never_reaches_a_per_series_modeler(broken):
    # (its fit got no values and the quality figures of nothing failed: "modeler 'series-mean' ... failed:
    # ValueError: zero-size array to reduction operation maximum which has no identity", exit 3 blaming the plugin)
    broken.register(PerSeriesMean(), name="mean_plugin", distribution=DIST)
    e = Experiment.from_columns(["p"], callpath=["gone"] * 5 + ["ok"] * 5, metric="time",
                                coordinates=[[1], [2], [4], [8], [16]] * 2, value=[math.nan] * 5 + [1, 2, 3, 4, 5])
    with pytest.warns(extrap_plugins.ExtrapWarning) as caught:
        models = extrap_plugins.model(e, "series-mean", host=broken, executor="serial")
    gone, ok = models.get("gone", "time"), models.get("ok", "time")
    assert math.isnan(gone.constant) and gone.terms == () and gone.modeler == "series-mean"
    assert [str(w.message) for w in caught] == ["gone [time]: no finite values: no model can be made"]
    assert ok.constant == 3.0
