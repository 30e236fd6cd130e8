"""The command line, in process (exact messages and exit codes) and as a real subprocess."""

import json
import os
import pathlib
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import ModelerInfo, ReaderInfo, hookimpl
from extrap_plugins.cli import ExitStatus, build_parser, main, parse_options

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "stencil.jsonl"


def run_cli(*args, env=None):
    environment = {**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "extrap_plugins", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=environment, timeout=120)


@pytest.fixture
def numbers_reader(host, tmp_path):
    """A reader for ``*.nums`` files: one 'p value' pair per line."""

    def read(path, options):
        p, value = np.loadtxt(path, ndmin=2).T
        return extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time",
                                                      coordinates=p[:, None], value=value, source=str(path))

    plugin = types.ModuleType("numbers")
    plugin.extrap_readers = hookimpl(lambda: [ReaderInfo("numbers", read, patterns=("*.nums",))])
    host.register(plugin, "numbers")
    path = tmp_path / "linear.nums"
    path.write_text("".join(f"{p} {3 + 2 * p}\n" for p in (1, 2, 4, 8, 16)))
    return path


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"extrap-plugins {extrap_plugins.__version__}\n"


def test_plugins_lists_every_plugin_with_its_distribution(host, capsys):
    assert main(["plugins"]) == ExitStatus.OK
    rows = [line.split()[:3] for line in capsys.readouterr().out.splitlines()[2:]]
    assert ["exporter", "json", "extrap-plugins"] in rows
    assert ["modeler", "default", "extrap-plugins"] in rows


def test_model_prints_a_table(numbers_reader, capsys):
    assert main(["model", str(numbers_reader)]) == ExitStatus.OK
    out = capsys.readouterr().out.splitlines()
    assert out[2].split()[:5] == ["main", "time", "3", "+", "2"]


def test_metric_takes_names_comma_separated_or_repeated(host, capsys):
    # the mandelbrot example's docstring says --metric visits,bytes_sent, as --np 1,2,4
    assert main(["model", str(EXAMPLE), "--metric", "bytes_sent,time", "--callpath", "main->halo_exchange"]) == ExitStatus.OK
    listed = capsys.readouterr().out
    assert main(["model", str(EXAMPLE), "--metric", "bytes_sent", "--metric", "time", "--callpath", "main->halo_exchange"]) == 0
    assert capsys.readouterr().out == listed
    assert [line.split()[1] for line in listed.splitlines()[2:4]] == ["time", "bytes_sent"]


@pytest.mark.parametrize("value", ["", " , "])
def test_a_metric_option_that_names_nothing_is_refused(host, capsys, value):
    """It was ignored, and every metric modelled."""
    with pytest.raises(SystemExit) as ended:
        main(["model", str(EXAMPLE), "--metric", value])
    assert ended.value.code == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins model: error: --metric {value!r}: expected a name (or several, "
                                       f"comma-separated); see extrap-plugins model --help\n")


def test_model_writes_json_to_a_file(numbers_reader, tmp_path, capsys):
    target = tmp_path / "out.json"
    assert main(["model", str(numbers_reader), "--export", "json", "-o", str(target)]) == ExitStatus.OK
    assert capsys.readouterr().out == ""
    (model,) = json.loads(target.read_text())["models"]
    assert model["callpath"] == "main" and model["terms"][0]["coefficient"] == pytest.approx(2.0)


@pytest.mark.parametrize("args, message", [
    (["model", "missing.nums"], "missing.nums: no such file or folder"),
    (["model", "{nums}", "--option", "terms"], "--option 'terms': expected KEY=VALUE"),
    (["model", "{nums}", "--modeler", "magic"], "unknown modeler 'magic'; the modelers are: default, exhaustive, golden, refining, segmented"),
    # Extra-P's modeler names: a hint to this tool's equivalent, not an alias (a plugin may take the names)
    (["model", "{nums}", "--modeler", "basic"], "unknown modeler 'basic'; the modelers are: default, exhaustive, "
     "golden, refining, segmented (Extra-P's basic and multi-parameter modelers are this tool's default, for one "
     "parameter and for several; Extra-P's refining is refining)"),
    (["model", "{nums}", "--modeler", "multi-parameter"], "unknown modeler 'multi-parameter'; the modelers are: "
     "default, exhaustive, golden, refining, segmented (Extra-P's basic and multi-parameter modelers are this tool's "
     "default, for one parameter and for several; Extra-P's refining is refining)"),
    (["model", "{nums}", "--export", "pdf"], "unknown exporter 'pdf'; the exporters are: csv, extra-p, extrap-jsonl, html, json, plot, text"),
    (["model", "{nums}", "--metric", "bytes"], "{nums}: no metric 'bytes'; the metrics are time"),
    (["model", "{nums}", "--option", "terms=2"], "modeler 'default' has no option 'terms'; its options are: "
     "exponents, log_exponents, max_terms, negative_exponents, criterion, improvement, weighting, measure, selection, "
     "outlying_points"),
    (["model", "{nums}", "-o", "/nonexistent/out.txt"], "/nonexistent/out.txt: the folder for the output does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(numbers_reader, capsys, args, message):
    args = [a.replace("{nums}", str(numbers_reader)) for a in args]
    assert main(args) == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert err == f"extrap-plugins: error: {message.replace('{nums}', str(numbers_reader))}\n"


@pytest.mark.parametrize("args, message", [
    (["--export", "pdf"], "unknown exporter 'pdf'; the exporters are: csv, extra-p, extrap-jsonl, html, json, plot, text"),
    (["--export", "plot"], "exporter 'plot' writes files: give it an output path with -o"),
    (["--modeler", "magic"], "unknown modeler 'magic'; the modelers are: default, exhaustive, golden, refining, "
                             "segmented"),
    (["--export-option", "colour=red"], "exporter 'text' has no option 'colour'; its options are those of every "
                                        "exporter: target, sort, values, level"),
    (["--export", "json", "--export-option", "colour=red", "-o", "{out}"],
     "exporter 'json' has no option 'colour'; its options are: version, and those of every exporter: target, sort, "
     "values, level"),
], ids=["unknown-exporter", "plot-without-o", "unknown-modeler", "unknown-export-option", "with-o"])
def test_what_model_can_check_is_said_before_reading(numbers_reader, capsys, tmp_path, args, message):
    """These were said only after all the reading and modelling (seconds to minutes on a large input): here the
    input cannot be read at all, and the mistake is still what is said."""
    unreadable = tmp_path / "garbage.nums"
    unreadable.write_text("not numbers\n")
    args = [a.replace("{out}", str(tmp_path / "out.json")) for a in args]
    assert main(["model", str(unreadable), *args]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"


@pytest.mark.parametrize("command", [
    ["efficiency", "{bad}"], ["compare", "{bad}", "{bad}"], ["suggest", "{bad}"],
    ["whatif", "{bad}", "--calibrate", "--target", "p=64"], ["requirements", "{bad}", "--system", "{bad}"],
    ["compare", "{bad}", "{bad}", "--title", "T"], ["efficiency", "{bad}", "--level", "eighty"],
], ids=["efficiency", "compare", "suggest", "whatif", "requirements", "title-without-html", "level"])
def test_every_command_says_what_it_can_check_before_reading(numbers_reader, capsys, tmp_path, command):
    """An unknown ``--modeler`` (and, for ``efficiency``/``compare``, ``--title`` without html or a bad
    ``--level``) was said by these commands only after all the reading and modelling."""
    unreadable = tmp_path / "garbage.nums"
    unreadable.write_text("not numbers\n")
    argv = [str(unreadable) if a == "{bad}" else a for a in command]
    mistake = [] if "--title" in argv or "--level" in argv else ["--modeler", "magic"]
    assert main([*argv, *mistake]) == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("extrap-plugins: error: ") and err.count("\n") == 1
    if mistake:
        assert err == ("extrap-plugins: error: unknown modeler 'magic'; the modelers are: default, exhaustive, "
                       "golden, refining, segmented\n")
    elif "--title" in argv:
        assert err == "extrap-plugins: error: --title and --plot-top apply to --export html only\n"
    else:
        assert "--level" in err and "eighty" in err and "garbage.nums" not in err


def test_an_unrecognised_file_lists_the_readers(host, tmp_path, capsys):
    path = tmp_path / "notes.xyz"
    path.write_text("hello\n")
    assert main(["model", str(path)]) == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"extrap-plugins: error: {path}: no reader recognises this input; choose one with --reader (readers: ")


def test_a_file_named_as_one_format_and_written_in_another_is_read_by_its_content(host, tmp_path, capsys):
    # a CSV table or JSON Lines named *.txt: only the readers claiming *.txt (text, talpas) were asked, and none
    # recognised it ("no reader recognises this input")
    table = tmp_path / "results.txt"
    table.write_text("p,value\n2,1\n4,2\n8,3\n16,4\n32,5\n")
    lines = tmp_path / "runs.txt"
    lines.write_text("".join(f'{{"params": {{"p": {p}}}, "callpath": "main", "metric": "time", "value": {2 * p}}}\n'
                             for p in (2, 4, 8, 16, 32)))
    for path, model in ((table, "1 · log2(p)"), (lines, "2 · p")):
        assert main(["model", str(path)]) == ExitStatus.OK
        assert model in capsys.readouterr().out
    still = tmp_path / "notes.txt"
    still.write_text("hello\n")
    assert main(["model", str(still)]) == ExitStatus.BAD_INPUT
    assert "no reader recognises this input" in capsys.readouterr().err


def test_a_crashing_modeler_is_an_internal_error_without_traceback(numbers_reader, host, capsys):
    class Crash:
        def fit_group(self, group, measure="mean"):
            raise RuntimeError("boom")

    plugin = types.ModuleType("crash")
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("crash", Crash)])
    host.register(plugin, "crash")
    assert main(["model", str(numbers_reader), "--modeler", "crash"]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert err == "extrap-plugins: error: internal error: RuntimeError: boom (run with --traceback for details)\n"


@pytest.mark.parametrize("where", ["before the command", "after the command"])
def test_traceback_is_taken_before_or_after_the_command(numbers_reader, host, capsys, where):
    # the hint said 'run with --traceback', and 'model FILE --traceback' was 'unrecognized arguments'
    class Crash:
        def fit_group(self, group, measure="mean"):
            raise RuntimeError("boom")

    plugin = types.ModuleType("crash")
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("crash", Crash)])
    host.register(plugin, "crash")
    command = ["model", str(numbers_reader), "--modeler", "crash"]
    assert main(["--traceback", *command] if where == "before the command" else [*command, "--traceback"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n") and 'raise RuntimeError("boom")' in err
    assert err.endswith("extrap-plugins: error: internal error: RuntimeError: boom (run with --traceback for "
                        "details)\n")


@pytest.mark.parametrize("command", ["model", "plugins", "suggest", "autotune", "requirements", "whatif", "run",
                                     "efficiency", "compare"])
def test_every_command_takes_traceback_after_it(capsys, command):
    with pytest.raises(SystemExit) as ended:
        main([command, "--help"])
    assert ended.value.code == 0 and "  --traceback " in capsys.readouterr().out


@pytest.mark.parametrize("argv, line", [
    (["model", "{nums}", "-o", ""], "-o '': expected a file name"),
    (["model", "{nums}", "--export", "plot", "-o", ""], "-o '': expected a file or folder name"),
    (["efficiency", "{nums}", "-o", ""], "-o '': expected a file name"),
    (["suggest", "--param", "p=2,4,8,16,32", "--export", ""], "--export '': expected a file name"),
    (["autotune", "--param", "p=2,4", "-o", "", "--", "true"], "-o '': expected a folder name"),
    (["run", "--np", "1", "-o", "", "--", "true"], "-o '': expected a folder name"),
])
def test_an_empty_output_is_refused_in_one_line(numbers_reader, capsys, argv, line, tmp_path, monkeypatch):
    # model said ': is a folder; this exporter writes one file'; suggest wrote no plan, autotune wrote into .
    monkeypatch.chdir(tmp_path)
    assert main([part.replace("{nums}", str(numbers_reader)) for part in argv]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"extrap-plugins: error: {line}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["linear.nums"]


def register_warning_modeler(host, message: str) -> None:
    """Register modeler ``warn``: the mean of every series, with ``message`` warned for each."""
    class Warn:
        def fit(self, X, y):
            warnings.warn(message, stacklevel=2)
            self.constant_, self.terms_ = float(y.mean()), []
            return self

        def predict(self, X):
            return np.full(len(X), self.constant_)

    plugin = types.ModuleType("warn")
    plugin.extrap_modelers = hookimpl(lambda: [ModelerInfo("warn", Warn)])
    host.register(plugin, "warn")


def test_warnings_name_the_series_and_go_to_stderr(numbers_reader, host, capsys):
    register_warning_modeler(host, "only 5 points")
    assert main(["model", str(numbers_reader), "--modeler", "warn"]) == ExitStatus.OK
    assert capsys.readouterr().err == "extrap-plugins: warning: main [time]: only 5 points\n"


FOUR_POINTS = "PARAMETER p\n\nPOINTS 1 2 4 8\n\nREGION main\nMETRIC time\n" + "".join(
    f"DATA {p} {p + 0.1}\n" for p in (1.0, 2.0, 4.0, 8.0))
FOUR_WARNING = "main [time]: parameter p has only 4 distinct values; at least 5 are needed for a trustworthy model"


def test_a_warning_the_report_lists_is_not_repeated_where_stderr_goes_to_the_same_place(tmp_path):
    """The text report ends with the warnings; on a terminal (or ``> file 2>&1``) stdout and stderr are one place,
    and each warning is shown once there; apart, stderr still has it."""
    path = tmp_path / "four.txt"
    path.write_text(FOUR_POINTS)
    environment = {**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"}
    together = subprocess.run([sys.executable, "-m", "extrap_plugins", "model", str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=environment, timeout=120)
    assert together.returncode == 0
    assert together.stdout.endswith(f"\nwarnings:\n  {FOUR_WARNING}\n")
    assert together.stdout.count(FOUR_WARNING) == 1
    apart = run_cli("model", path)
    assert apart.stdout.endswith(f"\nwarnings:\n  {FOUR_WARNING}\n")
    assert apart.stderr == f"extrap-plugins: warning: {FOUR_WARNING}\n"


def test_a_model_warning_of_many_series_on_stderr_says_where_all_of_them_are_listed(tmp_path):
    # "main [time] and 3 more series: ..." with a CSV on stdout: which three?
    path = tmp_path / "four.txt"
    path.write_text(FOUR_POINTS + "".join(f"REGION r{i}\nMETRIC time\n" + "".join(
        f"DATA {p} {p + i}\n" for p in (1.0, 2.0, 4.0, 8.0)) for i in (1, 2, 3)))
    apart = run_cli("model", path, "--export", "csv")
    assert apart.returncode == 0, apart.stderr
    assert apart.stderr == ("extrap-plugins: warning: main [time] and 3 more series (--export json lists them all): "
                            "parameter p has only 4 distinct values; at least 5 are needed for a trustworthy model\n")
    listed = json.loads(run_cli("model", path, "--export", "json").stdout)
    assert sorted(m["callpath"] for m in listed["models"] if m["warnings"]) == ["main", "r1", "r2", "r3"]


@pytest.mark.parametrize("argv, line", [
    (["suggest", "--strategy", "foo"], "extrap-plugins suggest: error: argument --strategy: invalid choice: 'foo' "
                                       "(choose from 'uncertainty', 'cheapest'); see extrap-plugins suggest --help"),
    (["suggest", "--budget", "-5u"], "extrap-plugins suggest: error: argument --budget: expected one argument (a "
                                     "value that starts with '-' is written --budget=VALUE); see extrap-plugins "
                                     "suggest --help"),
    (["model"], "extrap-plugins model: error: the following arguments are required: INPUT; see extrap-plugins model "
                "--help"),
])
def test_a_mistake_on_the_command_line_is_one_line_without_the_usage(argv, line, capsys):
    # argparse printed its usage, a dozen lines, before the line that says what is wrong
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    assert capsys.readouterr().err == line + "\n"


@pytest.mark.parametrize("argv, line", [
    (["autotune", "--parm", "p=1,2", "-o", "runs", "--", "python", "app.py"],
     "extrap-plugins autotune: error: unrecognized option '--parm' (before '--'); did you mean --param?; see "
     "extrap-plugins autotune --help"),
    (["autotune", "--param", "p=1,2", "-o", "runs", "--parm=n=3", "--", "python", "app.py"],
     "extrap-plugins autotune: error: unrecognized option '--parm' (before '--'); did you mean --param?; see "
     "extrap-plugins autotune --help"),
    (["autotune", "--param", "p=1,2", "--frobnicate", "-o", "runs", "--", "python", "app.py"],
     "extrap-plugins autotune: error: unrecognized option '--frobnicate' (before '--'); see extrap-plugins autotune "
     "--help"),
    (["run", "--np", "1,2", "--parm", "n=1,2", "-o", "runs", "--", "python", "app.py"],
     "extrap-plugins run: error: unrecognized option '--parm' (before '--'); did you mean --param?; see "
     "extrap-plugins run --help"),
    (["run", "--np", "1,2", "--dryrun", "python", "app.py"],
     "extrap-plugins run: error: unrecognized option '--dryrun' (before the program); did you mean --dry-run?; see "
     "extrap-plugins run --help"),
])
def test_an_unknown_option_before_the_program_is_named(argv, line, capsys):
    # its value was taken for the program's first word, and the program swallowed the options after it:
    # autotune said '-o/--output' was missing though it was given; run said 'unrecognized arguments: --parm' only
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    assert capsys.readouterr().err == line + "\n"


@pytest.mark.parametrize("argv, program", [
    (["autotune", "--param", "p=1", "-o", "runs", "--", "python", "app.py", "--parm", "x"],
     ["--", "python", "app.py", "--parm", "x"]),
    (["run", "--np", "1", "--", "python", "app.py", "--dryrun", "--", "-x"],
     ["--", "python", "app.py", "--dryrun", "--", "-x"]),
    # a program without '--' begins at the first word that is no option nor an option's value, as it did
    (["autotune", "--param", "p=1", "-o", "runs", "python", "app.py", "--parm", "x"],
     ["python", "app.py", "--parm", "x"]),
    (["run", "-oruns", "--rep", "2", "--dry-run", "python", "app.py", "--np", "4"],
     ["python", "app.py", "--np", "4"]),
])
def test_what_follows_the_program_is_the_programs(argv, program):
    args = build_parser().parse_args(argv)
    assert args.program == program and args.output == "runs"


def test_parse_options_converts_values():
    assert parse_options(["terms=2", "negative=true", "eps=0.5", "exponents=0,1/2,1", "max-terms=3"], "--option") == {
        "terms": 2, "negative": True, "eps": 0.5, "exponents": "0,1/2,1", "max_terms": 3}


# --------------------------------------------------------------- end to end
def test_readme_example_runs_end_to_end():
    result = run_cli("model", EXAMPLE)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    callpaths = [line.split()[0] for line in lines[2:] if line.strip() and not line.startswith(" ")]
    assert callpaths[:7] == ["main", "main->setup", "main->compute", "main->halo_exchange",
                             "main->halo_exchange", "main->allreduce", "main->allreduce"]


@pytest.mark.slow
def test_example_plugin_is_discovered_through_its_entry_point(tmp_path):
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(ROOT / "examples" / "plugin-modeler")],
        capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    env = {"PYTHONPATH": str(target), "EXTRAP_PLUGINS_NO_AUTOLOAD": "0", "EXTRAP_PLUGINS_STRICT": "1"}
    listing = run_cli("plugins", env=env)
    assert listing.returncode == 0, listing.stderr
    assert ["modeler", "powerlaw", "extrap-powerlaw"] in [line.split()[:3] for line in listing.stdout.splitlines()]
    result = run_cli("model", EXAMPLE, "--modeler", "powerlaw", "--callpath", "main->halo_exchange",
                     "--metric", "bytes_sent", "--export", "json", env=env)
    assert result.returncode == 0, result.stderr
    (model,) = json.loads(result.stdout)["models"]
    assert model["modeler"] == "powerlaw"
    (term,) = model["terms"]
    assert term["coefficient"] == pytest.approx(64.0)
    assert term["factors"]["n"]["exponent"] == pytest.approx(0.5)
    assert term["factors"]["p"]["exponent"] == pytest.approx(0.0, abs=1e-9)


def test_an_option_that_names_an_api_argument_is_bad_input(numbers_reader, capsys):
    assert main(["model", str(numbers_reader), "--option", "modeler=x"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == "extrap-plugins: error: --option 'modeler=x': 'modeler' is not an option here; use --modeler\n"


CODESIGN = ROOT / "examples" / "codesign"


@pytest.mark.parametrize("command", [
    ["whatif", str(CODESIGN / "runs" / "stencil" / "app.extrap.jsonl"), "--machine", str(CODESIGN / "machine.toml"),
     "--target", "p=64", "--option", "scale=2"],
    ["efficiency", str(ROOT / "examples" / "isoefficiency.csv"), "--size", "n", "--option", "level=0.5"],
    ["compare", str(EXAMPLE), str(EXAMPLE), "--option", "along=p"],
    ["requirements", str(CODESIGN / "runs" / "stencil" / "app.extrap.jsonl"), "--system",
     str(CODESIGN / "system.toml"), "--upgrade", "x=a:2", "--option", "roles=x"],
])
def test_an_option_that_names_an_argument_of_the_command_s_own_call_is_bad_input(command, capsys):
    # (it reached the call twice: "internal error: TypeError: whatif() got multiple values for keyword argument
    # 'scale'", exit 1)
    pair = command[-1]
    assert main(command) == ExitStatus.BAD_INPUT
    key = pair.partition("=")[0]
    assert capsys.readouterr().err == (f"extrap-plugins: error: --option {pair!r}: {key!r} is an argument of "
                                       f"{command[0]} itself, not an option of the modeler\n")


@pytest.mark.parametrize("flags, message", [
    (["--export-option", "jobs=4"], "--export-option 'jobs=4': 'jobs' is not an option here; use --jobs"),
    (["--stream", "on", "--option", "scratch=/tmp"],
     "--option 'scratch=/tmp': 'scratch' is not an option here; use --scratch"),
    (["--stream", "on", "--reader-option", "executor=mpi"],
     "--reader-option 'executor=mpi': 'executor' is not an option here; use --executor"),
])
def test_options_that_name_a_flag_are_bad_input_in_every_path(numbers_reader, capsys, flags, message):
    assert main(["model", str(numbers_reader), *flags]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == f"extrap-plugins: error: {message}\n"


def test_a_target_naming_no_parameter_is_said_before_the_modelling_and_its_warnings(shared_data, capsys):
    # the modelling's warnings came first, then the error: more than one line for one mistake
    folder = shared_data / "caliper" / "thicket" / "mpi_scaling_cali"
    assert main(["model", str(folder), "--target", "q=5"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == ("extrap-plugins: error: target 'q=5': unknown parameter 'q'; the parameters are "
                                       "jobsize\n")


# ----------------------------------------------------- warnings of many series reach the end of the command whole
def test_a_warning_of_many_series_is_one_line_naming_the_first_and_counting_every_one():
    """The modelling warns once per cause, carrying its series (``series``); the lines at the end count them all."""
    from extrap_plugins.cli import WarningLines
    from extrap_plugins.engine import warn_per_cause
    from extrap_plugins.errors import QualityWarning

    per_series = [QualityWarning("noisy", f"main->r{k}", "time") for k in range(5)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_per_cause(per_series + [QualityWarning("noisy", "main->r9", "time")])
    (grouped,) = [w.message for w in caught]
    assert str(grouped) == "main->r0 [time] and 5 more series (their Model.warnings say it): noisy"
    lines = WarningLines("--export json lists them all")
    lines.add(grouped)
    lines.add(QualityWarning("noisy", "main->r7", "time"))
    assert lines.causes == {(QualityWarning, "noisy"): [f"main->r{k} [time]" for k in (0, 1, 2, 3, 4, 9, 7)]}


def test_warnings_of_a_modeler_end_the_command_one_line_per_cause(numbers_reader, host, capsys, tmp_path):
    register_warning_modeler(host, "only 5 points")
    path = tmp_path / "many.csv"
    path.write_text("callpath,metric,p,value\n" + "".join(f"r{k},time,{p},{p + k}\n" for k in range(6)
                                                          for p in (1, 2, 4, 8, 16)))
    assert main(["model", str(path), "--modeler", "warn", "--export", "csv"]) == ExitStatus.OK
    assert capsys.readouterr().err == "extrap-plugins: warning: r0 [time] and 5 more series: only 5 points\n"


# ------------------------------------------------------------------------------------------- progress
def read_numbered_run(part, options):
    """A module-level read_part: ``run.<p>`` is one run at p."""
    p = float(part.name.split(".")[1])
    return extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=[[p]],
                                                  value=[3 + 2 * p], source=str(part))


@pytest.fixture
def runs_reader(host, tmp_path):
    """A folder of five runs and a reader that lists them (its ``parts``)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for p in (1, 2, 4, 8, 16):
        (folder / f"run.{p}").write_text("")
    plugin = types.ModuleType("runs")
    plugin.extrap_readers = hookimpl(lambda: [ReaderInfo(
        "runs", read=None, directories=True, sniff=lambda path: path.name == "runs",
        parts=lambda path, options: sorted(path.iterdir()), read_part=read_numbered_run)])
    host.register(plugin, "runs")
    return folder


def bar_states(err: str, name: str) -> list[str]:
    """Each state a progress bar called ``name`` showed on stderr, as ``done/total``."""
    import re

    return re.findall(rf"{name}:[ 0-9]*%?\|?[^|]*\|? ?(\d+/\d+) ", err.replace("\r", "\n"))


def test_reading_a_folder_counts_its_runs(runs_reader, capsys):
    # "reading: 0%| 0/1 [input/s]" for the whole read, then 1/1
    assert main(["model", str(runs_reader), "--progress", "on", "--executor", "serial"]) == ExitStatus.OK
    err = capsys.readouterr().err
    states = bar_states(err, "reading")  # (as often as tqdm redraws: at least at the start and at the end)
    assert states[0] == "0/5" and states[-1] == "5/5" and {s.split("/")[1] for s in states} == {"5"}
    assert "run/s]" in err and "input" not in err


@pytest.mark.parametrize("command", ["efficiency", "compare"])
def test_efficiency_and_compare_take_progress_as_model_does(command):
    def option(name):
        parser = build_parser()
        commands = next(a for a in parser._actions if a.dest == "command").choices
        return next(a for a in commands[name]._actions if a.dest == "progress")

    mine, models = option(command), option("model")
    assert (mine.option_strings, mine.choices, mine.default, mine.help) == (
        models.option_strings, models.choices, models.default, models.help)


def test_efficiency_shows_its_reading_and_modelling(runs_reader, capsys):
    assert main(["efficiency", str(runs_reader), "--progress", "on"]) == ExitStatus.OK
    err = capsys.readouterr().err
    assert bar_states(err, "reading")[-1] == "5/5" and bar_states(err, "modeling")[-1] == "1/1"  # C = p·T of main
    assert main(["efficiency", str(runs_reader)]) == ExitStatus.OK  # auto: stderr is no terminal here
    assert "reading" not in capsys.readouterr().err


def test_compare_shows_the_runs_of_both_sides(runs_reader, capsys):
    assert main(["compare", str(runs_reader), str(runs_reader), "--progress", "on"]) == ExitStatus.OK
    err = capsys.readouterr().err
    assert bar_states(err, "reading")[-1] == "10/10" and bar_states(err, "modeling")[-1] == "2/2"
    assert main(["compare", str(runs_reader), str(runs_reader), "--progress", "off"]) == ExitStatus.OK
    assert capsys.readouterr().err == ""


def test_standard_input_is_refused_saying_what_to_do(host, capsys, tmp_path, monkeypatch):
    # `cat runs.csv | extrap-plugins model -` said "-: no such file or folder"
    monkeypatch.chdir(tmp_path)
    assert main(["model", "-"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (
        "extrap-plugins: error: -: standard input is not read: save the measurements to a file and give its name "
        "(a reader needs the file's name and can read it more than once)\n")


def test_names_an_ascii_stdout_cannot_hold_are_escaped_not_an_internal_error(tmp_path):
    # (PYTHONIOENCODING=ascii, or a cp1252 console: "internal error: UnicodeEncodeError", exit 1)
    path = tmp_path / "u.csv"
    path.write_text("callpath,p,value\n" + "".join(f"main->計算,{p},{p}\n" for p in (1, 2, 4, 8, 16)),
                    encoding="utf-8")
    table = run_cli("model", path, env={"PYTHONIOENCODING": "ascii"})
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[2].split()[:3] == ["main->\\u8a08\\u7b97", "time", "1"]
    document = run_cli("model", path, "--export", "json", env={"PYTHONIOENCODING": "ascii"})
    assert [m["callpath"] for m in json.loads(document.stdout)["models"]] == ["main->計算"]


@pytest.mark.parametrize("command", [["model", str(EXAMPLE), "--callpath", "main"],
                                     ["efficiency", str(ROOT / "examples" / "isoefficiency.csv"), "--size", "n"]])
def test_output_dash_is_stdout_not_a_file_named_dash(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([*command, "-o", "-"]) == ExitStatus.OK
    assert capsys.readouterr().out and not (tmp_path / "-").exists()


@pytest.mark.parametrize("name, starts", [("m.json", '{\n "format": "extrap-plugins/models"'),
                                          ("m.csv", "callpath,metric,modeler,function"),
                                          ("m.html", "<!DOCTYPE html>"), ("m.out", "call path")])
def test_without_export_the_output_s_extension_chooses_the_exporter(name, starts, tmp_path, capsys):
    # (-o models.json wrote the text table into a file named .json)
    assert main(["model", str(EXAMPLE), "--callpath", "main", "-o", str(tmp_path / name)]) == ExitStatus.OK
    assert (tmp_path / name).read_text(encoding="utf-8").startswith(starts)


@pytest.mark.parametrize("export, starts", [([], '{\n "format": "extrap-plugins/efficiency"'),
                                            (["--export", "text"], "efficiency of time over p")])
def test_a_report_s_format_follows_its_output_s_extension_unless_given(export, starts, tmp_path):
    path = tmp_path / "e.json"
    assert main(["efficiency", str(ROOT / "examples" / "isoefficiency.csv"), "--size", "n", "-o", str(path),
                 *export]) == ExitStatus.OK
    assert path.read_text(encoding="utf-8").startswith(starts)


@pytest.mark.parametrize("command", [
    ["model", str(EXAMPLE)], ["suggest", str(EXAMPLE), "--budget", "50%"],
    ["autotune", "--param", "p=1,2", "-o", "runs"],
    ["efficiency", str(ROOT / "examples" / "isoefficiency.csv")],
])
@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_callpath_pattern_is_refused_before_anything_is_read_or_run(command, blank, tmp_path, monkeypatch,
                                                                             capsys):
    # it matches nothing: model and suggest said so after reading, autotune after measuring the base design
    monkeypatch.chdir(tmp_path)
    program = ["--", "python", "a.py"] if command[0] == "autotune" else []
    with pytest.raises(SystemExit) as ended:
        main([*command, "--callpath", "main", "--callpath", blank, *program])
    assert ended.value.code == 2
    assert (f"error: --callpath {blank!r}: expected a call path or a glob such as 'main->*'; see extrap-plugins "
            f"{command[0]} --help") in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("argv, said", [
    (["efficiency", "x.csv", "--procs", "p"], "extrap-plugins efficiency: error: unrecognized arguments: --procs p "
                                              "(did you mean --processes?); see extrap-plugins efficiency --help"),
    (["model", "x.csv", "--bogus"], "extrap-plugins model: error: unrecognized arguments: --bogus; see "
                                    "extrap-plugins model --help"),
])
def test_an_unknown_option_is_refused_by_its_command_with_the_option_meant(argv, said, capsys):
    # (the top-level parser refused it: "see extrap-plugins --help", which does not list the command's options)
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2 and capsys.readouterr().err == said + "\n"


def test_an_exporter_of_paths_writes_to_a_pipe_as_the_text_ones_do():
    # (--export extra-p -o /dev/stdout | ...: "/dev/stdout: cannot write here: No such file or directory")
    import io
    import zipfile
    result = subprocess.run([sys.executable, "-m", "extrap_plugins", "model", str(EXAMPLE), "--export", "extra-p",
                             "-o", "/dev/stdout"], capture_output=True, cwd=ROOT, timeout=120,
                            env={**os.environ, "EXTRAP_PLUGINS_NO_AUTOLOAD": "1"})
    assert result.returncode == 0, result.stderr
    assert "experiment.json" in zipfile.ZipFile(io.BytesIO(result.stdout)).namelist()


NUL_SAID = "holds a NUL byte, which no file name, value or argument can hold; see extrap-plugins --help"


@pytest.mark.parametrize(("argv", "said"), [
    (["autotune", "--param", "p=1,2", "-o", "a\0b", "--", "python", "app.py"], f"argument -o: 'a\\x00b' {NUL_SAID}"),
    (["autotune", "--param", "p=1,2", "-o", "runs", "--mpiexec-arg=a\0b", "--", "python", "app.py"],
     f"argument --mpiexec-arg: 'a\\x00b' {NUL_SAID}"),
    (["run", "--np", "1", "-o", "runs", "--", "python", "a\0b"], f"'a\\x00b' {NUL_SAID}"),
    (["model", "in.jsonl", "--callpath=ma\0in"], f"argument --callpath: 'ma\\x00in' {NUL_SAID}"),
], ids=["autotune-o", "mpiexec-arg", "program", "callpath"])
def test_a_nul_byte_in_an_argument_is_one_line_naming_its_option(argv, said, capsys, tmp_path, monkeypatch):
    # (no shell passes one, but main(argv) does: autotune's -o and --mpiexec-arg were "internal error: ValueError:
    # embedded null byte", exit 1)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert (ended.value.code, capsys.readouterr().err) == (2, f"extrap-plugins: error: {said}\n")
    assert list(tmp_path.iterdir()) == []


def test_a_value_with_a_line_break_is_said_back_on_one_line(capsys, host):
    # (the message put the value in as it is: "... neither the process count (a", then "b) nor ..." on a line of its
    # own)
    codesign = ROOT / "examples" / "codesign"
    status = main(["requirements", str(codesign / "synthetic.jsonl"), "--system", str(codesign / "system.toml"),
                   "--role", "memory=loads_stores", "--processes", "a\nb"])
    assert (status, capsys.readouterr().err) == (2, (
        "extrap-plugins: error: application 'synthetic': the memory model (main [loads_stores]) depends on p, which is "
        "neither the process count (a\\nb) nor the problem size per process (n); name them with --processes and "
        "--size\n"))


@pytest.mark.parametrize("command", [["model", ""], ["efficiency", ""], ["compare", "", str(EXAMPLE)]])
def test_an_empty_input_name_is_refused_not_read_as_the_current_folder(command, capsys, host, tmp_path, monkeypatch):
    # ('' was pathlib's '.': the current folder was read, here a copy of the example, or "the folder is empty")
    (tmp_path / "stencil.jsonl").write_bytes(EXAMPLE.read_bytes())
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--progress", "off"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr() == ("", "extrap-plugins: error: an input is '', an empty name: give a file or folder "
                                       "of measurements\n")


def test_a_value_of_100000_characters_is_said_back_cut_in_its_middle(capsys, host):
    # (the error line quoted it whole: 100,000 characters and more on one line)
    long = "x" * 100_000
    cut = "x" * 59 + "… (99,882 characters left out) …" + "x" * 59
    with pytest.raises(SystemExit) as ended:
        main(["model", str(EXAMPLE), "--sort", long])
    assert (ended.value.code, capsys.readouterr().err) == (2, (
        f"extrap-plugins model: error: argument --sort: invalid choice: '{cut}' (choose from 'growth', 'target', "
        "'share'); see extrap-plugins model --help\n"))
    assert main(["model", str(EXAMPLE), "--target", long, "--progress", "off"]) == ExitStatus.BAD_INPUT
    cut = "x" * 59 + "… (99,883 characters left out) …" + "x" * 58  # (of the word 'xxx...': with its colon)
    assert capsys.readouterr().err == (f"extrap-plugins: error: target '{cut}': expected NAME=VALUE pairs separated "
                                       "by commas, e.g. p=65536,n=1e6\n")


def test_a_parameter_name_with_a_line_break_is_refused(capsys, host):
    # (suggest planned for a parameter 'p\nq': its table broke in two at the name)
    assert main(["suggest", "--param", "p\nq=1,2,4"]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr() == ("", "extrap-plugins: error: --param 'p\\nq=1,2,4': the name 'p\\nq' holds a line "
                                       "break or another control character\n")


def test_a_scratch_folder_that_is_no_folder_is_refused_before_reading_also_without_streaming(capsys, host, tmp_path):
    # (--scratch /dev/full, a file or a folder that does not exist was left unused without a word where the input
    # was small enough to read in memory, and said only on the first input large enough to stream)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    assert main(["model", "missing.jsonl", "--scratch", str(a_file)]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr() == ("", f"extrap-plugins: error: {a_file}: is a file; the scratch folder must be a "
                                       "folder\n")
    assert main(["model", "missing.jsonl", "--scratch", str(tmp_path / "nowhere")]) == ExitStatus.BAD_INPUT
    assert capsys.readouterr().err == (f"extrap-plugins: error: {tmp_path / 'nowhere'}: the scratch folder does not "
                                       "exist\n")
    assert a_file.read_text() == "mine\n"
    # a folder is taken, and the small input read in memory (--stream off too: a job script keeps its --scratch)
    assert main(["model", str(EXAMPLE), "--scratch", str(tmp_path), "--stream", "off", "--callpath",
                 "main->setup"]) == ExitStatus.OK
    assert "main->setup" in capsys.readouterr().out
