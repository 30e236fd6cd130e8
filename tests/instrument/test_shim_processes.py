"""Programs that make processes of their own (os.fork, multiprocessing): the children are not ranks of the run."""

from __future__ import annotations

import sys

import pytest

from shim_helpers import PROGRAMS, records, run_program, series


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_ending_its_workers_neither_ends_the_program_nor_adds_runs(tmp_path, method):
    # a pool ends its workers by SIGTERM: a forked worker's signal reached the parent's wakeup watcher through
    # the inherited pipe, and the parent ended with 143 as if it got the signal; every worker wrote a fragment
    result = run_program([sys.executable, str(PROGRAMS / "processes.py"), "pool", method], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["14", "-15"]
    assert "cut short" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.extrap.jsonl"]
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["status"] == "ok" and series(record, "visits") == {"main": 1, "main->square": 1}


def test_a_spawned_process_ended_while_it_imports_the_program_writes_nothing(tmp_path):
    # a pool that ends at once ends workers still importing the program: multiprocessing did not yet know them
    # as children, so the shim took the worker for a rank and wrote its fragment, "cut short by SIGTERM"
    result = run_program([sys.executable, str(PROGRAMS / "processes.py"), "early"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["-15"]
    assert "cut short" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.extrap.jsonl"]
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert series(record, "visits") == {"main": 1, "main->square": 1}


def test_a_spawned_child_that_fails_to_import_an_unguarded_program_writes_nothing(tmp_path):
    # the child failed before multiprocessing knew it as a child, and wrote a fragment of a failed "run" (a pool of
    # such children, respawned, wrote one each until the program was stopped)
    result = run_program([sys.executable, str(PROGRAMS / "unguarded.py")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1"]
    assert "bootstrapping phase" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.extrap.jsonl"]
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["status"] == "ok" and series(record, "visits") == {"main": 1}


def test_a_forked_child_writes_no_run_of_its_own(tmp_path):
    # the child ended normally and appended its copy of the parent's measurements as a second run
    result = run_program([sys.executable, str(PROGRAMS / "processes.py"), "fork"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("appended the measurements") == 1
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert series(record, "visits") == {"main": 1, "main->square": 1}
