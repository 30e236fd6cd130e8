"""Requirements under system upgrades (seed 004): the hand-computed table, systems, roles and bad input."""

from __future__ import annotations

import dataclasses
import html
import json
import re

import numpy as np
import pytest
from reading_helpers import SYSTEM, measured, noted

import extrap_plugins
from extrap_plugins import InputError
from extrap_plugins.cli import main
from extrap_plugins.errors import ExtrapWarning
from extrap_plugins.models import Factor, Model, ModelSet, Term
from extrap_plugins.codesign import System, fill_memory, load_system, parse_upgrade


def pmnf(metric: str, coefficient: float, **factors: tuple[float, float]) -> Model:
    return Model(callpath="main", metric=metric, parameters=("p", "n"), constant=0.0,
                 terms=(Term(coefficient, {k: Factor(*v) for k, v in factors.items()}),))


def seed004_models() -> ModelSet:
    """The per-process requirement models printed in seed 004 (log = log2, as in Extra-P)."""
    return ModelSet(parameters=("p", "n"), source="seed004", models=[
        pmnf("bytes_used", 1e5, n=(1, 1)),                        # 10^5 · n · log n
        pmnf("flop", 1e5, n=(1, 1), p=(0.25, 1)),                 # 10^5 · n · log n · p^0.25 · log p
        pmnf("bytes_sent_received", 1e3, n=(1, 0), p=(0.25, 1)),  # 10^3 · n · p^0.25 · log p
        pmnf("loads_stores", 1e5, n=(1, 1), p=(0, 1)),            # 10^5 · n · log n · log p
    ])


SEED004_ROLES = {"memory": "bytes_used", "computation": "flop", "communication": "bytes_sent_received",
                 "memory_access": "loads_stores"}

# Baseline system: p = 2^16 = 65536 processes with M = 1.024e9 bytes each, so memory(n) = 10^5 · n · log2 n = M
# gives n = 1024 exactly (10^5 · 1024 · 10).  By hand (n' solves n' · log2 n' = M' / 10^5):
#   A, double the racks:   p' = 2p, M' = M      -> n' = 1024; computation and communication grow by
#                          2^0.25 · log2(2^17) / log2(2^16) = 1.18921 · 17/16 = 1.2635; memory access by 17/16
#   B, double the sockets: p' = 2p, M' = M/2    -> n' · log2 n' = 5120: n' = 560.72 (560.72 · 9.1311 = 5120);
#                          n'/n = 0.54758; memory 0.5; computation 0.5 · 1.2635 = 0.63177;
#                          communication 0.54758 · 1.2635 = 0.69188; memory access 0.5 · 17/16 = 0.53125
#   C, double the memory:  p' = p,  M' = 2M     -> n' · log2 n' = 20480: n' = 1882.6 (1882.6 · 10.878 = 20480);
#                          n'/n = 1.8385; memory, computation and memory access 2; communication 1.8385
HAND = {
    # upgrade: (n per process, overall n, {role: ratio per process})
    "double the racks": (1.0, 2.0, {"memory": 1.0, "computation": 1.2635, "communication": 1.2635,
                                    "memory_access": 1.0625}),
    "double the sockets": (0.54758, 1.0952, {"memory": 0.5, "computation": 0.63177, "communication": 0.69188,
                                             "memory_access": 0.53125}),
    "double the memory": (1.8385, 1.8385, {"memory": 2.0, "computation": 2.0, "communication": 1.8385,
                                           "memory_access": 2.0}),
}
GROWTH = {"double the racks": 2, "double the sockets": 2, "double the memory": 1}

SYSTEM_TOML = """\
[system]
processes = 65536
memory_per_process = 1024000000          # bytes: n = 1024 fills it
[upgrades]
"double the racks"   = { processes = "2x" }
"double the sockets" = { processes = "2x", memory_per_process = "0.5x" }
"double the memory"  = { memory_per_process = "2x" }
"""


def three_digits(x: float) -> float:
    return float(f"{x:.3g}")


@pytest.fixture
def system_file(tmp_path):
    path = tmp_path / "system.toml"
    path.write_text(SYSTEM_TOML)
    return path


def test_seed004_ratios_equal_the_hand_computed_ones_to_three_digits(system_file):
    result = extrap_plugins.requirements({"seed004": seed004_models()}, system_file, roles=SEED004_ROLES)
    assert [r.upgrade for r in result.rows] == list(HAND)
    for row in result.rows:
        per_process, overall, ratios = HAND[row.upgrade]
        assert three_digits(row.problem_size_per_process) == three_digits(per_process)
        assert three_digits(row.problem_size) == three_digits(overall)
        assert {k: three_digits(v) for k, v in row.requirements.items()} == \
            {k: three_digits(v) for k, v in ratios.items()}
        assert {k: three_digits(v) for k, v in row.requirements_total.items()} == \
            {k: three_digits(v * GROWTH[row.upgrade]) for k, v in ratios.items()}
    assert result.row("seed004", "double the racks").old["problem_size_per_process"] == pytest.approx(1024, rel=1e-12)
    # the largest overall problem wins: racks (2); the smallest loses: sockets (1.10)
    assert [(r.upgrade, r.best, r.worst) for r in result.rows] == [
        ("double the racks", True, False), ("double the sockets", False, True), ("double the memory", False, False)]


def test_sockets_in_the_structure_halve_the_memory_per_process(tmp_path):
    """A system given as racks × nodes × sockets × cores with memory per node: doubling sockets is upgrade B."""
    path = tmp_path / "machine.toml"
    path.write_text('[system]\nracks = 16\nnodes_per_rack = 64\nsockets_per_node = 2\ncores_per_socket = 32\n'
                    'memory_per_node = 65536000000\n'
                    '[upgrades]\n"double the sockets" = { sockets_per_node = "2x" }\n'
                    '"double the racks" = { racks = "2x" }\n')
    system, upgrades = load_system(path)
    assert (system.processes, system.memory_per_process) == (65536, 1.024e9)
    result = extrap_plugins.requirements({"seed004": seed004_models()}, path, roles=SEED004_ROLES)
    sockets = result.row("seed004", "double the sockets")
    assert three_digits(sockets.problem_size_per_process) == 0.548
    assert three_digits(sockets.requirements["communication"]) == 0.692
    assert sockets.new["processes"] == 131072 and sockets.new["memory_per_process"] == 0.512e9


def test_command_line_upgrade_and_json_document(system_file, tmp_path, capsys):
    result = extrap_plugins.requirements([seed004_models()], System.of(65536, 1.024e9),
                                         upgrades=["bigger=processes:4x,memory_per_process:2 GiB"],
                                         roles=SEED004_ROLES)
    document = result.as_json()
    assert document["format"] == "extrap-plugins/requirements" and document["version"] == 1
    assert document["system"]["processes"] == 65536
    row = document["rows"][0]
    assert row["application"] == "seed004" and row["upgrade"] == "bigger"
    assert set(row["requirements"]) == {"memory", "computation", "communication", "memory_access"}
    assert row["requirements_total"]["memory"] == pytest.approx(4 * 2**31 / 1.024e9)
    json.dumps(document, allow_nan=False)


def test_what_the_models_warn_of_is_in_the_json_document_per_application():
    models = seed004_models()
    flop = next(m for m in models.models if m.metric == "flop")
    warned = dataclasses.replace(flop, warnings=("terms of opposite sign: they cancel where measured",))
    models = dataclasses.replace(models, models=[warned if m is flop else m for m in models.models])
    result = extrap_plugins.requirements({"seed004": models}, System.of(65536, 1.024e9),
                                         upgrades=["bigger=processes:4x"], roles=SEED004_ROLES)
    document = result.as_json()
    assert document["model_warnings"] == {"seed004": ["main [flop]: terms of opposite sign: they cancel where "
                                                      "measured"]}
    assert document["models"]["seed004"]["computation"] == [f"main [flop]: {flop.formula}"]


def test_fill_memory_finds_the_smallest_size_that_fills_it():
    assert fill_memory(lambda n: 1e5 * n * np.log2(n), 1.024e9, "a") == pytest.approx(1024, rel=1e-13)
    assert fill_memory(lambda n: 8 * n**3, 8e9, "a") == pytest.approx(1000, rel=1e-13)


def test_quantities_sizes_and_factors(tmp_path):
    system = System.of(1024, "2 GiB")
    assert system.memory_per_process == 2**31
    up = parse_upgrade("x=memory_per_process:512MiB")
    assert up.apply(system).memory_per_process == 2**29
    assert parse_upgrade("y=processes:0.5x").apply(system).processes == 512


# ------------------------------------------------------------------ bad input, one line, exit 2
def measured_application(tmp_path, memory=lambda p, n: 100.0 * n) -> str:
    rows = []
    for p in (2, 4, 8, 16, 32):
        for n in (10, 20, 40, 80, 160):
            rows.append({"params": {"p": p, "n": n}, "callpath": "main", "metric": "bytes_used",
                         "value": memory(p, n)})
            rows.append({"params": {"p": p, "n": n}, "callpath": "main", "metric": "flop",
                         "value": 50.0 * n * p})
    path = tmp_path / "app.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return str(path)


def run_cli(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_table_from_measurements(tmp_path, system_file, capsys):
    app = measured_application(tmp_path)
    status, out, err = run_cli(["requirements", app, "--system", str(system_file)], capsys)
    assert status == 0, err
    assert "double the racks" in out and "app" in out
    status, out, err = run_cli(["requirements", app, "--system", str(system_file), "--export", "json"], capsys)
    document = json.loads(out)
    memory = [r for r in document["rows"] if r["upgrade"] == "double the memory"][0]
    assert memory["problem_size_per_process"] == pytest.approx(2.0, rel=1e-6)  # memory linear in n
    assert memory["requirements"]["computation"] == pytest.approx(2.0, rel=1e-6)


def test_role_naming_a_missing_metric_is_one_line_exit_2(tmp_path, system_file, capsys):
    app = measured_application(tmp_path)
    status, out, err = run_cli(["requirements", app, "--system", str(system_file),
                                "--role", "computation=PAPI_FP_OPS"], capsys)
    assert status == 2 and out == ""
    assert err == ("extrap-plugins: error: --role computation=PAPI_FP_OPS: application 'app' has no metric "
                   "'PAPI_FP_OPS'; its metrics are bytes_used, flop\n")


def test_memory_that_never_fills_is_one_line_exit_2(tmp_path, system_file, capsys):
    app = measured_application(tmp_path, memory=lambda p, n: 1000.0 * p)
    status, out, err = run_cli(["requirements", app, "--system", str(system_file)], capsys)
    assert status == 2
    assert err == ("extrap-plugins: error: application 'app': the memory model does not depend on the problem "
                   "size per process 'n' (no n fills the memory); is the memory metric right? "
                   "(--role memory=METRIC, --size NAME)\n")


def test_memory_that_cannot_reach_the_memory_is_one_line_exit_2(tmp_path, system_file, capsys):
    too_much = measured_application(tmp_path, memory=lambda p, n: 1e9 * n)
    status, out, err = run_cli(["requirements", too_much, "--system", str(system_file)], capsys)
    assert status == 2
    assert err.startswith("extrap-plugins: error: application 'app': the memory model needs 1e+09 bytes per "
                          "process already at n = 1, more than the")
    assert err.count("\n") == 1


def test_upgrade_that_changes_nothing_is_one_line_exit_2(tmp_path, system_file, capsys):
    app = measured_application(tmp_path)
    status, out, err = run_cli(["requirements", app, "--system", str(system_file),
                                "--upgrade", "same=processes:1x"], capsys)
    assert status == 2
    assert err == ("extrap-plugins: error: --upgrade same: upgrade 'same' changes nothing: the system keeps "
                   "65536 processes and 1.024e+09 bytes per process\n")


@pytest.mark.parametrize("text, message", [
    ("[system]\nprocesses = 4\n", "1: [system] gives no memory; give one of memory_per_process, "
                                  "memory_per_node, memory_per_socket, memory_per_core"),
    ("[system]\nprocesses = -4\nmemory_per_process = 1\n",
     "2: [system] processes: expected a positive number (a count, without a unit), got -4"),
    ("[system]\nprocesses = 4\nmemory_per_process = \"2 GB\"\n[upgrades]\nx = { memory = \"2x\" }\n",
     "5: upgrade 'x': unknown key 'memory'; the keys are processes, memory_per_process, racks, nodes_per_rack, "
     "sockets_per_node, cores_per_socket, processes_per_core, memory_per_node, memory_per_socket, memory_per_core"),
    ("[system\n", "1: not valid TOML: Expected ']' at the end of a table declaration (column 8)"),
])
def test_bad_system_files(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_system(path)
    assert str(caught.value) == f"{path}:{message}"  # FILE:LINE: as every file error


def test_a_system_file_not_in_utf8_is_one_line_exit_2_naming_its_line(tmp_path, system_file, capsys):
    # a Latin-1 comment on line 2 ended in UnicodeDecodeError inside tomllib (exit 1)
    app = measured_application(tmp_path)
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b"[system]\n# caf\xe9\nprocesses = 65536\nmemory_per_process = 1024000000\n")
    status, out, err = run_cli(["requirements", app, "--system", str(latin1)], capsys)
    assert (status, out) == (2, "")
    assert err == (f"extrap-plugins: error: {latin1}:2: not UTF-8 text (byte 0xe9); TOML files are UTF-8: "
                    "save it as UTF-8\n")


def test_a_system_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SYSTEM_TOML.encode())
    system, upgrades = load_system(path)
    assert system.processes == 65536 and [u.name for u in upgrades] == list(HAND)


def test_text_csv_and_html_outputs(system_file):
    result = extrap_plugins.requirements({"seed004": seed004_models()}, system_file, roles=SEED004_ROLES)
    text = result.render("text")
    assert "upgrade: double the sockets (processes 2x, memory_per_process 0.5x)" in text
    assert re.search(r"^communication\s+0\.692 \(1\.38\)$", text, re.M)
    assert re.search(r"^verdict\s+worst$", text, re.M)
    lines = result.render("csv").splitlines()
    assert lines[0] == ("application,upgrade,best,worst,problem_size_per_process,problem_size,memory,computation,"
                        "communication,memory_access,memory_total,computation_total,communication_total,"
                        "memory_access_total")
    assert lines[2].startswith("seed004,double the sockets,0,1,0.5475")
    page = result.render("html")
    assert page.startswith("<!DOCTYPE html>") and "<td class=\"best\">best</td>" in page
    assert "http" not in page and "<script" not in page and "<link" not in page  # self-contained
    with pytest.raises(InputError, match="--export pdf: expected one of text, csv, json, html"):
        result.render("pdf")


def test_output_file_is_written_atomically(tmp_path, system_file, capsys):
    app = measured_application(tmp_path)
    target = tmp_path / "table.html"
    status, out, err = run_cli(["requirements", app, "--system", str(system_file), "--export", "html",
                                "-o", str(target)], capsys)
    assert status == 0 and out == "" and target.read_text().startswith("<!DOCTYPE html>")
    status, out, err = run_cli(["requirements", app, "--system", str(system_file), "-o",
                                str(tmp_path / "no" / "such" / "t.txt")], capsys)
    assert status == 2 and err.endswith("the folder for the output does not exist\n")


# ------------------------------------------------------------- one str is one name; roles like a known one
def test_one_str_is_one_call_path_glob_and_one_upgrade(tmp_path, system_file):
    # callpaths="main" was split into its letters: "no call path matches 'm', 'a', 'i', 'n'"; an upgrade given as
    # one str was read letter by letter too
    app = measured_application(tmp_path)
    one = extrap_plugins.requirements([app], system_file, callpaths="main", upgrades="bigger=processes:4x")
    listed = extrap_plugins.requirements([app], system_file, callpaths=["main"], upgrades=["bigger=processes:4x"])
    assert one.as_json() == listed.as_json()
    assert [u.name for u in one.upgrades] == [*HAND, "bigger"]
    with pytest.raises(InputError) as caught:
        extrap_plugins.requirements([app], system_file, callpaths=5)
    assert str(caught.value) == "callpaths: expected a name or a list of names, got the int 5"


NEAR_MEM = ("--role mem=bytes_used: 'mem' is not a known role (memory, computation, communication, memory_access), "
            "so it is added as a role of its own; did you mean 'memory' or 'memory_access'?")


def test_a_role_named_like_a_known_one_is_a_warning_with_a_did_you_mean(tmp_path, system_file, capsys):
    # --role mem=bytes_used added a role "mem" beside memory without a word; roles of one's own are documented
    # ("or any metric"), so a name close to a known role is a warning, not an error
    app = measured_application(tmp_path)
    status, out, err = run_cli(["requirements", app, "--system", str(system_file), "--role", "mem=bytes_used"],
                               capsys)
    assert status == 0 and re.search(r"^mem\s+1 \(2\)$", out, re.M)
    assert err == f"extrap-plugins: warning: {NEAR_MEM}\n"
    with pytest.warns(extrap_plugins.ExtrapWarning) as caught:
        extrap_plugins.requirements([app], system_file, roles={"compute": "flop"})
    assert [str(w.message) for w in caught if isinstance(w.message, extrap_plugins.ExtrapWarning)] == [
        "--role compute=flop: 'compute' is not a known role (memory, computation, communication, memory_access), so "
        "it is added as a role of its own; did you mean 'computation'?"]
    # a role of its own named unlike any known one is no warning
    status, out, err = run_cli(["requirements", app, "--system", str(system_file), "--role", "io=flop"], capsys)
    assert (status, err) == (0, "") and re.search(r"^io\s+2 \(2\)$", out, re.M)


def test_what_reading_warned_of_is_kept_per_application_in_the_json_text_and_html_reports(tmp_path):
    """A value left out while reading one application was said on stderr alone; the reports say it of that one."""
    bad, good, system = tmp_path / "bad.jsonl", tmp_path / "good.jsonl", tmp_path / "system.toml"
    said = measured(bad)
    measured(good, nan=False)
    system.write_text(SYSTEM)
    with pytest.warns(ExtrapWarning, match="left out as missing"):  # (time has no role: not modelled)
        result = extrap_plugins.requirements([str(bad), str(good)], system)
    assert result.reading_warnings == {"bad": [said], "good": []}
    assert json.loads(result.render("json"))["reading_warnings"] == {"bad": [said], "good": []}
    text = result.render("text")
    assert text.endswith(f"\n\nwarnings on reading bad:\n  {said}\n") and "warnings on reading good" not in text
    assert f'<p class="note">warnings on reading bad: {html.escape(said)}</p>' in result.render("html")


def test_what_each_application_s_reader_noted_is_kept_per_application_in_the_json_text_and_html_reports(tmp_path):
    """A key the reader of one application leaves unread is said in its notes alone (no warning): the requirements'
    JSON and reports said nothing of how it was read.  Its notes come before what reading it warned of."""
    runs, clean, system = tmp_path / "runs.jsonl", tmp_path / "clean.jsonl", tmp_path / "system.toml"
    note, said = noted(runs, nan=True)
    measured(clean, nan=False)
    system.write_text(SYSTEM)
    with pytest.warns(ExtrapWarning, match="left out as missing"):  # (time has no role: not modelled)
        result = extrap_plugins.requirements([str(runs), str(clean)], system)
    assert (result.reading_notes, result.reading_warnings) == ({"runs": [note], "clean": []},
                                                               {"runs": [said], "clean": []})
    document = json.loads(result.render("json"))
    assert (document["version"], document["reading_notes"]) == (1, {"runs": [note], "clean": []})
    assert list(document).index("reading_notes") + 1 == list(document).index("reading_warnings")
    text = result.render("text")
    assert text.endswith(f"\n\nnotes on reading runs:\n  {note}\n\nwarnings on reading runs:\n  {said}\n")
    assert "reading clean" not in text
    page = result.render("html")
    assert (f'<p class="note">notes on reading runs: {html.escape(note)}</p>\n'
            f'<p class="note">warnings on reading runs: {html.escape(said)}</p>') in page
    assert "reading clean" not in page
