"""The plot exporter: file formats and sizes, folders of safe names, axis ranges that cover the data."""

import pathlib
import struct

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the plot exporter needs the 'plot' extra (matplotlib)")

import extrap_plugins  # noqa: E402
from extrap_plugins import Experiment, Factor, InputError, Model, ModelSet, Segment, Term  # noqa: E402
from extrap_plugins.cli import ExitStatus, main  # noqa: E402
from extrap_plugins.extrapolation import extrapolate  # noqa: E402
from extrap_plugins.exporters.plot_exporter import DPI, FIGURE_SIZE, figure, plot_data, safe_names  # noqa: E402
from extrap_plugins.plugins import get_host  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "stencil.jsonl"


@pytest.fixture(scope="module")
def stencil():
    return extrap_plugins.model(extrap_plugins.read(EXAMPLE))


def one_parameter():
    """main: 3 + 2·p·log2(p) with ±5 % spread over 3 repetitions; main->setup: 0.3 + 0.002·p."""
    p = np.repeat([4.0, 8.0, 16.0, 32.0, 64.0], 3)
    spread = np.tile([0.95, 1.0, 1.05], 5)
    main = (3 + 2 * p * np.log2(p)) * spread
    setup = (0.3 + 0.002 * p) * spread
    experiment = Experiment.from_columns(["p"], callpath=["main"] * 15 + ["main->setup"] * 15, metric="time",
                                         coordinates=np.concatenate([p, p])[:, None],
                                         value=np.concatenate([main, setup]))
    return extrap_plugins.model(experiment)


def png_size(content: bytes) -> tuple[int, int]:
    assert content[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", content[16:24])


def test_the_extension_chooses_the_format(host, tmp_path, stencil):
    one = {"callpaths": ["main->setup"], "metrics": ["time"]}
    selected = extrap_plugins.model(stencil.experiment, **one)
    for suffix in ("png", "svg", "pdf"):
        extrap_plugins.export(selected, "plot", tmp_path / f"setup.{suffix}", target="p=4096,n=16384")
    png = (tmp_path / "setup.png").read_bytes()
    assert png_size(png) == (round(FIGURE_SIZE[0] * DPI), round(FIGURE_SIZE[1] * DPI))
    assert 20_000 < len(png) < 400_000
    svg = (tmp_path / "setup.svg").read_text()
    assert svg.startswith("<?xml") and "<svg" in svg and "main-&gt;setup [time]" in svg
    pdf = (tmp_path / "setup.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["setup.pdf", "setup.png", "setup.svg"]


def test_a_pdf_holds_one_page_per_model(host, tmp_path, stencil):
    extrap_plugins.export(stencil, "plot", tmp_path / "all.pdf")
    pdf = (tmp_path / "all.pdf").read_bytes()
    pages = pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") + pdf.count(b"/Type /Page>")
    assert pages == len(stencil) == 7


def test_a_folder_gets_one_file_per_call_path_with_safe_names(host, tmp_path, stencil):
    target = tmp_path / "plots"
    extrap_plugins.export(stencil, "plot", target, format="svg", target="p=1024,n=16384")
    assert sorted(p.name for p in target.iterdir()) == sorted([
        "main.time.svg", "main-setup.time.svg", "main-compute.time.svg", "main-halo_exchange.time.svg",
        "main-halo_exchange.bytes_sent.svg", "main-allreduce.time.svg", "main-allreduce.bytes_sent.svg",
        ".extrap-plugins-files.json"])  # the record of what we wrote: only those are ever replaced or removed
    assert all(p.stat().st_size > 10_000 for p in target.glob("*.svg"))


def test_plot_top_limits_the_files_to_the_first_in_the_ranking(host, tmp_path, stencil):
    target = tmp_path / "top"
    assert main(["model", str(EXAMPLE), "--export", "plot", "-o", str(target), "--target", "p=65536,n=16384",
                 "--sort", "target", "--plot-top", "2", "--metric", "time"]) == ExitStatus.OK
    ranked = extrapolate(extrap_plugins.model(stencil.experiment, metrics=["time"]), "p=65536,n=16384", sort="target")
    first = [ranked.model_set.models[i].callpath for i in ranked.order[:2]]
    assert set(first) == {"main->setup", "main"}  # setup grows with p and overtakes compute at p = 65536
    assert sorted(p.name for p in target.glob("*.png")) == ["main-setup.time.png", "main.time.png"]


def test_safe_names_are_distinct_and_harmless():
    names = safe_names([("main->MPI_Send(a/b)", "time"), ("main->MPI_Send(a:b)", "time"),
                        ("../etc", "bytes sent"), ("x" * 300, "time")])
    assert names[0].startswith("main-MPI_Send_a_b_.time-") and names[1].startswith("main-MPI_Send_a_b_.time-")
    assert names[0] != names[1]
    assert names[2] == "_etc.bytes_sent"
    assert len(names[3]) == 100 + 9 and names[3].startswith("x" * 100 + "-")
    assert all("/" not in n and not n.startswith(".") for n in names)


@pytest.mark.parametrize("path, message", [
    ("plots.jpg", "{tmp}/plots.jpg: unknown plot format '.jpg'; expected .png, .svg or .pdf, or a folder"),
    ("two.png", "{tmp}/two.png: 2 models to plot but one .png file: select one with --callpath and --metric, "
                "or give a folder (one file each) or a .pdf (one page each)"),
    ("missing/deep.png", "{tmp}/missing/deep.png: the folder for the output does not exist"),
])
def test_bad_outputs_are_input_errors(host, tmp_path, path, message):
    with pytest.raises(InputError) as error:
        extrap_plugins.export(one_parameter(), "plot", tmp_path / path)
    assert str(error.value) == message.format(tmp=tmp_path)
    assert list(tmp_path.iterdir()) == []


def rendered_limits(data, style="lines"):
    fig = figure(data, style)
    fig.canvas.draw()
    ax = fig.axes[0]
    return ax.get_xlim(), ax.get_ylim()


def test_axis_ranges_cover_the_measurements_and_the_target():
    ranked = extrapolate(one_parameter(), "p=65536")
    for data in plot_data(ranked):
        (x0, x1), (y0, y1) = rendered_limits(data)
        assert x0 <= 4 and x1 >= 65536
        assert y0 <= data.low.min() and y1 >= data.high.max()
        assert y0 <= data.interval[0] <= data.value_target <= data.interval[1] <= y1


def test_two_parameter_ranges_cover_the_data_in_both_styles(stencil):
    ranked = extrapolate(stencil, "p=4096,n=65536")
    data = plot_data(ranked)[1]  # main->setup
    (x0, x1), (y0, y1) = rendered_limits(data, "lines")
    assert x0 <= 4 and x1 >= 4096 and y0 <= data.low.min() and y1 >= max(data.high.max(), data.value_target)
    (x0, x1), (y0, y1) = rendered_limits(data, "heatmap")
    assert x0 <= 4 and x1 >= 4096 and y0 <= 1024 and y1 >= 65536
    fig = figure(data, "heatmap")
    mesh = fig.axes[0].collections[0]
    corner = data.model.predict({"p": 4 / 2**0.25, "n": 1024 / 2**0.25})
    assert mesh.get_array().min() == pytest.approx(corner, rel=0.05)


def test_segments_are_shaded_and_change_points_marked(host):
    p = np.array([2.0, 4, 8, 16, 32, 64, 128])
    value = np.where(p <= 16, 1 + 2 * p, 33 + 0.5 * (p - 16) ** 1.0)
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=p[:, None], value=value)
    segmented = Model("main", "time", ("p",), 0.0, segments=(
        Segment({"p": (2, 16)}, 1.0, (Term(2.0, {"p": Factor(1, 0)}),)),
        Segment({"p": (16, 128)}, 25.0, (Term(0.5, {"p": Factor(1, 0)}),))))
    model_set = ModelSet(("p",), [segmented], experiment=experiment)
    (data,) = plot_data(extrapolate(model_set, "p=1024"))
    fig = figure(data)
    ax = fig.axes[0]
    labels = [artist.get_label() for artist in ax.get_children()]
    assert "segments" in labels and "change point" in labels
    (line,) = [a for a in ax.lines if a.get_label() == "change point"]
    assert line.get_xdata()[0] == 16


def test_figures_are_rendered_on_the_executor_the_user_chose(host, tmp_path, stencil, monkeypatch):
    from extrap_plugins import executors

    made = []
    real = executors.create_executor
    monkeypatch.setattr(executors, "create_executor",
                        lambda kind="serial", jobs=None, preload=(): made.append((kind, jobs)) or real(kind, jobs))
    extrap_plugins.export(stencil, "plot", tmp_path / "serial", format="svg", executor="serial")
    extrap_plugins.export(stencil, "plot", tmp_path / "process", format="svg", executor="process", jobs=2)
    assert made == [("serial", None), ("process", 2)]
    serial = sorted(p.read_bytes() for p in (tmp_path / "serial").iterdir())
    assert serial == sorted(p.read_bytes() for p in (tmp_path / "process").iterdir())  # same figures
    assert executors.current() == ("auto", None)  # the choice ends with the export


def test_a_model_of_values_never_below_zero_is_not_drawn_below_zero(host):
    # as the target's value (0, with a warning) and a notebook's curve: before, the dashed curve fell to -20
    p = np.array([1.0, 2, 4, 8, 16, 32, 64])
    experiment = Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=p[:, None],
                                         value=100 - 10 * np.log2(p))
    falling = Model("main", "time", ("p",), 100.0, (Term(-10.0, {"p": Factor(0, 1)}),), points=7)
    with pytest.warns(extrap_plugins.ExtrapWarning, match="below 0 though every measured value is 0 or more"):
        (data,) = plot_data(extrapolate(ModelSet(("p",), [falling], experiment=experiment), "p=4096"))
    ax = figure(data).axes[0]
    curves = [line.get_ydata() for line in ax.lines if line.get_label() == "model" or line.get_linestyle() == "--"]
    assert len(curves) == 2 and all(np.nanmin(y) >= 0 for y in curves)
    assert np.nanmin(curves[1]) == pytest.approx(0, abs=0.5)  # it stops where it reaches 0 (p = 1024)
    assert ax.get_ylim()[0] > -10


def test_a_target_below_the_measurements_gets_the_curve_drawn_down_to_it():
    # p = 2 under p = 4 ... 64: the star used to float apart from a curve that began at p = 4
    ranked = extrapolate(one_parameter(), "p=2")
    data = plot_data(ranked)[0]
    fig = figure(data, "lines")
    curves = [line for line in fig.axes[0].get_lines() if line.get_label() == "model" or line.get_linestyle() == "--"]
    xs = np.concatenate([line.get_xdata() for line in curves])
    assert xs.min() == 2 and xs.max() == 64
    dashed = [line for line in curves if line.get_linestyle() == "--"]
    assert [(line.get_xdata().min(), line.get_xdata().max()) for line in dashed] == [(2, 4)]
    y_star = data.model.predict({"p": 2.0})
    below = dashed[0]
    assert below.get_ydata()[0] == pytest.approx(y_star)


@pytest.mark.parametrize("suffix, magic", [(".pdf", b"%PDF"), (".svg", b"<?xml"), (".PNG", b"\x89PNG")])
def test_o_with_any_format_of_the_plot_exporter_chooses_it(tmp_path, suffix, magic):
    # -o models.pdf and -o models.svg wrote the text table into a file of that name (only .png chose the plots)
    source = tmp_path / "runs.csv"
    source.write_text("p,value\n" + "".join(f"{p},{p + 1}\n" for p in (4, 8, 16, 32, 64)))
    out = tmp_path / f"models{suffix}"
    assert main(["model", str(source), "-o", str(out), "--executor", "serial", "--progress", "off"]) == ExitStatus.OK
    assert out.read_bytes().startswith(magic)
    assert get_host().exporter_for(out) == "plot"
