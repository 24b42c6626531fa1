"""The Lublin-Feitelson and Tsafrir-Etsion-Feitelson models against their published
parameters; byte-identical output for one seed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from instances.lublin import (
    BATCH,
    INTERACTIVE,
    PARAMS,
    daily_weights,
    gamma_cdf,
    generate,
    sample,
    size_params,
)
from instances.swf import write_swf

N = 120_000


@pytest.fixture(scope="module")
def lub():
    return sample(N, 128, seed=11)


def _tsu_grid(c, procs, m=200_001):
    """The two-stage uniform as a fine deterministic grid: (points, weights)."""
    lo, med, hi = size_params(c, procs)
    a = np.linspace(lo, med, m)
    b = np.linspace(med, hi, m)
    return np.concatenate([a, b]), np.concatenate([np.full(m, c.uprob / m),
                                                   np.full(m, (1 - c.uprob) / m)])


def _is_pow2(x):
    return (x & (x - 1)) == 0


@pytest.mark.parametrize("k", [INTERACTIVE, BATCH])
def test_sizes_match_published_parameters(lub, k):
    c = PARAMS[k]
    p = lub.procs[lub.job_class == k]
    n = len(p)
    assert n > 4000
    se = math.sqrt(0.25 / n)
    assert (p == 1).mean() == pytest.approx(c.serial_prob, abs=4 * se)
    # power-of-two parallel jobs: the pow2 branch, plus the other branch's round(2**par)
    # that happen to be powers of two (computed from the two-stage uniform on a grid)
    par, w = _tsu_grid(c, 128)
    other = np.floor(2.0**par + 0.5).astype(np.int64)
    q = float(w[_is_pow2(other)].sum())
    expect = c.pow2_prob + (1 - c.serial_prob - c.pow2_prob) * q
    assert ((p > 1) & _is_pow2(p)).mean() == pytest.approx(expect, abs=4 * se)
    # mean log2 size of parallel jobs
    e_pow2 = float((w * np.floor(par + 0.5)).sum())
    e_other = float((w * np.log2(other)).sum())
    expect_log = (c.pow2_prob * e_pow2 + (1 - c.serial_prob - c.pow2_prob) * e_other) / (
        1 - c.serial_prob)
    assert np.log2(p[p > 1]).mean() == pytest.approx(expect_log, abs=0.04)
    # without rounding the mean would be the two-stage uniform's mean (the paper's formula)
    lo, med, hi = size_params(c, 128)
    assert e_other == pytest.approx((c.uprob * (lo + med) + (1 - c.uprob) * (med + hi)) / 2,
                                    abs=0.05)
    assert p.max() <= 128


def _log_floor_mean(a, b, top=12.0, m=400_000):
    """E[ln floor(exp(G))] for G ~ gamma(a, b) truncated to G <= top (numeric integral)."""
    x = (np.arange(m) + 0.5) * (top / m)
    logpdf = (a - 1) * np.log(x) - x / b - math.lgamma(a) - a * math.log(b)
    pdf = np.exp(logpdf)
    pdf /= pdf.sum()
    return float((pdf * np.log(np.floor(np.exp(x)))).sum())


@pytest.mark.parametrize("k", [INTERACTIVE, BATCH])
def test_runtime_log_mean_per_class(lub, k):
    c = PARAMS[k]
    m = lub.job_class == k
    p = np.clip(c.pa * lub.procs[m] + c.pb, 0, 1)
    e1, e2 = _log_floor_mean(c.a1, c.b1), _log_floor_mean(c.a2, c.b2)
    expect = float((p * e1 + (1 - p) * e2).mean())
    logs = np.log(lub.runtime[m])
    assert logs.mean() == pytest.approx(expect, abs=4 * logs.std() / math.sqrt(m.sum()))
    # and the continuous model means a*b the paper tabulates are what the draws centre on
    assert c.a1 * c.b1 == pytest.approx(e1, abs=0.25)
    assert lub.runtime[m].max() <= math.exp(12)


def test_gamma_cdf_matches_erlang_closed_form():
    for shape in (1, 3, 6):
        for x in (0.5, 4.0, 17.0, 40.0):
            erl = 1 - sum(math.exp(-x) * x**k / math.factorial(k) for k in range(shape))
            assert gamma_cdf(x * 2.0, shape, 2.0) == pytest.approx(erl, abs=1e-12)


@pytest.mark.parametrize("k", [INTERACTIVE, BATCH])
def test_daily_cycle_shape(lub, k):
    c = PARAMS[k]
    w = daily_weights(c.anum, c.bnum)
    assert w.mean() == pytest.approx(1.0)
    # the weights peak at the mode (anum - 1) * bnum of the gamma, in half-hour buckets,
    # counted from bucket index i - 1
    assert abs(int(w.argmax()) - ((c.anum - 1) * c.bnum - 1)) <= 1
    m = lub.job_class == k
    hist = np.bincount((lub.submit[m] % 86400) // 1800, minlength=48) / m.sum()
    assert np.corrcoef(hist, w)[0, 1] > 0.9
    busy = np.argsort(w)[24:]
    assert hist[busy].sum() == pytest.approx(w[busy].sum() / 48, abs=0.03)
    assert hist[busy].sum() > 0.6  # day shift over night


def test_lublin_byte_reproducible(tmp_path):
    a, b = tmp_path / "a.swf", tmp_path / "b.swf"
    write_swf(a, generate(2000, 256, seed=5))
    write_swf(b, generate(2000, 256, seed=5))
    assert a.read_bytes() == b.read_bytes()
    write_swf(b, generate(2000, 256, seed=6))
    assert a.read_bytes() != b.read_bytes()
    w = generate(500, 100, seed=1)  # not a power of two: sizes stay within the machine
    assert max(j.procs for j in w.jobs) <= 100
    assert all(j.requested == max(j.runtime, 1) for j in w.jobs)
    assert [j.submit for j in w.jobs] == sorted(j.submit for j in w.jobs)


def test_lublin_bad_input():
    with pytest.raises(ValueError, match=r"procs must be an integer in \[8, 2\*\*53\]"):
        sample(10, 4, seed=1)
    with pytest.raises(ValueError, match="n_jobs"):
        sample(-1, 128, seed=1)


# ----------------------------------------------------------------------------- Tsafrir 2005

def test_tsafrir_estimates_cover_runtimes_and_popularity():
    from instances.tsafrir import add_estimates, n_bins

    w = generate(20_000, 128, seed=3)
    e = add_estimates(w, seed=1, max_estimate=48 * 3600)
    req = np.array([j.requested for j in e.jobs])
    run = np.array([j.runtime for j in e.jobs])
    assert (req >= run).all() and (req >= 1).all()
    assert [j.runtime for j in e.jobs] == [j.runtime for j in w.jobs]
    vals, cnt = np.unique(req, return_counts=True)
    assert len(vals) == n_bins(20_000) == 90 + round((20_000 - 10_000) * (340 - 90) / 60_000)
    # the paper's head: rank 1 (the maximal estimate) holds 89% minus ranks 2..20 of
    # 14.0491 exp(-0.177531 x) + 0.462513; the top 20 hold 89% of the jobs
    rank1 = 89 - sum(14.0491 * math.exp(-0.177531 * x) + 0.462513 for x in range(2, 21))
    top = np.argsort(-cnt)
    assert vals[top[0]] == 48 * 3600
    assert cnt[top[0]] / len(req) * 100 == pytest.approx(rank1, abs=0.05)
    assert cnt[top[:20]].sum() / len(req) * 100 == pytest.approx(89.0, abs=0.1)
    # the joint popular estimates are all present
    for t in (300, 900, 600, 1200, 1800, 3600, 7200, 4 * 3600, 18 * 3600):
        assert t in set(vals.tolist())


def test_tsafrir_byte_reproducible_and_bad_input(tmp_path):
    from instances.tsafrir import add_estimates

    w = generate(3000, 128, seed=2)
    a, b = tmp_path / "a.swf", tmp_path / "b.swf"
    write_swf(a, add_estimates(w, seed=9, max_estimate=48 * 3600))
    write_swf(b, add_estimates(w, seed=9, max_estimate=48 * 3600))
    assert a.read_bytes() == b.read_bytes()
    write_swf(b, add_estimates(w, seed=10, max_estimate=48 * 3600))
    assert a.read_bytes() != b.read_bytes()
    with pytest.raises(ValueError, match="below the longest run time"):
        add_estimates(w, seed=1, max_estimate=3600)
    with pytest.raises(ValueError, match="at least one hour"):
        add_estimates(generate(100, 128, seed=1), seed=1, max_estimate=60)
