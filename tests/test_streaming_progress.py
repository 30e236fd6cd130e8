"""The progress display of ``model --stream on``: the runs read, then the call paths modelled, with a total."""

from __future__ import annotations

import itertools
import pathlib

from extrap_plugins import cli

P = (4, 8, 16, 32, 64)


def test_the_streamed_bars_end_reading_before_modelling_and_count_call_paths_to_a_total(tmp_path, capsys):
    # the modelling bar had no total ("modeling: 3series [00:00, ...]": no ETA on a long run), and the reading bar
    # stayed open through the modelling, ending with its time and rate ("25/25 [00:07, 3.20run/s]")
    runs = [tmp_path / f"run{p}.csv" for p in P]
    for p, run in zip(P, runs):
        run.write_text("p,callpath,metric,value\n" + "".join(f"{p},main->f{i},time,{1 + i * p}\n" for i in range(3)))
    assert cli.main(["model", *map(str, runs), "--stream", "on", "--scratch", str(tmp_path), "--executor", "serial",
                     "--progress", "on"]) == 0
    out, err = capsys.readouterr()
    states = [state.split(":")[0] + ": " + state.split("|")[-1].split(" [")[0].strip()
              for state in err.replace("\n", "\r").split("\r") if "|" in state]
    shown = [state for state, _ in itertools.groupby(states)]  # (tqdm redraws a bar as it likes)
    assert shown[shown.index("reading: 5/5"):] == ["reading: 5/5", "modeling: 0/3", "modeling: 3/3", "exporting: 0/1",
                                                   "exporting: 1/1"]
    assert out.count("main->f") == 3 and "modeling" not in out
    assert list(pathlib.Path(tmp_path).glob("extrap-scratch-*")) == []


def test_the_call_path_progress_is_no_modeler_option(tmp_path, capsys):
    run = tmp_path / "runs.csv"
    run.write_text("p,callpath,metric,value\n" + "".join(f"{p},main,time,{p}\n" for p in P))
    assert cli.main(["model", str(run), "--stream", "on", "--scratch", str(tmp_path),
                     "--option", "callpath_progress=1"]) == 2
    assert capsys.readouterr().err == ("extrap-plugins: error: --option 'callpath_progress=1': 'callpath_progress' is "
                                       "not an option here; use --progress\n")
