"""The text of the compare report as a terminal shows it: the level as given, call paths shortened as in the
text export, ratios headed with the point they are at."""

import extrap_plugins
from extrap_plugins import Experiment

P = [4.0, 8.0, 16.0, 32.0, 64.0]
LONG = "main->" + "->".join(f"level{k}_with_a_long_name" for k in range(12))


def experiment(functions):
    return Experiment.from_columns(["p"], callpath=[name for name in functions for _ in P], metric="time",
                                   coordinates=[[p] for _ in functions for p in P],
                                   value=[f(p) for f in functions.values() for p in P])


def comparison(**options):
    a = experiment({"main": lambda p: 100 + p, LONG: lambda p: 2 * p})
    b = experiment({"main": lambda p: 20 + 2 * p, LONG: lambda p: 3 * p})
    return extrap_plugins.compare(a, b, labels=("v1", "v2"), **options)


def test_the_level_is_said_as_given():
    # --level 97.5% said "the 98% prediction intervals at the target do not overlap"
    lines = extrap_plugins.export_report(comparison(target="p=1024", level=0.975), "text").splitlines()
    assert lines[2] == "significant: the 97.5% prediction intervals at the target do not overlap"


def test_long_call_paths_are_shortened_and_ratios_say_where_they_are():
    # the table was as wide as the longest call path (300 characters here), and "v2/v1 now" did not say where now was
    text = extrap_plugins.export_report(comparison(target="p=1024"), "text")
    lines = text.splitlines()
    assert "v2/v1 at p=64" in lines[4] and "v2/v1 at p=1024" in lines[4]
    shown = "main->…->level9_with_a_long_name->level10_with_a_long_name->level11_with_a_long_name"
    assert sorted(line.split()[1] for line in lines[6:8]) == ["main", shown]
    assert f"  {shown} [time]: v1: 2 · p   v2: 3 · p" in lines
    assert LONG not in text and max(map(len, lines)) < 200
    assert LONG in extrap_plugins.export_report(comparison(target="p=1024"), "csv")
    # the target at the largest point measured: the two columns are still told apart
    same = extrap_plugins.export_report(comparison(target="p=64"), "text").splitlines()[4]
    assert "v2/v1 at p=64  " in same and "v2/v1 at p=64 (target)" in same


def test_the_efficiency_report_shortens_long_call_paths_and_aligns_wide_characters(tmp_path):
    # its overhead table was as wide as the longest call path, and a Japanese region pushed its row's columns right
    from pathlib import Path

    example = Path(__file__).parents[2] / "examples" / "isoefficiency.csv"
    path = tmp_path / "iso.csv"
    path.write_text(example.read_text().replace("main->allreduce", LONG).replace("main->barrier", "main->同期"))
    lines = extrap_plugins.export_report(extrap_plugins.efficiency(path, size="n", target=1024), "text").splitlines()
    table = lines[lines.index("call path" + " " * 77 + "own share    with children    overhead growth    overhead"
                              "    work    E"):]
    shown = "main->…->level9_with_a_long_name->level10_with_a_long_name->level11_with_a_long_name"
    assert table[2].startswith(f"{shown}  66.7%") and table[3].startswith("main->同期" + " " * 74 + "  33.3%")
