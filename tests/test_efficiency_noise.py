"""Efficiency on noisy measurements whose limiter is known by construction: main calls compute (``w/p``), comm
(``2·log2(p)``) and barrier (``0.5·p^(1/2)``), each run ±noise (uniform, seeded), three repetitions at p = 2..64;
main's value is the sum of its children's.  At the target, p = 512, comm's overhead against p0 = 2 is
``2·512·9 − 4 = 9212`` and barrier's ``0.5·(512^1.5 − 2^1.5) = 5791``: comm limits, with 61.4 % of the overhead."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

import extrap_plugins

COMM, BARRIER = 2 * 512 * 9 - 2 * 2 * 1, 0.5 * (512 ** 1.5 - 2 ** 1.5)


def runs(path: Path, noise: float, work: float, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    rows = []
    for p in (2, 4, 8, 16, 32, 64):
        for _ in range(3):
            exact = {"main->compute": work / p, "main->comm": 2.0 * np.log2(p), "main->barrier": 0.5 * p ** 0.5}
            noisy = {k: v * (1 + noise * rng.uniform(-1, 1)) for k, v in exact.items()}
            noisy["main"] = sum(noisy.values())
            rows += [(k, p, v) for k, v in noisy.items()]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["callpath", "p", "value"])
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("seed", [0, 1])
def test_the_limiter_is_named_where_the_total_s_model_cannot_see_the_overhead_in_the_noise_of_the_work(
        tmp_path, seed):
    # ±10 %: the work (1e5) is noisier than the whole overhead within the data (1e3 at p=64), so main's model is
    # constant in p (overhead 0 at the target); its children's models see theirs. It said "limiter: none (no
    # overhead at the target)" (seeds 0 and 1), or "undetermined" where main's model took a small term in p.
    result = extrap_plugins.efficiency(runs(tmp_path / "noisy.csv", 0.1, 1e5, seed))
    top = result.limiter
    assert top is not None and top.callpath == "main->comm" and top.consistent and top.decided
    assert abs(top.own_overhead - COMM) <= top.own_overhead_uncertainty < 0.05 * COMM  # 9338 ± 234.1 (seed 0)
    assert top.own_overhead_share_target == pytest.approx(COMM / (COMM + BARRIER), abs=0.02)  # 61.4 %
    main = next(c for c in result.callpaths if c.callpath == "main")
    assert main.modelled_overhead == 0 and main.overhead_target == pytest.approx(result.whole_overhead)
    assert main.overhead_target == pytest.approx(COMM + BARRIER, rel=0.02) and main.consistent
    # the scaling table and the largest p have the same overhead (main's model alone had E = 1 at every p, "none
    # found" up to p = 5.2e5): E = W / (W + 2·p·log2(p) + 0.5·p^1.5 − 5.4) with W = 1e5 + 5.4 is 0.8 at p = 759.6
    assert result.overhead_target == pytest.approx(main.overhead_target)
    assert result.rows[-1].efficiency == pytest.approx(main.efficiency_target)
    assert result.largest_p_at_level == pytest.approx(759.6, rel=0.03)
    if seed == 0:
        text = str(result)
        assert ("limiter: main->comm (61.8% of the overhead at p=512, own overhead 9338 ± 234.1 (± 3220 with the "
                "choice of model); its overhead grows as O(p·log p))\n") in text
        assert ("note: at p=512 the model of 1 call path cannot tell its overhead from its 95% uncertainty (the "
                "choice of model included; a model without a term in p tells none) and its modelled children's add "
                "up to more, so its overhead is taken as theirs: main (model 0 ± 4.43e5, children 1.51e4); the "
                "scaling table, the largest p at the level and the iso-efficiency function take the total's children's "
                "overhead too\n") in text
        assert "512 (target)  226      1.157e5    1.006e5  1.51e4       0.8695     222.6\n" in text
        assert "largest p with E ≥ 0.8: 759 (E falls below 0.8 at p=759.9)\n" in text
        document = json.loads(extrap_plugins.export_report(result, "json"))  # the same numbers, exact
        assert document["limiter"] == "main->comm" and document["whole_overhead"] == pytest.approx(15099.94, abs=0.01)
        first = document["callpaths"][0]
        assert (round(first["own_overhead"], 1), round(first["own_overhead_uncertainty"], 1)) == (9337.6, 234.1)
        assert [c["own_overhead_share_target"] for c in document["callpaths"][:2]] == pytest.approx(
            [0.6184, 0.3816], abs=1e-4)
        assert next(c for c in document["callpaths"] if c["callpath"] == "main")["modelled_overhead"] == 0
        rows = {r["callpath"]: r for r in csv.DictReader(io.StringIO(extrap_plugins.export_report(result, "csv")))
                if r["kind"] == "callpath"}
        assert float(rows["main->comm"]["own_overhead_uncertainty"]) == first["own_overhead_uncertainty"]
        assert float(rows["main"]["modelled_overhead"]) == 0 and float(rows["main"]["overhead"]) == pytest.approx(
            result.whole_overhead)


def test_exact_measurements_state_no_uncertainty(tmp_path):
    result = extrap_plugins.efficiency(runs(tmp_path / "exact.csv", 0.0, 1e5))
    assert result.limiter.callpath == "main->comm" and not any("cannot tell" in note for note in result.notes)
    assert ("limiter: main->comm (61.4% of the overhead at p=512; its overhead grows as O(p·log p))\n"
            in str(result))


def test_the_largest_p_at_the_level_is_printed_as_a_whole_process_count(tmp_path):
    # weak scaling, T = 1e-3·n + log2(p): E = (16 + 2) / (16 + log2(p)) at n = 16000 is 0.8 at p = 2^6.5 = 90.51;
    # it printed "largest p with E ≥ 0.8: 90.5", a count of processes there is not
    path = tmp_path / "weak.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["callpath", "p", "n", "value"])
        writer.writerows(("main", p, n, 1e-3 * n + np.log2(p)) for p in (4, 8, 16, 32, 64) for n in (4e3, 8e3, 16e3))
    result = extrap_plugins.efficiency(path, size="n", scaling="weak")
    assert result.largest_p_at_level == pytest.approx(2 ** 6.5, rel=1e-9)
    assert "largest p with E ≥ 0.8: 90 (E falls below 0.8 at p=90.51 for n=16000)\n" in str(result)
    assert json.loads(extrap_plugins.export_report(result, "json"))["largest_p_at_level"] == pytest.approx(2 ** 6.5)


def test_the_iso_efficiency_function_and_the_largest_p_take_the_children_s_overhead(tmp_path):
    # ±5 %, sizes n = 4e4..3.2e5 (compute n/p): main's model sees no overhead, so E was 1 everywhere: "iso-efficiency:
    # none: no problem size keeps E at 0.8", "largest p: none found", "limiter: none". By construction E = 0.8 needs
    # n = 4·(2·p·log2(p) + 0.5·p^1.5) = 8·p·log2(p) + 2·p^(3/2), less n(p0), and at n = 3.2e5 it falls below 0.8 at p = 1851.
    rng = np.random.default_rng(0)
    path = tmp_path / "sizes.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["callpath", "p", "n", "value"])
        for p in (2, 4, 8, 16, 32, 64):
            for n in (4e4, 8e4, 1.6e5, 3.2e5):
                for _ in range(3):
                    exact = {"main->compute": n / p, "main->comm": 2 * np.log2(p), "main->barrier": 0.5 * p ** 0.5}
                    noisy = {k: v * (1 + 0.05 * rng.uniform(-1, 1)) for k, v in exact.items()}
                    noisy["main"] = sum(noisy.values())
                    writer.writerows((k, p, n, v) for k, v in noisy.items())
    result = extrap_plugins.efficiency(path, size="n")
    assert result.limiter.callpath == "main->comm"
    iso = result.isoefficiency
    assert iso.growth == "O(p^(3/2))" and iso.formula == "288.2 + 7.943 · p · log2(p) + 1.982 · p^(3/2)"
    solved = [(p, n) for p, n in iso.points if n is not None]
    exact = [8 * p * np.log2(p) + 2 * p ** 1.5 - 21.7 for p, _ in solved]  # less n(p0): 4·(4 + 1.41)
    assert all(n == pytest.approx(e, rel=0.03) for (p, n), e in zip(solved, exact) if p >= 128)  # 0.3 % at 512
    assert result.largest_p_at_level == pytest.approx(1851, rel=0.01)  # 1861
