"""Experiments saved by Extra-P: Extra-P 4 archives (with and without repetitions) and Extra-P 3 binary files."""

from __future__ import annotations

import json
import pathlib
import zipfile

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins import cli
from extrap_plugins.errors import ExtrapWarning, InputError
from extrap_plugins.readers import extrap_experiment_reader as reader
from extrap_plugins.readers import text_reader

DATA = pathlib.Path(__file__).with_name("data")
NOTE = ("{what} keeps one {statistic} per point, not the repetitions: every point has one value "
        "(--reader-option value=mean|median|minimum|maximum chooses the statistic)")


def test_archive_with_repetitions_holds_the_source_values(shared_data):
    """``extrap_kept_values.extra-p`` was saved by Extra-P 4.2.5 from text/one_parameter_3.txt, repetitions kept."""
    saved = reader.read_archive(DATA / "extrap_kept_values.extra-p", {})
    source = text_reader.read(shared_data / "extrap" / "text" / "one_parameter_3.txt", {})
    assert saved.notes == []
    assert saved.parameter_names == ["x"]
    assert [m.name for m in saved.metrics] == ["time", "flops"] == [m.name for m in source.metrics]
    for metric in ("time", "flops"):
        got, want = saved.values_of("compute", metric), source.values_of("compute", metric)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert saved.repetition[:5].tolist() == [0, 1, 2, 3, 4]


def test_archive_without_repetitions(shared_data):
    experiment = reader.read_archive(shared_data / "extrap" / "experiments" / "two_parameter3.txt.extra-p",
                                     {"value": "maximum"})
    assert experiment.parameter_names == ["x", "y"]
    assert [c.name for c in experiment.callpaths] == ["merge", "sort"]
    assert [m.name for m in experiment.metrics] == ["time", "flops"]
    assert len(experiment) == 4 * 25
    coordinates, values = experiment.values_of("merge", "time")
    assert values[coordinates.tolist().index([20.0, 1.0])] == 1.0146314163801136
    assert experiment.notes == [NOTE.format(what="the experiment", statistic="maximum")]


def test_extrap3_regions_of_the_same_name_and_statistics(shared_data):
    path = shared_data / "extrap" / "input" / "experiment_3"
    experiment = reader.read_extrap3(path, {})
    assert [c.name for c in experiment.callpaths] == ["met1", "met2", "met1 #1", "met3"]
    assert [(m.name, m.unit) for m in experiment.metrics] == [("test", "")]
    assert experiment.values_of("met1", "test")[1][0] == 4.0200000000000005
    assert experiment.notes == [NOTE.format(what="an Extra-P 3 experiment", statistic="mean")]
    expected = {"median": 4.0, "minimum": 3.9, "maximum": 4.1}
    for statistic, value in expected.items():
        assert reader.read_extrap3(path, {"value": statistic}).values_of("met1", "test")[1][0] == value


def test_extrap3_multi_parameter_with_units_and_sparse_models(shared_data, host):
    for name in ("experiment_3_mp", "experiment_3_sparse"):
        experiment = extrap_plugins.read(shared_data / "extrap" / "input" / name)
        assert experiment.reader == "extrap3"
        assert experiment.parameter_names == ["x", "y", "z"]
        assert len(experiment.callpaths) == 4 and len(experiment.metrics) == 9 and len(experiment) == 36 * 27
        assert dict((m.name, m.unit) for m in experiment.metrics)["time"] == "sec"
    coordinates, values = experiment.values_of("main", "PAPI_FP_OPS")
    assert coordinates[:3].tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 10.0], [1.0, 1.0, 25.0]]
    assert values[:3].tolist() == [6.0, 9.0, 9.0]


def test_bad_archives(tmp_path):
    not_zip = tmp_path / "a.extra-p"
    not_zip.write_text("hello")
    with pytest.raises(InputError) as error:
        reader.read_archive(not_zip, {})
    assert str(error.value) == (f"{not_zip}: not a valid zip archive (File is not a zip file); "
                                "Extra-P 4 experiments are zip archives")
    other = tmp_path / "b.extra-p"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(InputError) as error:
        reader.read_archive(other, {})
    assert str(error.value) == f"{other}: no experiment.json in this zip archive; is it an Extra-P experiment?"
    assert not reader.sniff_archive(other) and not reader.sniff_archive(not_zip)


def test_bad_extrap3_files(tmp_path):
    truncated = tmp_path / "truncated"
    truncated.write_bytes(b"\x01\x00\x11\x00\x00\x00EXTRAP_EXPERIMENT\x03\x00\x00\x001.0\x09\x00\x00\x00Parameter\x00")
    with pytest.raises(InputError) as error:
        reader.read_extrap3(truncated, {})
    assert str(error.value) == (f"{truncated}: truncated Extra-P 3 experiment: the 'Parameter' record at byte 30 is "
                                "cut off by the end of the file at byte 44")
    assert reader.sniff_extrap3(truncated)
    other = tmp_path / "other"
    other.write_bytes(b"\x01\x00\x05\x00\x00\x00HELLO")
    with pytest.raises(InputError) as error:
        reader.read_extrap3(other, {})
    assert str(error.value) == f"{other}: not an Extra-P 3 experiment (it does not start with EXTRAP_EXPERIMENT)"
    assert not reader.sniff_extrap3(other)


def test_options(shared_data):
    path = shared_data / "extrap" / "input" / "experiment_3"
    with pytest.raises(InputError) as error:
        reader.read_extrap3(path, {"value": "average"})
    assert str(error.value) == "option value='average': expected one of mean, median, minimum, maximum"
    with pytest.raises(InputError) as error:
        reader.read_extrap3(path, {"measure": "mean"})
    assert str(error.value) == "the extrap3 reader has no option 'measure'; its options are: value"


@pytest.mark.parametrize("offset, message", [
    (0, "corrupt Extra-P 3 header: the byte-order mark at byte 0 (00 01) says big-endian, but the header after it "
        "is little-endian"),
    (3335, "corrupt Extra-P 3 experiment: a record at byte 3335: the string at byte 3335 declares 9,472 bytes, but "
           "only 6,761 follow"),
    (4523, "corrupt Extra-P 3 experiment: the 'Model' record at byte 4490: the string at byte 4523 declares 5,888 "
           "bytes, but only 5,573 follow"),
    (4565, "corrupt Extra-P 3 experiment: the 'Model' record at byte 4490: the count at byte 4558 is "
           "864,691,128,455,135,233, more items than the 5,534 bytes after it can hold"),
    (603, "corrupt Extra-P 3 experiment: the 'Coordinate' record at byte 581: coordinate 0 names the undeclared "
          "parameter 'Coordinate'"),
])
def test_extrap3_swapped_bytes_are_a_corrupt_record_not_a_truncated_file(shared_data, host, tmp_path, capsys,
                                                                         offset, message):
    data = bytearray((shared_data / "extrap" / "input" / "experiment_3").read_bytes())
    data[offset], data[offset + 1] = data[offset + 1], data[offset]
    path = tmp_path / "experiment_3"
    path.write_bytes(bytes(data))
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {path}: {message}"]


def test_extrap3_swapped_pairs_across_the_file_are_bad_input_and_none_says_truncated(shared_data, tmp_path):
    data = (shared_data / "extrap" / "input" / "experiment_3").read_bytes()
    path = tmp_path / "experiment_3"
    for offset in range(0, len(data) - 1, 9):  # every 9th offset keeps it quick; all were checked once
        swapped = bytearray(data)
        swapped[offset], swapped[offset + 1] = swapped[offset + 1], swapped[offset]
        path.write_bytes(bytes(swapped))
        try:
            reader.read_extrap3(path, {})
        except InputError as error:
            assert "truncated" not in error.message, (offset, error.message)


@pytest.mark.parametrize("size, message", [
    (0, "the file is empty"),
    (9000, "truncated Extra-P 3 experiment: a record at byte 8993 is cut off by the end of the file at byte 9000"),
    (10099, "truncated Extra-P 3 experiment: the 'ExperimentPoint' record at byte 9977 is cut off by the end of the "
            "file at byte 10099"),
])
def test_extrap3_cut_short_is_truncated(shared_data, tmp_path, size, message):
    path = tmp_path / "experiment_3"
    path.write_bytes((shared_data / "extrap" / "input" / "experiment_3").read_bytes()[:size])
    with pytest.raises(InputError) as error:
        reader.read_extrap3(path, {})
    assert str(error.value) == f"{path}: {message}"


def archive_with(tmp_path, source, change) -> pathlib.Path:
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["experiment.json"])
    change(document)
    members["experiment.json"] = json.dumps(document).encode()
    path = tmp_path / "bad.extra-p"
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def test_archive_bad_values_name_the_measurement(shared_data, host, tmp_path, capsys):
    source = shared_data / "extrap" / "experiments" / "two_parameter3.txt.extra-p"

    def bad_mean(document):
        document["measurements"]["merge"]["time"][1]["mean"] = "abc"

    path = archive_with(tmp_path, source, bad_mean)
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {path}: experiment.json: call path 'merge', metric 'time', point (x=20.0, y=2.0) "
        "(measurements[\"merge\"][\"time\"][1]): mean 'abc' is not a number"]

    def bad_coordinate(document):
        document["measurements"]["sort"]["flops"][3]["coordinate"][1] = "y?"

    path = archive_with(tmp_path, source, bad_coordinate)
    with pytest.raises(InputError) as error:
        reader.read_archive(path, {})
    assert str(error.value) == (
        f"{path}: experiment.json: call path 'sort', metric 'flops', point (x=20.0, y=\"y?\") "
        "(measurements[\"sort\"][\"flops\"][3]): coordinate of 'y' 'y?' is not a number")


def small_archive(tmp_path, entries: list[dict], parameters=("x",)) -> pathlib.Path:
    """An Extra-P 4 archive of one series, ``merge [time]``, made of ``entries`` (defaults filled in)."""
    measurements = [{"coordinate": [float(x)], "mean": float(x), "median": float(x), "minimum": float(x),
                     "maximum": float(x), "std": 0.0, "repetitions": 1, "values": None, **entry}
                    for x, entry in zip((1, 2, 4, 8, 16), entries)]
    document = {"Extra-P": "4.2.0", "parameters": list(parameters), "measurements": {"merge": {"time": measurements}}}
    path = tmp_path / "small.extra-p"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("experiment.json", json.dumps(document))
    return path


def test_small_archive_reads(tmp_path):
    experiment = reader.read_archive(small_archive(tmp_path, [{}] * 5), {})
    assert experiment.points().ravel().tolist() == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("entry, message", [
    # a second measurement at a coordinate became a repetition, and a point disappeared
    ({"coordinate": [1.0]}, 'call path \'merge\', metric \'time\': point (x=1) is listed twice (at '
                            'measurements["merge"]["time"][0] and measurements["merge"]["time"][1])'),
    # read as the number 81 before
    ({"mean": "81"}, 'call path \'merge\', metric \'time\', point (x=2.0) (measurements["merge"]["time"][1]): '
                     "mean '81' is a string, not a number (write it without quotes)"),
    ({"coordinate": ["2"]}, 'call path \'merge\', metric \'time\', point (x="2") (measurements["merge"]["time"][1]): '
                            "coordinate of 'x' '2' is a string, not a number (write it without quotes)"),
    ({"mean": None}, 'call path \'merge\', metric \'time\', point (x=2.0) (measurements["merge"]["time"][1]): '
                     "mean null is not a number"),
    # the file was named twice: "small.extra-p: small.extra-p: experiment.json: ..."
    ({"values": [1, "a"]}, "'values' must be [chunk, index], got [1, \"a\"]"),
])
def test_archive_damage_is_named_once_with_the_measurement(tmp_path, host, capsys, entry, message):
    path = small_archive(tmp_path, [{}, entry, {}, {}, {}])
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"extrap-plugins: error: {path}: experiment.json: {message}"]


def test_archive_parameter_declared_twice(tmp_path):
    with pytest.raises(InputError) as error:
        reader.read_archive(small_archive(tmp_path, [{"coordinate": [1.0, 1.0]}] * 5, parameters=("x", "x")), {})
    assert str(error.value) == f"{tmp_path / 'small.extra-p'}: experiment.json: parameter 'x' is declared twice"


# ---------------------------------------------------- --measure and stored statistics
MEASURE_WARNING = ("extrap-plugins: warning: {path}: an Extra-P 3 experiment keeps one mean per point, not the "
                   "repetitions: --measure median has no repetitions to act on and the stored means are modelled; "
                   "--reader-option value=median reads the stored medians")


def test_measure_median_on_stored_means_says_which_option_reads_the_medians(shared_data, host, capsys):
    """``--measure median`` was ignored without a word for a file that keeps no repetitions: the measure does not
    reach the reader (it reads before anything is modelled), so the warning names the option that does."""
    path = shared_data / "extrap" / "input" / "experiment_3"
    assert cli.main(["model", str(path), "--callpath", "met1", "--measure", "median"]) == 0
    out, err = capsys.readouterr()
    assert MEASURE_WARNING.format(path=path) in err.splitlines()
    assert cli.main(["model", str(path), "--callpath", "met1", "--measure", "median",
                     "--reader-option", "value=median"]) == 0
    out, err = capsys.readouterr()
    assert "keeps one" not in err
    table, notes = out.split("\nnotes on reading:\n")
    assert table.splitlines()[-1].split()[:3] == ["met1", "test", "4.04"]  # the stored medians
    assert notes.startswith("  an Extra-P 3 experiment keeps")
    for args in ([], ["--measure", "mean"], ["--reader-option", "value=median"]):
        assert cli.main(["model", str(path), "--callpath", "met1", *args]) == 0
        assert "keeps one" not in capsys.readouterr().err


def test_measure_warning_for_part_of_an_archive_and_other_statistics(shared_data):
    from extrap_plugins.readers._common import measure_warning

    path = shared_data / "extrap" / "experiments" / "two_parameter3.txt.extra-p"
    experiment = reader.read_archive(path, {})
    assert measure_warning(experiment, "maximum") == (
        f"{path}: the experiment keeps one mean per point, not the repetitions: --measure maximum has no repetitions "
        "to act on and the stored means are modelled; --reader-option value=maximum reads the stored maxima")
    assert measure_warning(reader.read_archive(path, {"value": "maximum"}), "maximum") == ""
    experiment.notes = [NOTE.format(what="part of the experiment", statistic="mean")]
    assert measure_warning(experiment, "median").startswith(
        f"{path}: part of the experiment keeps one mean per point, not the repetitions: --measure median has no "
        "repetitions to act on there and the stored means are modelled")


def test_archive_statistics_extrap_saved_as_nan_or_inf_are_missing_values(tmp_path, host, capsys):
    """Extra-P 4 saves a statistic that is not finite as the string "nan", "inf" or "-inf" (a point whose every
    repetition is nan: also "std": "--"); it was an error, "mean 'nan' is a string, not a number (write it without
    quotes)", for a file the user did not write (Extra-P itself cannot read it back)."""
    path = small_archive(tmp_path, [{}, {"mean": "nan", "median": "nan", "minimum": "nan", "maximum": "nan",
                                         "std": "--", "repetitions": 2}, {"mean": "inf"}, {"mean": "-Inf"}, {}])
    with pytest.warns(ExtrapWarning, match=r"1 value is not a finite number .*: measurement merge \[time\] \(x=2\)$"):
        experiment = reader.read_archive(path, {"value": "median"})
    assert np.isnan(experiment.values_of("merge", "time")[1]).tolist() == [False, True, False, False, False]
    assert cli.main(["model", str(path)]) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        f"extrap-plugins: warning: {path}: 3 values are not finite numbers (nan, inf or beyond the range of a float) "
        "and are left out as missing: measurements merge [time] (x=2), merge [time] (x=4), merge [time] (x=8)")


def test_archive_values_without_call_path_or_metric_are_root_and_time(tmp_path):
    """Extra-P's text reader names DATA before any REGION, and a file without METRIC lines, "" (saved so in its
    archives); our text reader names them <root> and time, and so must the archive of the same file (they were
    printed as blank names, and `compare` found nothing in common between the text file and its archive)."""
    path = small_archive(tmp_path, [{}] * 5)
    document = json.loads(zipfile.ZipFile(path).read("experiment.json"))
    series = document["measurements"].pop("merge")["time"]
    document["measurements"] = {"": {"": series}, "main": {"": series}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("experiment.json", json.dumps(document))
    experiment = reader.read_archive(path, {})
    assert [c.name for c in experiment.callpaths] == ["<root>", "main"]
    assert [m.name for m in experiment.metrics] == ["time"]
    assert experiment.values_of("<root>", "time")[1].tolist() == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("header, message", [
    # numpy's header parser raised tokenize.TokenError: "internal error: TokenError: ('EOF in multi-line
    # statement', (2, 0))", exit 1
    (b"'shape': (5,), }  (", "its header cannot be read"),
    (b"'shape': (5,), }  )", "its header cannot be read"),
])
def test_archive_damaged_value_header_is_bad_input(tmp_path, host, capsys, header, message):
    with zipfile.ZipFile(DATA / "extrap_kept_values.extra-p") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["values/0.vals"] = members["values/0.vals"].replace(b"'shape': (5,), }  ", header, 1)
    path = tmp_path / "damaged.extra-p"
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    assert cli.main(["model", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {path}: values/0.vals: entry 0 is not a numpy array ({message})"]


def test_archive_parameter_without_a_name(tmp_path):
    # modelled and printed as the model "1 · " before
    with pytest.raises(InputError) as error:
        reader.read_archive(small_archive(tmp_path, [{}] * 5, parameters=(" ",)), {})
    assert str(error.value) == (f"{tmp_path / 'small.extra-p'}: experiment.json: 'parameters' must be a non-empty "
                                "list of names")


def test_a_truncated_or_damaged_archive_is_called_so(tmp_path, host, capsys):
    # each was "not a valid zip archive (...); Extra-P 4 experiments are zip archives", or, for a damaged
    # compressed member, "a compressed stream is corrupt (...)" without the member
    data = small_archive(tmp_path, [{}] * 5).read_bytes()
    cut = tmp_path / "cut.extra-p"
    cut.write_bytes(data[:-30])
    flipped = tmp_path / "flipped.extra-p"
    flipped.write_bytes(data[:60] + bytes([data[60] ^ 0xFF]) + data[61:])
    with zipfile.ZipFile(deflated := tmp_path / "deflated.extra-p", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("experiment.json", json.dumps({"parameters": ["x"], "measurements": {}}) * 50)
    broken = bytearray(deflated.read_bytes())
    broken[45] = 0xFF  # the first byte of the deflated data: a block of type 3, which deflate has not
    deflated.write_bytes(bytes(broken))
    for path in (cut, flipped, deflated):
        assert cli.main(["model", str(path)]) == cli.ExitStatus.BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [
        f"extrap-plugins: error: {cut}: truncated zip archive: it starts as one, but the directory at its end is "
        "missing (the file was cut short)",
        f"extrap-plugins: error: {flipped}: damaged zip archive: Bad CRC-32 for file 'experiment.json'",
        f"extrap-plugins: error: {deflated}: damaged zip archive: experiment.json cannot be inflated (Error -3 while "
        "decompressing data: invalid block type)",
    ]


def _damaged(shared_data, tmp_path, change) -> pathlib.Path:
    """Extra-P's ``two_parameter3.txt.extra-p`` with ``change`` done to its experiment.json."""
    with zipfile.ZipFile(shared_data / "extrap" / "experiments" / "two_parameter3.txt.extra-p") as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    path = tmp_path / "two_parameter3.txt.extra-p"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members:
            archive.writestr(name, change(body) if name == "experiment.json" else body)
    return path


def test_experiment_json_cut_short_names_its_own_line_and_column(shared_data, tmp_path):
    # "two_parameter3.txt.extra-p:1: experiment.json is not valid JSON: Expecting ',' delimiter": line 1 of a zip
    # archive, and no column in a document of one line
    cut = b'"coordinate": [20.0'
    path = _damaged(shared_data, tmp_path, lambda body: body[:body.index(cut) + len(cut)])
    column = len(reader_member(path)) + 1
    with pytest.raises(InputError) as error:
        reader.read_archive(path, {})
    assert error.value.line is None
    assert str(error.value) == (f"{path}: experiment.json, line 1, column {column}: not valid JSON: Expecting ',' "
                                "delimiter; the text ends there (the file cut short?)")


def test_experiment_json_not_in_utf8_names_its_line_and_byte(shared_data, tmp_path):
    # "experiment.json is not valid JSON: 'utf-8' codec can't decode byte 0xf6 in position 21207: invalid start byte"
    path = _damaged(shared_data, tmp_path, lambda body: body.replace(b'"sort"', '"Größe"'.encode("latin-1")))
    with pytest.raises(InputError) as error:
        reader.read_archive(path, {})
    assert str(error.value) == f"{path}: experiment.json, line 1: not UTF-8 text (byte 0xf6)"


def reader_member(path: pathlib.Path) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return archive.read("experiment.json")
