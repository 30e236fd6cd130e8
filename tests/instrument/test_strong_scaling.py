"""Strong scaling end to end: a real mpi4py program whose work is divided among the ranks, swept under mpiexec.

``examples/mandelbrot/mandelbrot.py`` deals ``n`` image rows out among ``p`` ranks, broadcasts a 16-byte view
from rank 0 and gathers the rows back.  Its counts, as the mean over the ranks, are exact falling functions
without a constant (``n / p``, ``16 / p``); before the falling hypotheses they became models such as
``128.6·n − 46.94·log2(p)·n``, negative a few doublings beyond the data.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

import extrap_plugins
from extrap_plugins.instrument import sweep
from shim_helpers import line_of

MANDELBROT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mandelbrot" / "mandelbrot.py"
WIDTH = 16


@pytest.fixture(scope="module")
def swept(mpiexec, tmp_path_factory):
    """A cross design, p = 1…5 at n = 60 and n = 16…256 at p = 2, and one point off the lines (p = 4, n = 128)."""
    runs = tmp_path_factory.mktemp("mandelbrot") / "runs"
    program = ["--", sys.executable, str(MANDELBROT), "--width", str(WIDTH), "--iterations", "20"]
    with pytest.MonkeyPatch.context() as environment:  # launches inherit no EXTRAP_* settings from outside
        for key in [key for key in os.environ if key.startswith("EXTRAP_")]:
            environment.delenv(key)
        for processes, n in [("1,2,3,4,5", "60"), ("2", "16,32,128,256"), ("4", "128")]:
            assert sweep.main(["--np", processes, "--param", f"n={n}", "-o", str(runs), *program]) == 0
    return extrap_plugins.read(runs)


def only_term(model) -> tuple[float, dict]:
    [term] = model.terms
    return term.coefficient, dict(term.factors)


def test_work_divided_among_ranks_is_modelled_as_falling_without_a_constant(swept):
    along_p = extrap_plugins.model(line_of(swept, "n", 60), executor="serial", metrics=["visits", "bytes_sent"])
    falling = {"p": extrap_plugins.Factor(-1, 0)}
    for callpath, metric, coefficient in [("main->compute_row", "visits", 60),
                                          ("main->MPI_Bcast", "bytes_sent", 16),
                                          ("main->MPI_Gatherv", "bytes_sent", 8 * WIDTH * 60)]:
        model = along_p.get(callpath, metric)
        assert only_term(model) == (pytest.approx(coefficient, rel=1e-9), falling), (callpath, metric, model)
        assert abs(model.constant) <= 1e-9 * coefficient
        # 100x beyond the largest measured p: still positive and still the exact count
        assert model.predict({"p": 500}) == pytest.approx(coefficient / 500, rel=1e-6)


def test_two_parameter_counts_are_the_exact_product_and_never_negative(swept):
    models = extrap_plugins.model(swept, executor="serial", metrics=["visits", "bytes_sent", "time"])
    visits = models.get("main->compute_row", "visits")
    assert only_term(visits) == (pytest.approx(1.0, rel=1e-9),
                                 {"p": extrap_plugins.Factor(-1, 0), "n": extrap_plugins.Factor(1, 0)})
    assert visits.predict({"p": 64, "n": 4096}) == pytest.approx(64.0, rel=1e-6)
    gather = models.get("main->MPI_Gatherv", "bytes_sent")
    assert gather.predict({"p": 500, "n": 25600}) == pytest.approx(8 * WIDTH * 25600 / 500, rel=1e-6)
    # every model of these positive measurements stays positive up to 100x the largest p and n
    for model in models:
        for point in [{"p": 5, "n": 256}, {"p": 500, "n": 256}, {"p": 5, "n": 25600}, {"p": 500, "n": 25600}]:
            assert model.predict(point) > 0, (model.callpath, model.metric, str(model), point)
