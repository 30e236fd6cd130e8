"""``benchmarks/relearn_outputs.py``: RELeARN's timer tables as an Extra-P text file that the readers read."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

import extrap_plugins

ROOT = pathlib.Path(__file__).resolve().parents[1]

TABLE = """======== TIMERS GLOBAL OVER ALL RANKS ========
                                                (    min      |     avg      |     max     ) sec.
TIMERS: main()
  main()                                       : {main_min}      | 939.906      | {main_max}
  Initialization                               : 0.576674     | 0.579374     | 0.582721
    Update electrical activity                 : 2.5e-08      | 3.45078e-08  | 4.2e-08

======== RMA MEMORY ALLOCATOR RANK 0 ========
"""


@pytest.fixture(scope="module")
def outputs():
    spec = importlib.util.spec_from_file_location("relearn_outputs", ROOT / "benchmarks" / "relearn_outputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_run_of_a_file_is_a_repetition_and_a_kernel_s_value_is_its_max_over_the_ranks(outputs, tmp_path,
                                                                                           capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    # two runs at (32, 5000, 0.1), one at (64, 5000, 0.1); a file of another name is not a run
    (runs / "relearn_p32_size5000_theta0.1.multi.1.out").write_text(
        "Number ranks: 32\n" + TABLE.format(main_min=1.0, main_max=2.0) + TABLE.format(main_min=1.5, main_max=3.0))
    (runs / "relearn_p64_size5000_theta0.1.multi.2.out").write_text(TABLE.format(main_min=4.0, main_max=5.0))
    (runs / "notes.out").write_text(TABLE.format(main_min=0.0, main_max=0.0))
    assert outputs.main([str(runs)]) == 0
    text = tmp_path / "relearn3.txt"
    text.write_text(capsys.readouterr().out)
    experiment = extrap_plugins.read(text)
    assert experiment.parameter_names == ["p", "n", "theta"]
    coordinates, values = experiment.values_of("main()", "time")
    assert sorted(zip(coordinates[:, 0].tolist(), values.tolist())) == [(32, 2.0), (32, 3.0), (64, 5.0)]
    assert coordinates[:, 1:].tolist() == [[5000, 0.1]] * 3
    assert experiment.values_of("Update electrical activity", "time")[1].tolist() == [4.2e-08] * 3


def test_a_folder_without_relearn_output_is_one_line_and_exit_status_2(outputs, tmp_path, capsys):
    assert outputs.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"{tmp_path}: no relearn_p*_size*_theta*.out files\n"
