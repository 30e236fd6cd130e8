"""The plugin host: built-ins, collisions, broken plugins, real entry points, and drift tests."""

import inspect
import pathlib
import sys
import textwrap
import types

import pytest

import extrap_plugins
from extrap_plugins import ExporterInfo, ModelerInfo, ReaderInfo, hookimpl, hookspecs
from extrap_plugins.errors import PluginError
from extrap_plugins.plugins import BUILTIN_DISTRIBUTION, PluginHost, PluginLoadWarning
from plugin_helpers import Mean

ROOT = pathlib.Path(__file__).resolve().parents[1]
HOOKS = sorted(name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("extrap_"))


def plugin_module(name, **hooks):
    module = types.ModuleType(name)
    for hook_name, result in hooks.items():
        setattr(module, hook_name, hookimpl(lambda result=result: result))
    return module


def fake_distribution(tmp_path, monkeypatch, name, entry_points, modules):
    """Put a real installed distribution (dist-info with entry points) on sys.path."""
    dist_info = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (dist_info / "entry_points.txt").write_text(f"[extrap_plugins]\n{lines}\n")
    for module_name, source in modules.items():
        (tmp_path / f"{module_name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))


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


def test_two_plugins_with_the_same_name_is_an_error_naming_both():
    host = PluginHost(autoload=False)
    host.register(plugin_module("other", extrap_exporters=[ExporterInfo("json", lambda *a: None)]), "other", "other-dist")
    with pytest.raises(PluginError) as error:
        _ = host.exporters
    assert str(error.value) == ("two plugins register the exporter 'json': extrap_plugins.exporters.json_exporter "
                                "(extrap-plugins) and other (other-dist)")


def test_a_hook_returning_the_wrong_type_is_an_error():
    host = PluginHost(autoload=False)
    host.register(plugin_module("bad", extrap_modelers=["not an info"]), "bad", "bad-dist")
    with pytest.raises(PluginError, match="plugin bad \\(bad-dist\\): extrap_modelers must return ModelerInfo objects, got str"):
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
], ids=["empty", "blank", "spaces", "not-text", "factory", "read", "sniff", "patterns", "export", "kind"])
def test_a_bad_registration_is_refused_naming_the_plugin(hook, info, problem):
    host = PluginHost(autoload=False)
    host.register(plugin_module("bad", **{hook: [info]}), "bad", "bad-dist")
    table = {"extrap_readers": "readers", "extrap_modelers": "modelers", "extrap_exporters": "exporters"}[hook]
    with pytest.raises(PluginError) as error:
        getattr(host, table)
    assert str(error.value) == f"plugin bad (bad-dist): {hook} {problem}"


@pytest.mark.parametrize("returned, got", [({"mean": ModelerInfo("mean", Mean)}, "dict"), ("mean", "str"),
                                           (ModelerInfo("mean", Mean), "ModelerInfo")])
def test_a_hook_returning_something_other_than_a_list_is_an_error_naming_what(returned, got):
    host = PluginHost(autoload=False)
    host.register(plugin_module("bad", extrap_modelers=returned), "bad", "bad-dist")
    with pytest.raises(PluginError) as error:
        _ = host.modelers
    assert str(error.value) == f"plugin bad (bad-dist): extrap_modelers must return a list of ModelerInfo objects, got {got}"


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


def test_every_hook_has_a_test():
    tests = {name for name, _ in inspect.getmembers(sys.modules[__name__], inspect.isfunction)}
    for name in HOOKS:
        assert any(t.startswith(f"test_hook_{name}") for t in tests), f"hook {name} has no test_hook_{name}* test"


def test_every_hook_spec_is_typed_and_documented():
    for name in HOOKS:
        spec = getattr(hookspecs, name)
        assert spec.__doc__ and "Returns" in spec.__doc__
        assert inspect.signature(spec).return_annotation != inspect.Signature.empty
