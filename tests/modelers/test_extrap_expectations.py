"""Extra-P's own test expectations about models, re-expressed against our API.

Source: Extra-P 4.2.5 (github.com/extra-p/extrap, tag v4.2.5), ``tests/``.  Every case below cites the
Extra-P test file and test that asserts it.  The functions, points and values are written here; the cases on
Extra-P's input files read them from ``../shared/data/extrap`` (its ``tests/data``).  One section of tables per
Extra-P test file.  Where Extra-P's expectation is not what we do, the case asserts what we do and says why,
and the difference is listed in the README ("Differences from Extra-P's test expectations").

Not re-expressed (they are about Extra-P internals, not about the model that comes out): the building
blocks (``test_basic_modeler.py::test_default_functions``, ``test_generate_building_blocks``), the
selection of points for single-parameter models in sparse designs (``test_multi_param_modeler.py``:
``TestFindFirstMeasurements``, ``TestFindBestMeasurements`` except ``test_2parameters_example``,
``TestSparseModeling::test_3parameters_bands_incomplete``), and ``test_modeler_adaptive.py`` (the optional
``extrap_adaptive_modeler`` plugin, skipped in Extra-P's own runs without it).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

import extrap_plugins
from extrap_plugins.models import Factor, Model, Segment, Term
from extrap_plugins.plugins import PluginHost

from .conftest import experiment, factors, model_quietly


# ------------------------------------------------------------------ helpers
@dataclass(frozen=True)
class Truth:
    """A PMNF function: ``constant + sum(coefficient * prod(x^i * log2(x)^j))``.

    ``terms`` are ``(coefficient, {parameter: (i, j)})``.
    """

    constant: float
    terms: tuple = ()

    def evaluate(self, columns: dict) -> np.ndarray:
        result = np.full(len(next(iter(columns.values()))), float(self.constant))
        for coefficient, term in self.terms:
            value = np.full_like(result, float(coefficient))
            for name, (i, j) in term.items():
                value = value * columns[name] ** float(i) * np.log2(columns[name]) ** float(j)
            result = result + value
        return result

    def factor_sets(self) -> dict:
        return {frozenset((n, float(i), float(j)) for n, (i, j) in term.items() if (i, j) != (0, 0)): c
                for c, term in self.terms}


def build(parameters, points, truths: dict) -> extrap_plugins.Experiment:
    """An experiment with one call path per entry of ``truths`` (name -> Truth or array of values)."""
    X = np.asarray(points, dtype=float).reshape(len(points), -1)
    columns = dict(zip(parameters, X.T))
    return experiment(parameters, X, {name: t.evaluate(columns) if isinstance(t, Truth) else t
                                      for name, t in truths.items()})


def model_table(parameters, points, truths: dict, modeler="default", **options) -> dict:
    """Model a whole table of cases at once (one call path each): name -> Model."""
    return {m.callpath: m for m in model_quietly(build(parameters, points, truths), modeler, **options)}


def assert_function(model: Model, truth: Truth, rel=1e-6, abs_=1e-6):
    """The same terms (exponents), constant and coefficients within ``rel`` (Extra-P's assertApproxFunction)."""
    expected = truth.factor_sets()
    assert factors(model) == set(expected), model.formula
    assert model.constant == pytest.approx(truth.constant, rel=rel, abs=abs_), model.formula
    for term in model.terms:
        key = frozenset((n, f.exponent, f.log_exponent) for n, f in term.factors.items())
        assert term.coefficient == pytest.approx(expected[key], rel=rel), model.formula


def max_relative_error(function, X, values) -> float:
    return float(np.max(np.abs(function(X) - values) / np.abs(values)))


def blocks(text: str) -> list[tuple[Fraction, int]]:
    """``"1/4 0, 0 1"`` -> ``[(1/4, 0), (0, 1)]``: exponent pairs (i, j) of ``p^i*log2(p)^j``."""
    return [(Fraction(i), int(j)) for i, j in (item.split() for item in text.split(","))]


def block_id(i, j, name="p") -> str:
    parts = [] if i == 0 else [name if i == 1 else f"{name}^({i})" if Fraction(i).denominator > 1 else f"{name}^{i}"]
    parts += [] if j == 0 else [f"log2({name})" if j == 1 else f"log2({name})^{j}"]
    return "*".join(parts)


def single(c0, c1, i, j, name="p") -> Truth:
    return Truth(c0, ((c1, {name: (i, j)}),))


def text_file(shared_data, name):
    return shared_data / "extrap" / "text" / name


# Extra-P's 42 default building blocks with logarithms (SingleParameterModeler.create_default_building_blocks).
DEFAULT_BLOCKS = blocks(
    "0 1, 0 2, 1/4 0, 1/3 0, 1/4 1, 1/3 1, 1/4 2, 1/3 2, 1/2 0, 1/2 1, 1/2 2, 2/3 0, 3/4 0, 2/3 1, 3/4 1, "
    "4/5 0, 2/3 2, 3/4 2, 1 0, 1 1, 1 2, 5/4 0, 5/4 1, 4/3 0, 4/3 1, 3/2 0, 3/2 1, 3/2 2, 5/3 0, 7/4 0, "
    "2 0, 2 1, 2 2, 9/4 0, 7/3 0, 5/2 0, 5/2 1, 5/2 2, 8/3 0, 11/4 0, 3 0, 3 1")
# The 24 of them that test_modeling2, test_modeling3 and (negated) test_modeling_negative_exponents use.
SOME_BLOCKS = blocks(
    "0 1, 0 2, 1/4 0, 1/2 0, 1/2 1, 1/2 2, 2/3 0, 1 0, 1 1, 1 2, 5/4 0, 4/3 0, 3/2 0, 5/3 0, 7/4 0, 2 0, "
    "9/4 0, 7/3 0, 5/2 0, 5/2 2, 8/3 0, 11/4 0, 3 0, 3 1")
P5 = [2, 4, 8, 16, 32]


# ====================================================== tests/test_modeling.py
# test_default_single_parameter_modeling: one_parameter_6.txt (p = 1000 ... 16000, 5 repetitions).
# Extra-P asserts: met1 the constant 4.068; met2, met3, met4 one term p^2.
ONE_PARAMETER_6 = {
    "met1": Truth(4.068),
    "met2": Truth(0.0, ((1e-6, {"p": (2, 0)}),)),
    "met4": Truth(0.0, ((1.0, {"p": (2, 0)}),)),
}


@pytest.mark.parametrize("modeler, callpath", [(m, c) for m in ("default", "refining") for c in sorted(ONE_PARAMETER_6)],
                         ids=[f"{t}-{c}" for t in ("test_default_single_parameter_modeling", "test_general")
                              for c in sorted(ONE_PARAMETER_6)])
def test_modeling__default_single_parameter_modeling(shared_data, modeler, callpath):
    # test_modeling.py::test_default_single_parameter_modeling (default) and
    # test_refining_modeler.py::test_general (refining): the same file and expectations.
    models = model_quietly(extrap_plugins.read(text_file(shared_data, "one_parameter_6.txt")), modeler)
    model = models.get(callpath, "time")
    truth = ONE_PARAMETER_6[callpath]
    assert factors(model) == set(truth.factor_sets())
    if not truth.terms:
        assert model.constant == pytest.approx(4.068, rel=1e-12)
    else:
        # Extra-P asserts the term only; ours is that term, coefficient within the repetitions' noise.
        assert model.terms[0].coefficient == pytest.approx(truth.terms[0][0], rel=1e-3)


def test_modeling__default_single_parameter_modeling_met3_difference(shared_data):
    # test_modeling.py::test_default_single_parameter_modeling, met3: Extra-P expects one term p^2
    # (its model 2.182 + 1.012e-6 p^2, SMAPE 14.7 %).  The data are 1e-6 p^2 + log2(p) - 8.97 (2, 6, 19, 68, 261:
    # p^2 / 1e6 + 1, 2, 3, 4, 5); ours finds those two terms (SMAPE 0.03 %), and predicts p = 64000 within 0.1 %
    # (Extra-P's +1.1 %).  Deliberate difference: two terms where the data demand them.
    (model,) = model_quietly(extrap_plugins.read(text_file(shared_data, "one_parameter_6.txt")),
                             callpaths=["met3"])
    assert factors(model) == {frozenset({("p", 2.0, 0.0)}), frozenset({("p", 0.0, 1.0)})}
    assert model.quality.smape < 0.1
    truth = 1e-6 * 64000.0**2 + np.log2(64000.0) - np.log2(1000.0) + 1.0
    assert model.predict([64000.0]) == pytest.approx(truth, rel=1e-3)
    assert abs(2.182252631578941 + 1.0121669702114527e-06 * 64000.0**2 - truth) / truth > 0.01


def test_refining__general_met3_difference(shared_data):
    # test_refining_modeler.py::test_general, met3: Extra-P's refining modeler gives p^2 (2.182 + 1.012e-6 p^2,
    # SMAPE 14.7 %): its mediant refinement from whole exponents stops at 2 when 3/2 and 5/2 are no better.
    # The data have two terms (see above), which one-term refining cannot express; the best one-term fit misses
    # the five repetitions' noise far beyond chance (the misfit test of modelers/evidence.py), so the
    # cross-validation rule chooses on the coarse slices: p^(11/6) log2(p), SMAPE 4.4 %, three times closer to
    # the measurements, but 8 % low at p = 64000 (Extra-P's p^2: 1.1 % high).  Difference documented, not
    # deliberate in prediction: the default modeler gives the two terms.
    (model,) = model_quietly(extrap_plugins.read(text_file(shared_data, "one_parameter_6.txt")), "refining",
                             callpaths=["met3"])
    ((term,),) = [tuple(t.factors.items()) for t in model.terms]
    assert term[0] == "p" and term[1].exponent == pytest.approx(11 / 6) and term[1].log_exponent == 1
    assert model.quality.smape < 14.7 / 3
    truth = 1e-6 * 64000.0**2 + np.log2(64000.0) - np.log2(1000.0) + 1.0
    assert model.predict([64000.0]) / truth == pytest.approx(0.92, abs=0.01)


# test_default_multi_parameter_modeling: Extra-P asserts a model for every series (it runs).  Ours: a model for
# every series that fits the measurements at least as well as Extra-P 4.2.5's (its SMAPE, measured).
EXTRAP_SMAPE = {
    "two_parameter_1.txt": 6.644640850035617,
    "three_parameter_1.txt": 6.202264135108613,
    "three_parameter_2.txt": 6.202264135108643,
    "three_parameter_3.txt": 6.202264135108613,
}


@pytest.mark.parametrize("file", sorted(EXTRAP_SMAPE))
def test_modeling__default_multi_parameter_modeling(shared_data, file):
    # test_modeling.py::test_default_multi_parameter_modeling
    e = extrap_plugins.read(text_file(shared_data, file))
    models = model_quietly(e)
    assert len(models) == len(e.callpaths) * len(e.metrics) > 0
    for model in models:
        assert model.terms and model.quality.smape <= EXTRAP_SMAPE[file]
        assert np.all(np.isfinite(model.predict(4 * np.asarray(e.coordinates, dtype=float))))


def test_modeling__two_parameter_modeling(shared_data):
    # test_modeling.py::test_two_parameter_modeling: two_parameter_3.txt holds the same data in every series;
    # Extra-P asserts every model equals the first.  Ours: the same, and it is the generating function
    # 1 + 0.2 x^2 log2(y) (the data are two_parameter_1.txt's).
    models = list(model_quietly(extrap_plugins.read(text_file(shared_data, "two_parameter_3.txt"))))
    assert len(models) == 4
    for model in models[1:]:
        assert (model.constant, model.terms) == (models[0].constant, models[0].terms)
    assert factors(models[0]) == {frozenset({("x", 2.0, 0.0), ("y", 0.0, 1.0)})}
    assert models[0].constant == pytest.approx(1.0, abs=0.01)
    assert models[0].terms[0].coefficient == pytest.approx(0.2, rel=0.01)


# ================================================= tests/test_basic_modeler.py
def test_basic_modeler__get_matching_hypotheses():
    # test_basic_modeler.py::test_get_matching_hypotheses: a parameter value below 1 removes the logarithmic
    # terms (Extra-P: coordinates 15 and 0.1); values from 1 up keep them (31 and 1).
    x = np.array([0.1, 0.5, 2, 8, 15])
    below = model_table(["x"], x, {"f": 3 + 2 * np.log2(x + 1)})["f"]
    assert below.terms and all(f.log_exponent == 0 for t in below.terms for f in t.factors.values())
    from_one = model_table(["x"], [1, 2, 4, 8, 31], {"f": single(3, 2, 0, 1, "x")})["f"]
    assert_function(from_one, single(3, 2, 0, 1, "x"))


# test_modeling: 200 + 10 p^i log2(p)^j for every default block, p = 2 ... 32.
MODELING = {block_id(i, j): single(200, 10, i, j) for i, j in DEFAULT_BLOCKS}
# test_modeling2: 200 + c p^i log2(p)^j, c = 200, 3000, 40000, 500000.
MODELING2 = {f"{block_id(i, j)} c1={c}": single(200, c, i, j) for i, j in SOME_BLOCKS for c in (200, 3000, 40000, 500000)}
# test_modeling3: c + 1000 p^i log2(p)^j, c = 200, 3000, 40000, 500000.
MODELING3 = {f"{block_id(i, j)} c0={c}": single(c, 1000, i, j) for i, j in SOME_BLOCKS for c in (200, 3000, 40000, 500000)}
# test_modeling_negative_exponents (allow_negative_exponents): c + 1000 p^-i log2(p)^-j, c = 2, 30, 400, 5000.
# Extra-P's allow_negative_exponents (off by default there) is ours negative_exponents (on by default) with
# negative log exponents in J for the products p^-i log2(p)^-j (off by default here: see the README).
NEGATIVE = {f"{block_id(-i, -j)} c0={c}": single(c, 1000, -i, -j) for i, j in SOME_BLOCKS for c in (2, 30, 400, 5000)}
BASIC_TABLES = {"modeling": MODELING, "modeling2": MODELING2, "modeling3": MODELING3, "negative": NEGATIVE}


ALLOW_NEGATIVE_EXPONENTS = {"negative_exponents": True, "log_exponents": "-2,-1,0,1,2"}


@pytest.fixture(scope="module")
def basic_models():
    return {name: model_table(["p"], P5, table, **(ALLOW_NEGATIVE_EXPONENTS if name == "negative" else {}))
            for name, table in BASIC_TABLES.items()}


def test_basic_modeler__negative_exponents_products_need_negative_log_exponents():
    # test_modeling_negative_exponents, with our defaults: p^-1 log2(p)^-1 is not among the default hypotheses
    # (Extra-P's default has no falling factors at all); the default model is not that function.
    truth = single(30, 1000, -1, -1)
    model = model_table(["p"], P5, {"f": truth})["f"]
    assert frozenset({("p", -1.0, -1.0)}) not in factors(model)
    with_products = model_table(["p"], P5, {"f": truth}, **ALLOW_NEGATIVE_EXPONENTS)["f"]
    assert_function(with_products, truth)


@pytest.mark.parametrize("table, case", [(name, case) for name, table in BASIC_TABLES.items() for case in table],
                         ids=[f"test_{name}[{case}]" for name, table in BASIC_TABLES.items() for case in table])
def test_basic_modeler__modeling(basic_models, table, case):
    # test_basic_modeler.py::test_modeling, test_modeling2, test_modeling3, test_modeling_negative_exponents:
    # exact data give back the function (places=6).
    assert_function(basic_models[table][case], BASIC_TABLES[table][case])


# test_compare (and test_refining_modeler.py::test_compare): c0 + c1 p^i log2(p)^j at p = 4 ... 128, Extra-P's
# expected model; the coefficients here are Extra-P's expected ones (6 digits), the data made from them.
P6 = [4, 8, 16, 32, 64, 128]
COMPARE = [
    ("0", 0, 124.679, 0.0), ("0", 1, 392.838, 683.865), ("0", 2, 138.692, 112.444), ("1/4", 0, 231.803, 757.593),
    ("1/3", 0, 147.402, 740.655), ("1/4", 1, 662.167, 136.579), ("1/3", 1, 535.662, 447.751),
    ("1/4", 2, 412.571, 996.344), ("1/3", 2, 93.1123, 20.3674), ("1/2", 0, 939.802, 402.946),
    ("1/2", 1, 198.498, 330.31), ("1/2", 2, 364.895, 955.113), ("2/3", 0, 210.333, 216.927),
    ("3/4", 0, 584.901, 547.382), ("2/3", 1, 953.743, 838.683), ("3/4", 1, 355.505, 203.859),
    ("4/5", 0, 836.414, 988.978), ("2/3", 2, 30.3707, 735.046), ("3/4", 2, 868.356, 651.151),
    ("1", 0, 218.36, 796.594), ("1", 1, 729.819, 193.813), ("1", 2, 640.886, 219.184), ("5/4", 0, 41.4144, 336.011),
    ("5/4", 1, 334.343, 396.167), ("4/3", 0, 646.764, 836.173), ("4/3", 1, 961.324, 976.431),
    ("3/2", 0, 993.506, 789.848), ("3/2", 1, 306.314, 176.299), ("3/2", 2, 623.752, 545.819),
    ("5/3", 0, 674.515, 93.5247), ("7/4", 0, 192.792, 921.017), ("2", 0, 601.39, 695.368), ("2", 1, 95.6461, 399.173),
    ("2", 2, 910.093, 649.33), ("9/4", 0, 991.654, 196.894), ("7/3", 0, 454.801, 800.545), ("5/2", 0, 444.677, 788.915),
    ("5/2", 1, 561.68, 118.038), ("5/2", 2, 98.8668, 982.996), ("8/3", 0, 119.32, 194.108),
    ("11/4", 0, 335.214, 713.46), ("3", 0, 854.089, 475.687), ("3", 1, 498.148, 788.437),
]
COMPARE_TRUTH = {f"{block_id(Fraction(i), j) or 'constant'}": (Truth(c0 + c1) if (i, j) == ("0", 0) else
                                                              single(c0, c1, Fraction(i), j))
                 for i, j, c0, c1 in COMPARE}
# Where Extra-P's expected model is not the function the data come from: (i, j, c0, c1) of its expectation.
# basic: the constant of p^(5/2) log2(p)^2 is lost (values span 5 orders of magnitude).
COMPARE_EXTRAP_BASIC = {"p^(5/2)*log2(p)^2": ("5/2", 2, 0.0, 982.996)}
# refining (compare_with_RSS): its mediant refinement stops at neighbouring whole or simple exponents.
COMPARE_EXTRAP_REFINING = {
    "p^(3/4)*log2(p)": ("1", 0, 48.1612, 429.067), "p^(2/3)*log2(p)^2": ("1", 0, -37722.0, 7374.79),
    "p^(3/4)*log2(p)^2": ("1", 1, -602.755, 1361.36), "p^(5/4)": ("1", 1, 302.182, 160.594),
    "p^(5/4)*log2(p)": ("1", 2, 352.638, 189.925), "p^(4/3)*log2(p)": ("1", 2, -34653.4, 703.225),
    "p^(9/4)": ("2", 1, -5485.73, 94.5984), "p^(7/3)": ("2", 2, 326893.0, 82.0924),
    "p^(5/2)*log2(p)^2": ("5/2", 2, 0.0, 982.996), "p^(8/3)": ("5/2", 1, 145065.0, 62.1811),
    "p^(11/4)": ("3", 0, 2.6705e6, 211.32),
}


@pytest.fixture(scope="module")
def compare_models():
    return {modeler: model_table(["p"], P6, COMPARE_TRUTH, modeler) for modeler in ("default", "refining")}


@pytest.mark.parametrize("modeler, extrap", [("default", COMPARE_EXTRAP_BASIC), ("refining", COMPARE_EXTRAP_REFINING)],
                         ids=["test_basic_modeler", "test_refining_modeler"])
@pytest.mark.parametrize("case", list(COMPARE_TRUTH))
def test_compare(compare_models, modeler, extrap, case):
    # test_basic_modeler.py::test_compare and test_refining_modeler.py::test_compare (places=3 there; ours
    # to 1e-6).  Ours is the function the data come from in every row.  Where Extra-P expects another model
    # (listed above), that model is not exact (more than 1e-4 off somewhere; ours 1e-9): a documented difference.
    truth = COMPARE_TRUTH[case]
    model = compare_models[modeler][case]
    assert_function(model, truth, rel=1e-6)
    p = np.asarray(P6, dtype=float)
    assert max_relative_error(lambda x: model.predict(x[:, None]), p, truth.evaluate({"p": p})) < 1e-9
    if case in extrap:
        i, j, c0, c1 = extrap[case]
        theirs = single(c0, c1, Fraction(i), j)
        assert max_relative_error(lambda x: theirs.evaluate({"p": x}), p, truth.evaluate({"p": p})) > 1e-4


# ============================================ tests/test_multi_param_modeler.py
# TestSparseModeling::test_modeling etc.: Extra-P's 42 default blocks, taken in consecutive pairs (triples,
# quadruples) for the parameters, combined as below; exact data on full grids; the function comes back.
def consecutive(k):
    return list(zip(*(DEFAULT_BLOCKS[s:] for s in range(k))))


def product(constant, coefficient, names, factors_):
    return Truth(constant, ((coefficient, dict(zip(names, factors_))),))


def additive(constant, coefficients, names, factors_):
    return Truth(constant, tuple((c, {n: f}) for c, n, f in zip(coefficients, names, factors_)))


def grid_of(axis, k):
    return list(itertools.product(axis, repeat=k))


MULTI_TABLES = {
    # test_modeling: 200 + 10 x^.. y^.. (5 x 5 grid of 2 ... 32)
    "test_modeling": (("x", "y"), grid_of(P5, 2),
                      {" ".join(block_id(*f, n) for f, n in zip(fs, "xy")): product(200, 10, "xy", fs)
                       for fs in consecutive(2)}),
    # test_modeling_plus: 200 + 10 f(x) + 20 g(y)
    "test_modeling_plus": (("x", "y"), grid_of(P5, 2),
                           {" + ".join(block_id(*f, n) for f, n in zip(fs, "xy")): additive(200, (10, 20), "xy", fs)
                            for fs in consecutive(2)}),
    # test_modeling_3p: 200 + 10 f(x) g(y) h(z) (5^3 grid; places=4 there)
    "test_modeling_3p": (("x", "y", "z"), grid_of(P5, 3),
                         {" ".join(block_id(*f, n) for f, n in zip(fs, "xyz")): product(200, 10, "xyz", fs)
                          for fs in consecutive(3)}),
    # test_modeling_3p_plus: 200 + 10 f(x) + 20 g(y) + 30 h(z)
    "test_modeling_3p_plus": (("x", "y", "z"), grid_of(P5, 3),
                              {" + ".join(block_id(*f, n) for f, n in zip(fs, "xyz")):
                               additive(200, (10, 20, 30), "xyz", fs) for fs in consecutive(3)}),
    # test_modeling_3p_mul_plus: 200 + 100 f(x) + 2 g(y) h(z)
    "test_modeling_3p_mul_plus": (("x", "y", "z"), grid_of(P5, 3),
                                  {f"{block_id(*fs[0], 'x')} + {block_id(*fs[1], 'y')} {block_id(*fs[2], 'z')}":
                                   Truth(200, ((100, {"x": fs[0]}), (2, {"y": fs[1], "z": fs[2]})))
                                   for fs in consecutive(3)}),
    # test_modeling_4p: 20000 + 10 f(x) g(y) h(z) w(v) (5^4 grid of 2, 4, 8, 10, 12)
    "test_modeling_4p": (("x", "y", "z", "w"), grid_of([2, 4, 8, 10, 12], 4),
                         {" ".join(block_id(*f, n) for f, n in zip(fs, "xyzw")): product(20000, 10, "xyzw", fs)
                          for fs in consecutive(4)}),
}


@pytest.fixture(scope="module")
def multi_models():
    return {name: model_table(list(names), points, table) for name, (names, points, table) in MULTI_TABLES.items()}


@pytest.mark.parametrize("table, case", [(name, case) for name, (_, _, t) in MULTI_TABLES.items() for case in t],
                         ids=[f"{name}[{case}]" for name, (_, _, t) in MULTI_TABLES.items() for case in t])
def test_multi_param_modeler__modeling(multi_models, table, case):
    # test_multi_param_modeler.py::TestSparseModeling::test_modeling, test_modeling_plus, test_modeling_3p,
    # test_modeling_3p_plus, test_modeling_3p_mul_plus, test_modeling_4p (places=6; 4 for test_modeling_3p).
    assert_function(multi_models[table][case], MULTI_TABLES[table][2][case])


def jsonl(shared_data, name):
    return shared_data / "extrap" / "jsonlines" / name


# TestSparseModeling::test_1, test_2, test_input_1, test_complete_matrix_2p: Extra-P asserts that they run.
# Ours: the model Extra-P 4.2.5 gives (measured) where it is exact, the generating function where it is not.
SPARSE_FILES = {
    "test1.jsonl": Truth(0.0, ((1.0, {"x": (2, 0)}), (1.0, {"y": (1, 0)}))),
    "test2.jsonl": Truth(0.00999999962, ((6.03214, {"n": (2, 1)}),)),
    "input_1.jsonl": Truth(2.72951999745, ((6.92306, {"x": (2, 1)}), (455.677, {"x": (2, 1), "y": (0, 1)}))),
}


@pytest.mark.parametrize("file", sorted(SPARSE_FILES))
def test_multi_param_modeler__sparse_modeling_files(shared_data, file):
    # test_multi_param_modeler.py::TestSparseModeling::test_1 (test1.jsonl), test_2, test_input_1
    (model,) = model_quietly(extrap_plugins.read(jsonl(shared_data, file)))
    assert_function(model, SPARSE_FILES[file], rel=1e-5)


def test_multi_param_modeler__complete_matrix_2p(shared_data):
    # TestSparseModeling::test_complete_matrix_2p (single_parameter_point_selection = 'all'): it runs.  The data
    # are two_parameter_1.txt's (1 + 0.2 x^2 log2(y), ~1 % noise); Extra-P's model 1.374 + 6.698 log2(y) +
    # 0.04384 x^(3/2) log2(x)^2 log2(y) has SMAPE 6.6 %; ours is the generating function.
    (model,) = model_quietly(extrap_plugins.read(jsonl(shared_data, "complete_matrix_2p.jsonl")))
    assert factors(model) == {frozenset({("x", 2.0, 0.0), ("y", 0.0, 1.0)})}
    assert model.constant == pytest.approx(1.0, abs=0.01)
    assert model.terms[0].coefficient == pytest.approx(0.2, rel=0.01)
    assert model.quality.smape < 6.644640850035617 / 10


@pytest.mark.parametrize("file, points, constant", [
    ("cross_matrix_2p.jsonl", 9, None), ("band_matrix_2p.jsonl", 14, None), ("matrix_3p.jsonl", 13, 1.0)])
def test_multi_param_modeler__sparse_designs_need_no_full_matrix(shared_data, file, points, constant):
    # TestSparseModeling::test_cross_matrix_2p, test_band_matrix_2p, test_matrix_3p: Extra-P (point selection
    # 'all') warns "Could not use all measurement points. At least 25 measurements are needed".  Deliberate
    # difference: ours models sparse designs from lines of five values (Ritter et al. 2020) and uses every
    # point, without that warning.
    e = extrap_plugins.read(jsonl(shared_data, file))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (model,) = extrap_plugins.model(e, host=PluginHost(autoload=False))
    assert not [w for w in caught if "measurement points" in str(w.message)]
    assert model.points == points
    X = np.asarray(e.coordinates, dtype=float)
    assert np.all(np.isfinite(model.predict(X))) and np.all(model.predict(X) > 0)
    if constant is not None:  # matrix_3p.jsonl: every value is 1
        assert (model.constant, model.terms) == (constant, ())


def test_multi_param_modeler__2parameters_example():
    # TestFindBestMeasurements::test_2parameters_example: 6 x 5 points of (p, n), noisy; the model must fit at
    # least as well as the constant (RSS and SMAPE).
    data = {
        262144: [4.94252, 4.83981, 4.85823, 4.83241, 5.58763, 4.68139],
        524288: [5.37036, 5.38705, 5.298, 5.39656, 5.11765, 5.15787],
        1048576: [5.95559, 5.61095, 5.25399, 5.24275, 5.2352, 5.24489],
        2097152: [6.5095, 5.39807, 5.40696, 5.39214, 5.39057, 5.39554],
        4194304: [7.26402, 7.27444, 7.28555, 7.26867, 7.29042, 7.31057],
    }
    X = [(p, n) for n in data for p in (48, 96, 144, 192, 240, 288)]
    y = np.concatenate(list(data.values()))
    (model,) = model_table(["p", "n"], X, {"main": y}).values()
    constant = y.mean()
    assert model.quality.rss <= np.sum((y - constant) ** 2)
    assert model.quality.smape <= 100 * np.mean(2 * np.abs(y - constant) / (np.abs(y) + np.abs(constant)))


# ============================================== tests/test_segmented_modeler.py
def changing(f, g, points, change):
    """f below the change point, g from it on (create_experiment)."""
    p = np.asarray(points, dtype=float)
    return np.where(p >= change, g(p), f(p))


SEGMENTED = {
    # test_segmented_data_one: p^2, then 30 + p from p = 6
    "test_segmented_data_one": (range(1, 11), changing(lambda p: p**2, lambda p: 30 + p, range(1, 11), 6),
                                [single(0, 1, 2, 0), single(30, 1, 1, 0)]),
    # test_segmented_data_one_minimal_number_of_measurements: p^2, then 50 + 4 p from p = 5
    "test_segmented_data_one_minimal_number_of_measurements": (
        range(1, 10), changing(lambda p: p**2, lambda p: 50 + 4 * p, range(1, 10), 5),
        [single(0, 1, 2, 0), single(50, 4, 1, 0)]),
    # test_segmented_data_two: log2(p), then p^2 from p = 22
    "test_segmented_data_two": (range(4, 41, 4), changing(np.log2, lambda p: p**2, range(4, 41, 4), 22),
                                [single(0, 1, 0, 1), single(0, 1, 2, 0)]),
    # test_no_segmentation: p^2 log2(p) throughout
    "test_no_segmentation": (range(10, 101, 10), changing(lambda p: p**2 * np.log2(p), lambda p: p**2 * np.log2(p),
                                                          range(10, 101, 10), 50), [single(0, 1, 2, 1)]),
    # test_exmple_two: 67 + 63 p^(1/4) log2(p)^2, then 93 + 64 p^(5/3) from p = 6
    "test_exmple_two": (range(1, 11), changing(lambda p: 67 + 63 * p**0.25 * np.log2(p) ** 2,
                                               lambda p: 93 + 64 * p ** (5 / 3), range(1, 11), 6),
                        [single(67, 63, Fraction(1, 4), 2), single(93, 64, Fraction(5, 3), 0)]),
}


@pytest.mark.parametrize("case", list(SEGMENTED))
def test_segmented_modeler__segments(case):
    # test_segmented_modeler.py: the functions of the segments (assertApproxFunction, places=6).
    points, values, truths = SEGMENTED[case]
    (model,) = model_quietly(build(["p"], list(points), {"main": values}), "segmented")
    pieces = [Model("main", "time", ("p",), s.constant, s.terms) for s in model.segments] if model.segments \
        else [model]
    assert len(pieces) == len(truths)
    for piece, truth in zip(pieces, truths):
        assert_function(piece, truth)


def const_square():
    # test_const_square_segmentation: about 4 up to p = 2000, then p^2 / 1e6, five repetitions (four at 16000).
    rows = [(500, [4.1, 3.9, 4.0, 4.0, 4.1]), (1000, [4.1, 3.9, 4.0, 4.0, 4.1]), (2000, [4.1, 3.9, 4.0, 4.0, 4.1]),
            (4000, [16, 15.999, 16.01, 16.01, 15.99]), (8000, [64, 64, 64, 64.01, 63.99]),
            (16000, [256.01, 255.99, 256, 256])]
    X = [[p] for p, values in rows for _ in values]
    return extrap_plugins.Experiment.from_columns(["p"], callpath="main", metric="time", coordinates=X,
                                                  value=[v for _, values in rows for v in values])


def test_segmented_modeler__const_square_segmentation_needs_five_points_per_segment():
    # test_const_square_segmentation, first part: with 5 points per segment needed, 6 points are not segmented.
    (model,) = model_quietly(const_square(), "segmented")
    assert model.segments is None


def test_segmented_modeler__const_square_segmentation_with_three_points():
    # test_const_square_segmentation, second part: Extra-P's min_measurement_points = 3 is both its window and
    # the points a segment needs: ours window=3, min_points=3.  Segmented: 4.02, then p^2 / 1e6.
    (model,) = model_quietly(const_square(), "segmented", window=3, min_points=3)
    assert [dict(s.range) for s in model.segments] == [{"p": (500.0, 2000.0)}, {"p": (4000.0, 16000.0)}]
    assert_function(Model("main", "time", ("p",), model.segments[0].constant, model.segments[0].terms), Truth(4.02))
    assert_function(Model("main", "time", ("p",), model.segments[1].constant, model.segments[1].terms),
                    single(0, 1e-6, 2, 0), rel=1e-4)


@pytest.mark.parametrize("order", ["sorted", "interleaved"],
                         ids=["test_linear_square_segmentation", "test_unordered_measurements"])
def test_segmented_modeler__linear_square(order):
    # test_linear_square_segmentation and test_unordered_measurements: 2 p for p = 0 ... 6, then p^2 + 14 for
    # p = 7 ... 14 (interleaved: the measurements of both halves alternate); segmented and exact at every point.
    left, right = [(c, 2.0 * c) for c in range(7)], [(c, c**2 + 14.0) for c in range(7, 15)]
    rows = left + right if order == "sorted" else [r for pair in itertools.zip_longest(left, right) for r in pair if r]
    points, values = [p for p, _ in rows], np.array([v for _, v in rows])
    (model,) = model_quietly(build(["p"], points, {"main": values}), "segmented")
    assert model.segments is not None and len(model.segments) == 2
    np.testing.assert_allclose(model.predict(np.array(points, dtype=float)[:, None]), values, rtol=1e-6, atol=1e-9)


def test_segmented_modeler__segmented_function():
    # test_segmented_function: p below 1, p^2 from 1 to 5, p^3 above; evaluated at 0.5, 1, 2, 8.
    def piece(lo, hi, i):
        return Segment({"p": (lo, hi)}, 0.0, (Term(1.0, {"p": Factor(float(i), 0.0)}),))

    model = Model("main", "time", ("p",), 0.0, segments=(piece(-np.inf, 1, 1), piece(1, 5, 2), piece(5, np.inf, 3)))
    np.testing.assert_array_equal(model.predict(np.array([[0.5], [1.0], [2.0], [8.0]])), [0.5, 1, 4, 512])
