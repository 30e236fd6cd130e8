"""The plugin host: built-ins, collisions, broken plugins, real entry points, and drift tests."""

import inspect
import pathlib
import re
import sys
import types
import warnings
from importlib import metadata

import pytest

import extrap_plugins
from extrap_plugins import ExporterInfo, ModelerInfo, ReaderInfo, hookimpl, hookspecs
from extrap_plugins.cli import main
from extrap_plugins.errors import PluginError
from extrap_plugins.plugins import BUILTIN_DISTRIBUTION, PluginHost, PluginLoadWarning, _taken_by_commands, set_host
from plugin_helpers import Mean, cli, fake_distribution, installed, third_party_rows  # noqa: F401 - installed: a fixture

ROOT = pathlib.Path(__file__).resolve().parents[1]
HOOKS = sorted(name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("extrap_"))


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    """No strictness or switched-off plugins from the environment the tests run in."""
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    monkeypatch.delenv("EXTRAP_PLUGINS_DISABLE", raising=False)


def plugin_module(name, **hooks):
    module = types.ModuleType(name)
    for hook_name, result in hooks.items():
        setattr(module, hook_name, hookimpl(lambda result=result: result))
    return module


def test_builtins_register_through_the_hooks_like_third_parties():
    host = PluginHost(autoload=False)
    assert {"json", "text", "csv"} <= set(host.exporters)
    assert "default" in host.modelers
    for table in (host.readers, host.modelers, host.exporters):
        for registered in table.values():
            assert registered.distribution == BUILTIN_DISTRIBUTION
            assert registered.plugin.startswith("extrap_plugins.")


def test_hook_extrap_readers_registers_a_reader(tmp_path):
    def read(path, options):
        return extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                                      coordinates=[[1], [2], [3], [4], [5]],
                                                      value=[1, 2, 3, 4, 5], source=str(path))

    host = PluginHost(autoload=False)
    host.register(plugin_module("mine", extrap_readers=[ReaderInfo("numbers", read, patterns=("*.nums",))]), "mine", "my-dist")
    (tmp_path / "a.nums").write_text("")
    experiment = extrap_plugins.read(tmp_path / "a.nums", host=host)
    assert experiment.reader == "numbers" and len(experiment) == 5
    assert host.readers["numbers"].distribution == "my-dist"


def test_hook_extrap_modelers_registers_a_modeler():
    host = PluginHost(autoload=False)
    host.register(plugin_module("mine", extrap_modelers=[ModelerInfo("mean", Mean)]), "mine", "my-dist")
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                               coordinates=[[1], [2], [3]], value=[1.0, 2.0, 6.0])
    (m,) = extrap_plugins.model(e, "mean", host=host)
    assert m.function == "3.0" and m.modeler == "mean" and m.points == 3
    assert m.quality.rss == pytest.approx(4 + 1 + 9)


def test_hook_extrap_exporters_registers_an_exporter():
    def export(model_set, out, options):
        out.write(f"{len(model_set)} models\n")

    host = PluginHost(autoload=False)
    host.register(plugin_module("mine", extrap_exporters=[ExporterInfo("count", export)]), "mine", "my-dist")
    assert extrap_plugins.export(extrap_plugins.ModelSet(("p",), []), "count", host=host) == "0 models\n"


def test_a_third_party_name_that_is_a_built_in_one_is_a_warning_and_the_built_in_keeps_it():
    host = PluginHost(autoload=False)
    host.register(plugin_module("other", extrap_exporters=[ExporterInfo("json", lambda *a: None),
                                                            ExporterInfo("mine", lambda *a: None)]), "other", "other-dist")
    with pytest.warns(PluginLoadWarning) as caught:
        exporters = host.exporters
    assert [str(w.message) for w in caught] == [
        "plugin other (other-dist): its exporter 'json' is not used: a built-in exporter has that name"]
    assert exporters["json"].distribution == BUILTIN_DISTRIBUTION
    assert host.exporter("json") is exporters["json"].info
    assert exporters["mine"].distribution == "other-dist"  # the rest of that plugin is used


def test_two_third_party_plugins_with_the_same_name_are_a_warning_and_neither_is_used():
    host = PluginHost(autoload=False)
    host.register(plugin_module("a", extrap_exporters=[ExporterInfo("md", lambda *a: None),
                                                        ExporterInfo("a-only", lambda *a: None)]), "a", "a-dist")
    host.register(plugin_module("b", extrap_exporters=[ExporterInfo("md", lambda *a: None),
                                                        ExporterInfo("tab", lambda *a: None)]), "b", "b-dist")
    host.register(plugin_module("c", extrap_exporters=[ExporterInfo("tab", lambda *a: None),
                                                        ExporterInfo("md", lambda *a: None)]), "c", "c-dist")
    with pytest.warns(PluginLoadWarning) as caught:
        exporters = host.exporters
    md = ("three plugins register the exporter 'md': a (a-dist), b (b-dist) and c (c-dist); none is used (uninstall "
          "one, or switch one off with EXTRAP_PLUGINS_DISABLE=DISTRIBUTION)")
    tab = ("two plugins register the exporter 'tab': b (b-dist) and c (c-dist); neither is used (uninstall one, or "
           "switch one off with EXTRAP_PLUGINS_DISABLE=DISTRIBUTION)")
    assert [str(w.message) for w in caught] == [md, tab]  # every clash, not only the first
    assert "md" not in exporters and "tab" not in exporters and exporters["a-only"].distribution == "a-dist"
    with pytest.raises(PluginError) as error:  # asking for a clashing name is the error
        host.exporter("tab")
    assert str(error.value) == tab


def test_a_name_registered_twice_by_one_plugin_says_so_and_sets_its_registrations_aside():
    host = PluginHost(autoload=False)
    host.register(plugin_module("twice", extrap_modelers=[ModelerInfo("dup", Mean), ModelerInfo("dup", Mean),
                                                           ModelerInfo("single", Mean)]), "twice", "twice-dist")
    message = ("plugin twice (twice-dist): extrap_modelers returned the modeler 'dup' more than once; none of the "
               "modelers it registers is used")
    with pytest.warns(PluginLoadWarning) as caught:
        modelers = host.modelers
    assert [str(w.message) for w in caught] == [message]
    assert "dup" not in modelers and "single" not in modelers and "default" in modelers
    for name in ("dup", "single"):
        with pytest.raises(PluginError) as error:
            host.modeler(name)
        assert str(error.value) == message


def test_strict_mode_makes_set_aside_registrations_an_error_naming_all(monkeypatch):
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    host = PluginHost(autoload=False)
    host.register(plugin_module("other", extrap_exporters=[ExporterInfo("json", lambda *a: None)]), "other", "other-dist")
    host.register(plugin_module("bad", extrap_exporters={"x": 1}), "bad", "bad-dist")
    with pytest.raises(PluginError) as error:
        _ = host.exporters
    assert str(error.value) == (
        "plugin bad (bad-dist): extrap_exporters must return a list of ExporterInfo objects, got dict; none of the "
        "exporters it registers is used; plugin other (other-dist): its exporter 'json' is not used: a built-in "
        "exporter has that name")


def test_a_hook_returning_the_wrong_type_is_a_warning_and_asking_for_its_names_an_error():
    host = PluginHost(autoload=False)
    host.register(plugin_module("bad", extrap_modelers=["not an info", ModelerInfo("mean", Mean)]), "bad", "bad-dist")
    message = ("plugin bad (bad-dist): extrap_modelers must return ModelerInfo objects, got str; none of the modelers "
               "it registers is used")
    with pytest.warns(PluginLoadWarning) as caught:
        assert "mean" not in host.modelers
    assert [str(w.message) for w in caught] == [message]
    with pytest.raises(PluginError) as error:
        host.modeler("mean")
    assert str(error.value) == message


def test_a_broken_built_in_plugin_is_an_error_at_once():
    host = PluginHost(autoload=False)
    host.register(plugin_module("ours", extrap_modelers=[ModelerInfo("mine", 42)]), "ours")
    with pytest.raises(PluginError, match="^plugin ours \\(extrap-plugins\\): extrap_modelers returned the modeler "
                                          "'mine' with a factory that is not callable \\(got int\\)"):
        _ = host.modelers


def read_nothing(path, options):
    raise NotImplementedError


@pytest.mark.parametrize("hook, info, problem", [
    ("extrap_readers", ReaderInfo("", read_nothing),
     "returned a reader with the name '': a name must be non-empty text without spaces around it"),
    ("extrap_readers", ReaderInfo("  ", read_nothing),
     "returned a reader with the name '  ': a name must be non-empty text without spaces around it"),
    ("extrap_exporters", ExporterInfo(" text", lambda *a: None),
     "returned an exporter with the name ' text': a name must be non-empty text without spaces around it"),
    ("extrap_modelers", ModelerInfo(None, Mean),
     "returned a modeler with the name None: a name must be non-empty text without spaces around it"),
    ("extrap_modelers", ModelerInfo("forty-two", 42),
     "returned the modeler 'forty-two' with a factory that is not callable (got int)"),
    ("extrap_readers", ReaderInfo("r", None), "returned the reader 'r' with a read that is not callable (got NoneType)"),
    ("extrap_readers", ReaderInfo("r", read_nothing, sniff="*.r"),
     "returned the reader 'r' with a sniff that is not callable (got str)"),
    ("extrap_readers", ReaderInfo("r", read_nothing, patterns="*.r"),
     "returned the reader 'r' with patterns '*.r': expected a tuple of file-name globs such as ('*.csv',)"),
    ("extrap_exporters", ExporterInfo("e", "export"),
     "returned the exporter 'e' with an export that is not callable (got str)"),
    ("extrap_exporters", ExporterInfo("e", lambda *a: None, kind="file"),
     "returned the exporter 'e' of kind 'file': expected 'text' or 'path'"),
    ("extrap_exporters", ExporterInfo("e", lambda *a: None, extensions=".pdf"),
     "returned the exporter 'e' with extensions '.pdf': expected a tuple of file extensions such as ('.svg', '.pdf')"),
], ids=["empty", "blank", "spaces", "not-text", "factory", "read", "sniff", "patterns", "export", "kind",
        "extensions"])
def test_a_bad_registration_is_set_aside_naming_the_plugin(hook, info, problem):
    host = PluginHost(autoload=False)
    host.register(plugin_module("bad", **{hook: [info]}), "bad", "bad-dist")
    kind = {"extrap_readers": "reader", "extrap_modelers": "modeler", "extrap_exporters": "exporter"}[hook]
    message = f"plugin bad (bad-dist): {hook} {problem}; none of the {kind}s it registers is used"
    with pytest.warns(PluginLoadWarning) as caught:
        table = getattr(host, f"{kind}s")
    assert [str(w.message) for w in caught] == [message]
    assert all(registered.distribution == BUILTIN_DISTRIBUTION for registered in table.values())
    assert [(p.kind, p.status, p.message) for p in host.problems] == [(kind, "broken", message)]
    if isinstance(info.name, str) and info.name.strip() == info.name and info.name:
        with pytest.raises(PluginError) as error:
            getattr(host, kind)(info.name)
        assert str(error.value) == message


@pytest.mark.parametrize("returned, got", [({"mean": ModelerInfo("mean", Mean)}, "dict"), ("mean", "str"),
                                           (ModelerInfo("mean", Mean), "ModelerInfo")])
def test_a_hook_returning_something_other_than_a_list_is_a_warning_naming_what(returned, got):
    host = PluginHost(autoload=False)
    host.register(plugin_module("bad", extrap_modelers=returned), "bad", "bad-dist")
    with pytest.warns(PluginLoadWarning) as caught:
        assert "mean" not in host.modelers
    assert [str(w.message) for w in caught] == [
        f"plugin bad (bad-dist): extrap_modelers must return a list of ModelerInfo objects, got {got}; none of the "
        "modelers it registers is used"]


def test_a_reader_of_runs_needs_no_read():
    host = PluginHost(autoload=False)
    runs = ReaderInfo("runs", None, parts=lambda path, options: [path], read_part=read_nothing)
    host.register(plugin_module("runs", extrap_readers=[runs]), "runs", "runs-dist")
    assert host.readers["runs"].info is runs


def test_a_hook_returning_none_or_a_tuple_registers_what_it_holds():
    host = PluginHost(autoload=False)
    host.register(plugin_module("none", extrap_modelers=None), "none", "none-dist")
    host.register(plugin_module("tuple", extrap_modelers=(ModelerInfo("mean", Mean),)), "tuple", "tuple-dist")
    assert host.modelers["mean"].distribution == "tuple-dist"


def test_entry_point_plugins_are_discovered(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "good-plugin", {"good": "good_plugin"}, {"good_plugin": """
        from extrap_plugins import ExporterInfo, hookimpl
        @hookimpl
        def extrap_exporters():
            return [ExporterInfo("good", lambda model_set, out, options: out.write("good"))]
        """})
    host = PluginHost(autoload=True)
    assert host.exporters["good"].distribution == "good-plugin"
    assert host.exporters["good"].plugin == "good"


def test_a_plugin_that_fails_to_import_is_a_warning_and_is_skipped(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "broken-plugin", {"broken": "broken_plugin"},
                      {"broken_plugin": "raise ImportError('needs libfoo')\n"})
    monkeypatch.delenv("EXTRAP_PLUGINS_STRICT", raising=False)
    with pytest.warns(PluginLoadWarning) as caught:
        host = PluginHost(autoload=True)
    assert str(caught[0].message) == ("plugin 'broken' from distribution 'broken-plugin' failed to load: "
                                      "ImportError: needs libfoo")
    assert "default" in host.modelers


def test_strict_mode_makes_a_broken_plugin_an_error(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "broken-plugin", {"broken": "broken_plugin"},
                      {"broken_plugin": "raise ImportError('needs libfoo')\n"})
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    with pytest.raises(PluginError, match="plugin 'broken' from distribution 'broken-plugin' failed to load"):
        PluginHost(autoload=True)


# ------------------------------------------------------------------ real entry points, through the CLI
EXAMPLE = ROOT / "examples" / "stencil.jsonl"

EXPORTER_MODULE = """
    from extrap_plugins import ExporterInfo, hookimpl
    @hookimpl
    def extrap_exporters():
        return [ExporterInfo("{name}", lambda model_set, out, options: out.write("{name}: %d models\\n" % len(model_set)),
                             "the {name} exporter")]
    """

PLUG_MODULE = """
    import numpy as np
    from extrap_plugins import ExporterInfo, ModelerInfo, ReaderInfo, hookimpl

    def read(path, options):
        raise NotImplementedError

    class Fixed:
        def __init__(self, parameters=("p",), form="linear", param=None):
            self.form, self.param = form, param

        def fit(self, X, y):
            self.constant_, self.terms_ = float(np.mean(y)), []
            return self

        def predict(self, X):
            return np.full(len(X), self.constant_)

    class Sloppy(Fixed):
        def __init__(self, factor=1.0, **ignored):
            pass

    class Strict(Fixed):
        def __init__(self, factor=1.0):
            pass

    def export(model_set, out, options):
        out.write("table\\n")

    @hookimpl
    def extrap_readers():
        return [ReaderInfo("ptab", read, "a plugin's own table", patterns=("*.ptab",),
                           options={"sep": "call path separator (default .)", "scale": "factor for every value"})]

    @hookimpl
    def extrap_modelers():
        return [ModelerInfo("fixed", Fixed, "y = c0 + c1*g(x), fixed g",
                            options={"form": "g: linear or log (default linear)",
                                     "param": "the parameter g is a function of (default: the first)"}),
                ModelerInfo("sloppy", Sloppy, "documents less than it takes", options={"colour": "the colour"}),
                ModelerInfo("strict", Strict, "documents what it does not take", options={"colour": "the colour"})]

    @hookimpl
    def extrap_exporters():
        return [ExporterInfo("ptab", export, "the models as a table\\nof text", options={"digits": "significant digits"})]
    """


def install_ep_pair(tmp_path, monkeypatch, a="hunt-epa", b="hunt-epb"):
    """Two unrelated distributions that both call their entry point ``plugin`` (exporters epa and epb)."""
    for dist, module, name in ((a, "hunt_epa", "epa"), (b, "hunt_epb", "epb")):
        fake_distribution(tmp_path / dist, monkeypatch, dist, {"plugin": module},
                          {module: EXPORTER_MODULE.format(name=name)})


@pytest.mark.usefixtures("installed")
def test_entry_points_of_one_name_from_two_distributions_are_both_loaded(tmp_path, monkeypatch, capsys):
    install_ep_pair(tmp_path, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        host = PluginHost(autoload=True)
        assert (host.exporters["epa"].distribution, host.exporters["epb"].distribution) == ("hunt-epa", "hunt-epb")
    assert host.exporters["epb"].plugin == "plugin"  # messages name it by its entry point, with its distribution
    assert host.manager.has_plugin("hunt-epa:plugin") and host.manager.has_plugin("hunt-epb:plugin")
    status, out, err = cli(capsys, "plugins")
    assert (status, err) == (0, "")
    assert third_party_rows(out) == [["exporter", "epa", "hunt-epa", "the epa exporter"],
                                     ["exporter", "epb", "hunt-epb", "the epb exporter"]]
    status, out, err = cli(capsys, "model", EXAMPLE, "--export", "epb", "--progress", "off")
    assert (status, out) == (0, "epb: 7 models\n")


def test_the_same_distribution_twice_on_the_path_is_loaded_once(tmp_path, monkeypatch):
    for folder in ("first", "second"):
        fake_distribution(tmp_path / folder, monkeypatch, "dup-plugin", {"dup": "dup_plugin"},
                          {"dup_plugin": EXPORTER_MODULE.format(name="dup")})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        host = PluginHost(autoload=True)
        assert host.exporters["dup"].distribution == "dup-plugin"
    assert [name for name in host.distributions if "dup" in name] == ["dup-plugin:dup"]
    assert host.problems == []


@pytest.mark.parametrize("module, owner", [
    ("extrap_plugins.modelers", "a built-in plugin"),
    ("hunt_same", "plugin same from distribution 'hunt-new'"),
])
@pytest.mark.usefixtures("installed")
def test_an_entry_point_naming_a_plugin_loaded_already_is_one_line_naming_both(tmp_path, monkeypatch, capsys,
                                                                              module, owner):
    # (a renamed project leaves its old dist-info behind; pluggy refused the module with a line of several KB
    # listing every plugin registered)
    fake_distribution(tmp_path / "old", monkeypatch, "hunt-old", {"old": module}, {})
    fake_distribution(tmp_path / "new", monkeypatch, "hunt-new", {"same": "hunt_same"},  # (first on the path)
                      {"hunt_same": EXPORTER_MODULE.format(name="same")})
    message = f"plugin 'old' from distribution 'hunt-old' is not loaded: it is {module}, loaded already as {owner}"
    status, out, err = cli(capsys, "plugins")
    assert (status, err) == (0, f"extrap-plugins: warning: {message}\n")
    assert ["plugin", "old", "hunt-old", f"NOT USED: it is {module}, loaded already as {owner}"] in \
        third_party_rows(out)
    status, out, err = cli(capsys, "model", EXAMPLE, "--export", "same", "--progress", "off")
    assert (status, out, err) == (0, "same: 7 models\n", f"extrap-plugins: warning: {message}\n")
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    assert cli(capsys, "plugins")[::2] == (3, f"extrap-plugins: error: {message}\n")


@pytest.mark.parametrize("disable", ["Hunt_EPB", "hunt.epb", " hunt-epb:plugin ,"])
@pytest.mark.usefixtures("installed")
def test_extrap_plugins_disable_switches_off_a_distribution_or_one_entry_point(tmp_path, monkeypatch, capsys, disable):
    install_ep_pair(tmp_path, monkeypatch)
    monkeypatch.setenv("EXTRAP_PLUGINS_DISABLE", disable)
    status, out, err = cli(capsys, "plugins")
    assert (status, err) == (0, "")
    assert third_party_rows(out) == [["exporter", "epa", "hunt-epa", "the epa exporter"],
                                     ["plugin", "plugin", "hunt-epb", "SWITCHED OFF: switched off by "
                                                                      "EXTRAP_PLUGINS_DISABLE"]]
    assert "hunt_epb" not in sys.modules  # not even imported
    status, out, err = cli(capsys, "model", EXAMPLE, "--export", "epb", "--progress", "off")
    assert status == 2, err
    assert err.startswith("extrap-plugins: error: unknown exporter 'epb'; the exporters are: ")


@pytest.mark.usefixtures("installed")
def test_extrap_plugins_disable_silences_a_plugin_that_breaks_at_import(tmp_path, monkeypatch, capsys):
    fake_distribution(tmp_path, monkeypatch, "broken-plugin", {"broken": "broken_at_import"},
                      {"broken_at_import": "raise ImportError('needs libfoo')\n"})
    monkeypatch.setenv("EXTRAP_PLUGINS_DISABLE", "broken-plugin")
    monkeypatch.setenv("EXTRAP_PLUGINS_STRICT", "1")
    status, out, err = cli(capsys, "model", EXAMPLE, "--progress", "off", "--callpath", "main")
    assert (status, err) == (0, "")
    assert "broken_at_import" not in sys.modules


@pytest.mark.parametrize("disable, why", [
    ("nosuch", "the installed plugin distributions are: {installed}"),
    ("extrap_plugins", "the built-in plugins cannot be switched off"),
])
@pytest.mark.usefixtures("installed")
def test_extrap_plugins_disable_naming_no_installed_plugin_is_a_warning(tmp_path, monkeypatch, capsys,
                                                                       disable, why):
    install_ep_pair(tmp_path, monkeypatch)
    monkeypatch.setenv("EXTRAP_PLUGINS_DISABLE", disable)
    others = {re.sub(r"[-_.]+", "-", e.dist.metadata["name"]).lower()
              for e in metadata.entry_points(group="extrap_plugins")}
    status, out, err = cli(capsys, "plugins")
    normalized = re.sub(r"[-_.]+", "-", disable).lower()
    assert (status, err) == (0, f"extrap-plugins: warning: EXTRAP_PLUGINS_DISABLE names {normalized!r}, which is no "
                                f"installed plugin; {why.format(installed=', '.join(sorted(others)))}\n")
    assert [row[1] for row in third_party_rows(out)] == ["epa", "epb"]


@pytest.mark.usefixtures("installed")
def test_plugins_name_shows_each_kind_with_its_distribution_description_and_option_help(tmp_path, monkeypatch,
                                                                                        capsys):
    fake_distribution(tmp_path, monkeypatch, "hunt-plug", {"hunt_plug": "hunt_plug_mod"},
                      {"hunt_plug_mod": PLUG_MODULE})
    assert cli(capsys, "plugins", "ptab") == (0, """\
reader ptab
  provided by: hunt-plug (plugin hunt_plug)
  description: a plugin's own table
  options (--reader-option KEY=VALUE):
    sep    call path separator (default .)
    scale  factor for every value

exporter ptab
  provided by: hunt-plug (plugin hunt_plug)
  description: the models as a table of text
  options (--export-option KEY=VALUE):
    digits  significant digits
  and the options of every exporter: target, sort, values, level
""", "")
    assert cli(capsys, "plugins", "fixed") == (0, """\
modeler fixed
  provided by: hunt-plug (plugin hunt_plug)
  description: y = c0 + c1*g(x), fixed g
  options (--option KEY=VALUE):
    form   g: linear or log (default linear)
    param  the parameter g is a function of (default: the first)
""", "")


def test_plugins_name_of_a_built_in_shows_its_options(host, capsys):
    reader, exporter = host.readers["csv"].info, host.exporters["csv"].info
    width = max(map(len, reader.options))
    expected = "\n".join([
        "reader csv", "  provided by: extrap-plugins (plugin extrap_plugins.readers.csv_reader)",
        f"  description: {reader.description}", "  options (--reader-option KEY=VALUE):",
        *(f"    {name.ljust(width)}  {text}" for name, text in reader.options.items()), "",
        "exporter csv", "  provided by: extrap-plugins (plugin extrap_plugins.exporters.csv_exporter)",
        f"  description: {exporter.description}", "  options: none",
        "  and the options of every exporter: target, sort, values, level", ""])
    assert cli_on(host, capsys, "plugins", "csv") == (0, expected, "")


def cli_on(host, capsys, *argv):
    """``extrap-plugins ARGV`` with ``host`` as the process-wide host."""
    set_host(host)
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("name, warning, shown", [
    ("sloppy", "its factory takes 'factor', which ModelerInfo.options does not list",
     ["    colour  the colour", "    factor  (not documented)"]),
    ("strict", "ModelerInfo.options lists 'colour', which its factory does not take; its factory takes 'factor', "
               "which ModelerInfo.options does not list",
     ["    colour  the colour", "    factor  (not documented)"]),
])
@pytest.mark.usefixtures("installed")
def test_modeler_options_that_disagree_with_the_factory_are_a_warning_naming_the_plugin(tmp_path, monkeypatch,
                                                                                       capsys, name,
                                                                                       warning, shown):
    fake_distribution(tmp_path, monkeypatch, "hunt-plug", {"hunt_plug": "hunt_plug_mod"},
                      {"hunt_plug_mod": PLUG_MODULE})
    expected = (f"extrap-plugins: warning: modeler {name!r} (plugin hunt_plug from distribution 'hunt-plug'): "
                f"{warning}\n")
    status, out, err = cli(capsys, "plugins", name)
    assert (status, err) == (0, expected)
    assert out.splitlines()[-2:] == shown
    status, out, err = cli(capsys, "plugins")
    assert status == 0
    assert set(err.splitlines()) == {
        "extrap-plugins: warning: modeler 'sloppy' (plugin hunt_plug from distribution 'hunt-plug'): its factory "
        "takes 'factor', which ModelerInfo.options does not list",
        "extrap-plugins: warning: modeler 'strict' (plugin hunt_plug from distribution 'hunt-plug'): "
        "ModelerInfo.options lists 'colour', which its factory does not take; its factory takes 'factor', which "
        "ModelerInfo.options does not list"}


class Tuned(Mean):
    def __init__(self, tolerance=0.1, level=2, k=1):
        pass


def test_modeler_options_a_command_takes_itself_are_a_warning_naming_the_commands():
    # (suggest --option tolerance=0.2 was refused: "'tolerance' is not an option here; use --tolerance", which sets
    # suggest's own tolerance: the plugin's option could not be given at all)
    host = PluginHost(autoload=False)
    host.register(plugin_module("tuned", extrap_modelers=[ModelerInfo("tuned", Tuned, "", dict.fromkeys(
        ["tolerance", "level", "k"], "help"))]), "tuned", "tuned-dist")
    assert host.modeler_options_problem("tuned") == (
        "modeler 'tuned' (plugin tuned from distribution 'tuned-dist'): its options 'tolerance' and 'level' cannot "
        "be given to suggest, efficiency and compare, which take arguments of those names themselves; name them "
        "otherwise")
    builtins = PluginHost(autoload=False)  # (not checked by the host: it would import every command)
    assert [_taken_by_commands(builtins.modeler_options(name) or ()) for name in builtins.modelers] == \
        [([], [])] * len(builtins.modelers)


def test_every_built_in_modeler_documents_exactly_the_options_its_factory_takes():
    host = PluginHost(autoload=False)
    assert {name: host.modeler_options_problem(name) for name in host.modelers} == dict.fromkeys(host.modelers)


@pytest.mark.parametrize("name, message", [
    ("fixd", "no reader, modeler or exporter is named 'fixd'; did you mean 'fixed'?"),
    ("jsn", "no reader, modeler or exporter is named 'jsn'; did you mean 'json'?"),
])
@pytest.mark.usefixtures("installed")
def test_plugins_name_unknown_is_bad_input_with_close_names(tmp_path, monkeypatch, capsys, name, message):
    fake_distribution(tmp_path, monkeypatch, "hunt-plug", {"hunt_plug": "hunt_plug_mod"},
                      {"hunt_plug_mod": PLUG_MODULE})
    assert cli(capsys, "plugins", name) == (2, "", f"extrap-plugins: error: {message}\n")


def test_plugins_name_unknown_and_far_from_every_name_lists_them(host, capsys):
    names = sorted(set(host.readers) | set(host.modelers) | set(host.exporters))
    assert cli_on(host, capsys, "plugins", "zzzzzz") == (
        2, "", f"extrap-plugins: error: no reader, modeler or exporter is named 'zzzzzz'; the names are: "
               f"{', '.join(names)}\n")


def test_a_plugin_named_by_no_string_is_bad_input(host):
    # None or a list crashed the lookup (AttributeError: 'NoneType' object has no attribute 'strip')
    from extrap_plugins.errors import InputError

    with pytest.raises(InputError, match=r"^a modeler is named by a string, got the list \['default'\]; the "
                                         r"modelers are: default, "):
        host.modeler(["default"])
    with pytest.raises(InputError, match="^an exporter is named by a string, got None; the exporters are: "):
        host.exporter(None)


def test_unknown_modeler_option_lists_the_known_ones(host):
    e = extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                               coordinates=[[1], [2], [3], [4], [5]], value=[1, 2, 3, 4, 5])

    class Opt:
        def __init__(self, terms=1):
            self.terms = terms

    host.register(plugin_module("opt", extrap_modelers=[ModelerInfo("opt", Opt)]), "opt")
    with pytest.raises(extrap_plugins.InputError, match="modeler 'opt' has no option 'color'; its options are: terms"):
        extrap_plugins.model(e, "opt", color="red")


# ------------------------------------------------------------------ drift tests
def test_every_hook_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for name in HOOKS:
        assert f"`{name}`" in readme, f"hook {name} is not documented in README.md"


def test_the_readme_shows_plugins_as_the_command_line_takes_it():
    """``plugins NAME`` was added, and the README's synopsis still showed ``extrap-plugins plugins`` alone."""
    from extrap_plugins.cli import build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    (name,) = [a for a in commands["plugins"]._actions if a.dest == "name"]
    assert (name.nargs, name.metavar) == ("?", "NAME")
    synopsis = (ROOT / "README.md").read_text().split("## The command line", 1)[1].split("```")[1]
    assert [line for line in synopsis.splitlines() if line.startswith("extrap-plugins plugins")] == [
        "extrap-plugins plugins [NAME]"]


def test_every_hook_has_a_test():
    tests = {name for name, _ in inspect.getmembers(sys.modules[__name__], inspect.isfunction)}
    for name in HOOKS:
        assert any(t.startswith(f"test_hook_{name}") for t in tests), f"hook {name} has no test_hook_{name}* test"


def test_every_hook_spec_is_typed_and_documented():
    for name in HOOKS:
        spec = getattr(hookspecs, name)
        assert spec.__doc__ and "Returns" in spec.__doc__
        assert inspect.signature(spec).return_annotation != inspect.Signature.empty


def test_plugins_name_says_which_options_the_command_line_gives_by_their_own_flag(host, capsys):
    """``--reader-option metrics=time`` is refused ("use --metric"): the listing says so beside the option."""
    status, out, _ = cli_on(host, capsys, "plugins", "cube")
    assert status == 0
    assert "    metrics      only these metrics (comma-separated); on the command line --metric" in out.splitlines()
    status, out, _ = cli_on(host, capsys, "plugins", "default")
    assert any(line.split()[:1] == ["measure"] and line.endswith("; on the command line --measure")
               for line in out.splitlines())
