"""The privacy audits of private_mean: neighbouring datasets and the two releases' noise scales."""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from helpers.checks.core import _fail, _say, ALPHA, check_seed
from helpers.checks.private_mean._shared import _private_mean_repeated, AUDIT_CONFIDENCE, AUDITS
from helpers.checks.private_mean.simulator import _null_splits, accuracy_dataset, exceedance
from helpers.audit import RECENT, epsilon_lower_bound


# --- private_mean: privacy audit --------------------------------------------------------

_AUDIT_HINTS = {
    "composition": (
        "这对相邻数据集上，和与计数的改变都把均值往同一个方向推，输出同时泄露两次发布的隐私。检查：两次发布的 ε 之和是否等于 ε（串行组合，定理 6-2）？"
        "计数是否也加了噪声？数据是否截断了？",
        "on this pair the sum and the count both push the mean the same way, so the output leaks through both "
        "releases. Check: do the two releases' ε add up to ε (sequential composition, Theorem 6-2)? Is the count "
        "noisy too? Are the values clipped?",
    ),
    "upper_bound_mean": (
        "这对相邻数据集中，d 的（截断后的）均值恰好等于上界。检查：和与计数是否各自抽取了独立的噪声（同一个噪声用两次时，输出可能完全没有噪声）？"
        "两次发布的 ε 之和是否等于 ε？计数是否也加了噪声？",
        "on this pair the (clipped) mean of d equals the upper bound. Check: do the sum and the count get "
        "independent noise draws (one draw used twice can leave the output with no noise at all)? Do the two "
        "releases' ε add up to ε? Is the count noisy too?",
    ),
    "noise_scales": (
        "这些数据与准确性测试的数据来自同一个分布。输出的尾部比任何满足 ε₁ + ε₂ = ε 的分配都要窄：两次发布的噪声太小。检查：两次发布的 ε 之和是否等于 ε"
        "（串行组合，定理 6-2）？和的噪声尺度是否为 Δ/ε₁、计数的噪声尺度是否为 1/ε₂？计数是否也加了噪声？和与计数是否各自抽取了独立的噪声？噪声是否加在截断后的和与计数本身上（而不是例如 x - m 的和上）？",
        "these data come from the same distribution as the accuracy tests'. The outputs' tails are narrower than "
        "any split with ε₁ + ε₂ = ε allows: the two releases' noise is too small. Check: do the two releases' ε "
        "add up to ε (sequential composition, Theorem 6-2)? Is the sum's noise scale Δ/ε₁ and the count's 1/ε₂? "
        "Is the count noisy too? Do the sum and the count get independent noise draws? Is the noise added to the "
        "clipped sum and the count themselves (not, e.g., to the sum of x - m)?",
    ),
    "interior": (
        "这对相邻数据集与准确性测试的数据来自同一个分布：d' 比 d 多一个超出区间的值。检查：是否在所有数据上都加了噪声（不能只在某些数据上）？"
        "两次发布的 ε 之和是否等于 ε？计数是否也加了噪声？数据是否截断了？",
        "this pair comes from the same distribution as the accuracy tests' data: d' has one more value, beyond "
        "the range. Check: is noise added on every dataset (not only on some)? Do the two releases' ε add up to "
        "ε? Is the count noisy too? Are the values clipped?",
    ),
    "small_interior": (
        "这对相邻数据集与准确性测试的数据来自同一个分布，但记录不到 50 条：d' 比 d 多一个超出区间的值。检查：是否在所有数据上都加了噪声"
        "（数据少时也不能省略）？两次发布的 ε 之和是否等于 ε？计数是否也加了噪声？数据是否截断了？",
        "this pair comes from the same distribution as the accuracy tests' data, but with fewer than 50 records: "
        "d' has one more value, beyond the range. Check: is noise added on every dataset (small ones too)? Do the "
        "two releases' ε add up to ε? Is the count noisy too? Are the values clipped?",
    ),
    "one_sided_range": (
        "这个区间不包含 0。检查：增删一条记录时截断后的和最多改变多少（定义 6-2）？数据是否截断了？",
        "the range does not contain 0. Check: by how much can adding or removing one record change the "
        "clipped sum (Definition 6-2)? Are the values clipped?",
    ),
    "mostly_negative_range": (
        "这个区间的下界是负数，而且绝对值比上界大得多。检查：增删一条记录时截断后的和最多改变多少（定义 6-2）？数据是否截断了？",
        "the range has a negative lower bound much larger in size than the upper bound. Check: by how much can adding or removing one record change "
        "the clipped sum (Definition 6-2)? Are the values clipped?",
    ),
}


def audit_config(audit: str, seed: int) -> dict[str, Any]:
    """``AUDITS[audit]`` with every value and bound multiplied by a scale c in [1/2, 2] drawn from ``seed``.

    Scaling the data, the range and hence the sensitivity by c leaves the
    privacy loss of a correct mechanism (and of the usual mistakes)
    unchanged, but a solution cannot recognise the audit by fixed numbers
    read in this module: the autograder's per-run seed (``DP_COURSE_SEED``)
    changes c.
    """
    spec = dict(AUDITS[audit])
    if audit in ("interior", "small_interior"):
        g = np.random.default_rng([seed, 13] if audit == "interior" else [seed, 14])
        values, lower, upper, epsilon = accuracy_dataset(int(g.integers(2**31)))
        if audit == "small_interior":  # a prefix of i.i.d. values: the same distribution, 2..49 of them
            values = values[:int(g.integers(2, 50))]
        width, centre = upper - lower, float(np.mean(np.clip(values, lower, upper)))
        extra = lower - 0.37 * width if centre > (lower + upper) / 2 else upper + 0.37 * width
        spec.update(scale=1.0, lower=lower, upper=upper, epsilon=epsilon, d=values.tolist(), extra=float(extra))
        return spec
    scale = float(np.round(2.0 ** np.random.default_rng([seed, 12]).uniform(-1.0, 1.0), 3))
    spec.update(scale=scale, lower=spec["lower"] * scale, upper=spec["upper"] * scale,
                d=[x * scale for x in spec["d"]], extra=spec["extra"] * scale)
    return spec


#: Outputs per batch of calls in an audit; batches of d and d' alternate.
AUDIT_CHUNK = 1000


def audit_private_mean(private_mean: Callable, audit: str, seed: int):
    """Run the audit named ``audit`` (a key of ``AUDITS``, drawn by :func:`audit_config`); return the AuditResult.

    All n_select + n_final outputs of d and of d' are drawn first, in
    alternating batches of at most ``AUDIT_CHUNK`` calls, and each dataset's
    outputs are shuffled (by the check's generator) before the auditor splits
    them into its selection and final samples. For a stateless mechanism this
    changes nothing (the outputs are i.i.d.); a solution that behaves
    differently in its first calls of a dataset, or once it has seen many,
    leaves the same share of such outputs in both samples.
    """
    if audit == "noise_scales":  # not a pair: a NoiseScaleResult (ε₁ + ε₂ in units of ε, claim 1)
        return noise_scale_bound(functools.partial(_repeated_array, private_mean), seed)
    spec = audit_config(audit, seed)
    lower, upper, epsilon = spec["lower"], spec["upper"], spec["epsilon"]
    d = list(spec["d"])
    d_prime = d + [spec["extra"]]
    total = spec["n_select"] + spec["n_final"]
    rng = np.random.Generator(np.random.PCG64(seed))
    pools: dict[int, list[float]] = {0: [], 1: []}
    while len(pools[1]) < total:
        size = min(AUDIT_CHUNK, total - len(pools[1]))
        for key, data in ((0, d), (1, d_prime)):
            pools[key] += _private_mean_repeated(private_mean, data, lower, upper, epsilon, rng, size)
    shuffled = {key: list(rng.permutation(np.array(pool))) for key, pool in pools.items()}

    def sampler(data, _rng, size):
        pool = shuffled[0 if data is d else 1]
        out, pool[:size] = np.array(pool[:size]), []
        return out

    return epsilon_lower_bound(None, d, d_prime, rng, sampler=sampler,
                               n_select=spec["n_select"], n_final=spec["n_final"], confidence=AUDIT_CONFIDENCE,
                               events=spec["events"], claimed_epsilon=epsilon)


def check_private_mean_privacy(private_mean: Callable, seed: int | None = None, *,
                               audit: str = "mostly_negative_range") -> None:
    """Empirical privacy audit (:mod:`helpers.audit`) on the worst-case pair ``AUDITS[audit]``.

    Fails when the Clopper–Pearson lower bound on ε (confidence 1 - 1e-6)
    exceeds the claimed ε. An ε-DP mechanism fails with probability at
    most 1e-6. Calls of ``private_mean``: 2 (n_select + n_final), from
    8,000 to 68,000 (``AUDITS``), plus about 10,000 to name the mistake
    when the audit fails.
    """
    name = "check_private_mean_privacy"
    if audit not in AUDITS and audit != "noise_scales":
        raise ValueError(f"{name}: audit must be one of {sorted(AUDITS) + ['noise_scales']}; got {audit!r}")
    seed = check_seed(name + audit, seed)
    if audit == "noise_scales":
        _check_noise_scales(private_mean, seed)
        return
    spec = audit_config(audit, seed)
    result = audit_private_mean(private_mean, audit, seed)
    k = len(spec["d"])
    where = ""
    if k:
        clipped = np.clip(spec["d"], spec["lower"], spec["upper"])
        where = f" from {min(spec['d']):.6g} to {max(spec['d']):.6g} (clipped mean {np.mean(clipped):.6g})"
    pair = (f"[{spec['lower']:.6g}, {spec['upper']:.6g}], ε = {spec['epsilon']:g}: d = {k} record(s){where}"
            f", d' = d + [{spec['extra']:.6g}]")
    text = (f"audit {pair}: ε >= {result.epsilon:.3f} (event {result.event}, {result.k1}/{result.n} vs "
            f"{result.k2}/{result.n}, confidence {AUDIT_CONFIDENCE:.6f})")
    if result.violates():
        hint_zh, hint_en = _AUDIT_HINTS[audit]
        diagnosis = _privacy_mistake(private_mean, audit, seed)
        raise _fail(
            f"隐私审计失败：private_mean 声称满足 ε = {spec['epsilon']:g} 的差分隐私，但在相邻数据集 {pair} 上，"
            f"事件 {result.event} 的概率为 {result.k1}/{result.n} 对 {result.k2}/{result.n}，"
            f"以 1 - 10⁻⁶ 的置信度证明 ε ≥ {result.epsilon:.3f} > {spec['epsilon']:g}（seed = {seed}；"
            f"真正满足 ε-差分隐私的实现被误判的概率 ≤ {ALPHA:g}）。{hint_zh}",
            f"privacy audit failed: private_mean claims ε = {spec['epsilon']:g}-DP, but on the neighbouring datasets "
            f"{pair} the event {result.event} has frequencies {result.k1}/{result.n} vs {result.k2}/{result.n}, which "
            f"proves ε >= {result.epsilon:.3f} > {spec['epsilon']:g} with confidence 1 - 1e-6 (seed = {seed}; an "
            f"ε-DP implementation fails with probability <= {ALPHA:g}). {hint_en}",
            diagnosis=diagnosis,
        )
    _say(name, seed, text + f" <= claimed {spec['epsilon']:g} -> OK",
         zh=f"审计测得 ε ≥ {result.epsilon:.3f}，不超过声称的 ε = {spec['epsilon']:g}")


#: Likely mistake behind a failed range audit when no probe of :func:`_privacy_mistake` names another:
#: Δ = upper - lower is the sum's sensitivity under replacement; Δ = |upper| forgets the negative bound.
_RANGE_MISTAKES = {"one_sided_range": "private_mean.sensitivity_wrong_relation",
                   "mostly_negative_range": "private_mean.sum_sensitivity_one_bound"}


def _privacy_mistake(private_mean: Callable, audit: str, seed: int) -> str:
    """The diagnosis id of a *proven* violation, from three small probes (about 10,000 calls).

    The audit has already decided the grade; the probes only name the likely
    mistake, so that a class report can group submissions by it:

    0. no noise (on some data), or noise from a fixed seed: 50 outputs on one
       record, or on 21 distinct values, that are equal or spread by < 10⁻⁹ Δ;
    1. values not clipped: ε = 10⁶ (noise below 10⁻⁵ of the range), 19
       records at 0 and one at 1000·Δ in [-Δ, Δ]: the clipped mean is Δ/20,
       an unclipped sum gives Δ (the result clipped);
    2. one noise draw reused for sum and count: with every record beyond a
       bound, independent noises leave the output strictly inside the range
       about half of the time; one reused draw (equal split) leaves it on the
       bound, up to rounding (> 90% of 1,000 outputs within 10⁻⁹ of it);
    3. exact count published: one record at Δ/2 in [-Δ, Δ], ε = 2: with the
       exact count (denominator 1) the output is the clipped Laplace noisy sum,
       below Δ/2 with probability exactly 1/2; a noisy denominator above 1
       pulls outputs towards 0, so P(output < Δ/2) ≈ 0.6-0.75 for the usual
       splits. Called exact when the share is below 0.54 (4,000 outputs: 5
       standard errors above 1/2).
    Otherwise a failed composition-type audit means a budget overspent
    (``private_mean.budget_split_wrong``); a failed range audit, the sum's
    sensitivity (``_RANGE_MISTAKES``).
    """
    rng = np.random.Generator(np.random.PCG64([seed, 99]))
    delta = 3.0
    try:
        for records in ([delta / 2], list(np.linspace(-delta / 2, delta / 2, 21))):
            if len(set(_private_mean_repeated(private_mean, records, -delta, delta, 2.0, rng, 50))) == 1 \
                    or np.ptp(_private_mean_repeated(private_mean, records, -delta, delta, 2.0, rng, 50)) < 1e-9 * delta:
                return "private_mean.noise_fixed_or_missing"
        probe = _private_mean_repeated(private_mean, [0.0] * 19 + [1000.0 * delta], -delta, delta, 1e6, rng, 20)
        if np.median(probe) > 0.5 * delta:
            return "private_mean.values_not_clipped"
        for records, bound in (([delta + 0.1 * i for i in range(20)], delta),
                               ([-delta - 0.1 * i for i in range(20)], -delta)):
            outs = np.array(_private_mean_repeated(private_mean, records, -delta, delta, 3.0, rng, 1000))
            if np.mean(np.isclose(outs, bound, rtol=1e-9, atol=0.0)) > 0.9:  # reused noise: on the bound up to rounding
                return "private_mean.noise_reused"
        if audit in _RANGE_MISTAKES:
            return _RANGE_MISTAKES[audit]
        outs = np.array(_private_mean_repeated(private_mean, [delta / 2], -delta, delta, 2.0, rng, 4000))
        if np.mean(outs < delta / 2) < 0.54:
            return "private_mean.exact_count_published"
    except AssertionError:  # a probe's output was malformed: keep the audit's verdict, name no probe
        return _RANGE_MISTAKES.get(audit, "private_mean.budget_split_wrong")
    return "private_mean.budget_split_wrong"


#: Noise-scale audit: datasets (drawn like the accuracy checks'), outputs per dataset for choosing the
#: events and for the test, candidate tail levels, events tested per dataset.
NOISE_AUDIT = dict(datasets=3, n_select=3000, n_final=20000,
                   levels=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3), events=2)


class NoiseScaleResult:
    """Outcome of :func:`noise_scale_bound`: ``epsilon`` is a lower bound on ε₁ + ε₂ (valid with
    probability >= ``confidence`` for the specified form of the mechanism), ``claimed_epsilon`` the ε of
    the call; ``details`` the per-dataset events and counts (for messages)."""

    def __init__(self, epsilon: float, claimed_epsilon: float, confidence: float, details: list[dict]):
        self.epsilon, self.claimed_epsilon, self.confidence, self.details = epsilon, claimed_epsilon, confidence, details

    def violates(self) -> bool:
        return self.epsilon > self.claimed_epsilon


def _dataset_noise_test(outputs_select: np.ndarray, draw_final: Callable[[int], np.ndarray], values: np.ndarray,
                        lower: float, upper: float, epsilon: float, alpha: float) -> dict:
    """One dataset of :func:`noise_scale_bound`: events chosen on ``outputs_select``, tested on fresh outputs.

    Returns ``{"bound": largest s such that every split with ε₁ + ε₂ <= s·ε is rejected, "events": ...}``.
    """
    from scipy.special import bdtr
    from scipy.stats import norm

    spec = NOISE_AUDIT
    clipped = np.clip(values, lower, upper)
    total, count = float(clipped.sum()), int(clipped.size)
    delta = max(abs(lower), abs(upper))
    # candidate events: lower tails {Y < y} and upper tails {Y > y} at quantiles of the selection sample
    candidates = []
    for level in spec["levels"]:
        for upper_tail in (False, True):
            y = float(np.quantile(outputs_select, 1.0 - level if upper_tail else level))
            if lower < y < upper:
                candidates.append((y, upper_tail))
    candidates = sorted(set(candidates))
    if not candidates:
        return {"bound": 0.0, "events": []}

    def probabilities(u1: np.ndarray, u2: np.ndarray, which=None) -> np.ndarray:
        a, b = delta / (u1 * epsilon), 1.0 / (u2 * epsilon)
        rows = []
        for y, upper_tail in (candidates if which is None else [candidates[i] for i in which]):
            # P(Y < y) = P(-Y > -y), and -Y has the same form with -total (-L₁ is Laplace too): computed
            # directly, since 1 - P(Y > y) rounds to 0 for a far lower tail (an over-noised split).
            rows.append(exceedance(y, total, count, a, b) if upper_tail else exceedance(-y, -total, count, a, b))
        return np.array(rows)  # candidates × splits

    n = spec["n_final"]
    k_events = spec["events"]
    z = norm.isf(alpha / k_events)
    u1, u2 = _null_splits()
    p_null = probabilities(u1, u2)
    observed = np.array([np.mean(outputs_select > y) if up else np.mean(outputs_select < y) for y, up in candidates])
    with np.errstate(divide="ignore", invalid="ignore"):
        score = (p_null - observed[:, None]) / np.sqrt(p_null * (1.0 - p_null) / n)
    # the set of events whose best z-score is largest at the least favourable split
    import itertools
    best, chosen = -np.inf, None
    for combo in itertools.combinations(range(len(candidates)), min(k_events, len(candidates))):
        margin = float(np.min(np.max(score[list(combo)], axis=0)))
        if margin > best:
            best, chosen = margin, combo
    if chosen is None:  # no event with a finite score at every split: no evidence from this dataset
        return {"bound": 0.0, "events": []}
    events = [candidates[i] for i in chosen]
    final = np.asarray(draw_final(n), dtype=float)
    counts = [int(np.sum(final > y)) if up else int(np.sum(final < y)) for y, up in events]
    keep = [i for i in chosen]

    def rejected(scale: float) -> bool:
        s1, s2 = _null_splits(scale)
        p = probabilities(s1, s2, keep)  # only the chosen events' rows (the others were computed and dropped)
        pvalues = np.array([bdtr(k, n, row) for k, row in zip(counts, p)])
        return bool(np.all(np.min(pvalues, axis=0) < alpha / k_events))

    bound = 0.0
    for scale in np.round(np.arange(0.5, 3.0001, 0.05), 2):
        if not rejected(float(scale)):
            break
        bound = float(scale)
    return {"bound": bound, "events": [(y, "Y > y" if up else "Y < y", k) for (y, up), k in zip(events, counts)],
            "n": n, "values": count, "lower": lower, "upper": upper, "epsilon": epsilon, "clipped_mean": total / count}


def noise_scale_bound(draw: Callable, seed: int, datasets: int | None = None) -> NoiseScaleResult:
    """Lower bound on ε₁ + ε₂ / ε from the outputs' tails (confidence 1 - 1e-6), for the specified mechanism.

    ``draw(values, lower, upper, epsilon, rng, n)`` returns n outputs of the
    student's ``private_mean``. For each of ``NOISE_AUDIT["datasets"]``
    datasets drawn by :func:`accuracy_dataset` (the accuracy checks'
    family: no call tells this audit from an accuracy check), a selection
    sample picks two tail events {Y < y} / {Y > y}; on fresh outputs the
    counts are exact binomials whose probabilities :func:`exceedance`
    gives for every split (ε₁, ε₂). Every split with ε₁ + ε₂ <= s·ε is
    rejected when, at each split, one event's exact binomial p-value is
    below α/(2·datasets) (a union bound: for the student's true split, each
    event misleads with probability at most that much). The bound is the
    largest such s (grid of 0.05) over the datasets. A mechanism of the
    specified form (independent Laplace noises, any split with
    ε₁ + ε₂ <= ε, noisy sum / max(noisy count, 1), clipped) fails with
    probability at most α = 1e-6.
    """
    k = NOISE_AUDIT["datasets"] if datasets is None else datasets
    alpha = ALPHA / k
    details = []
    g = np.random.default_rng([seed, 41])
    rng = np.random.Generator(np.random.PCG64(seed))
    for i in range(k):
        values, lower, upper, epsilon = accuracy_dataset(int(g.integers(2**31)))
        select = np.asarray(draw(values, lower, upper, epsilon, rng, NOISE_AUDIT["n_select"]), dtype=float)
        details.append(_dataset_noise_test(select, lambda n: draw(values, lower, upper, epsilon, rng, n),
                                           values, lower, upper, epsilon, alpha))
    best = max(d["bound"] for d in details)
    return NoiseScaleResult(best, 1.0, 1.0 - ALPHA, details)


def _check_noise_scales(private_mean: Callable, seed: int) -> None:
    """The ``noise_scales`` audit of :func:`check_private_mean_privacy` (:func:`noise_scale_bound`)."""
    result = audit_private_mean(private_mean, "noise_scales", seed)
    shown, shown_zh = [], []
    for d in result.details:
        if not d["events"]:
            continue
        events = ", ".join(f"{kind.replace('y', f'{y:.4g}')}: {k}/{d['n']}" for y, kind, k in d["events"])
        shown.append(f"{d['values']} values in [{d['lower']:.6g}, {d['upper']:.6g}] (clipped mean "
                     f"{d['clipped_mean']:.4g}), ε = {d['epsilon']:g}: {events} -> ε₁ + ε₂ >= {d['bound']:.2f}ε")
        shown_zh.append(f"区间 [{d['lower']:.6g}, {d['upper']:.6g}] 内的 {d['values']} 个值（截断后的均值 "
                        f"{d['clipped_mean']:.4g}），ε = {d['epsilon']:g}：{events}，ε₁ + ε₂ ≥ {d['bound']:.2f}ε")
    RECENT.append(_RecentBound(result.epsilon, 1.0))
    text = (f"noise scales: {'; '.join(shown) or 'no event inside the range'}; tails as thin as the specified "
            f"form with ε₁ + ε₂ >= {result.epsilon:.2f}ε (confidence {1 - ALPHA:.6f})")
    if result.violates():
        hint_zh, hint_en = _AUDIT_HINTS["noise_scales"]
        diagnosis = _privacy_mistake(private_mean, "noise_scales", seed)
        if diagnosis == "private_mean.budget_split_wrong":  # this audit proves no ε beyond the claim
            diagnosis = "private_mean.tails_thinner_than_the_form"
        raise _fail(
            f"隐私审计失败：在与准确性测试同分布的数据上，private_mean 输出的尾部概率（{'；'.join(shown_zh)}）"
            f"比规定形式的机制（截断和与计数各加独立的拉普拉斯噪声，ε₁ + ε₂ <= ε）在任何分配下允许的都小（精确二项检验，置信度 1 - 10⁻⁶）："
            f"要有这样薄的尾部，规定形式的机制需要 ε₁ + ε₂ ≥ {result.epsilon:.2f}ε。这个审计不直接测量隐私损失，分不清下面两种情况："
            f"要么预算超支，要么机制不是规定的形式（例如噪声加在 x - m 的和上、以区间中点为中心，像 Google 的库那样：这样的机制可以满足差分隐私，"
            f"但不是本作业要求的形式）。两者都不符合作业要求（seed = {seed}；按规定形式实现、ε₁ + ε₂ <= ε 的函数被误判的概率 ≤ {ALPHA:g}）。{hint_zh}",
            f"privacy audit failed: on data drawn like the accuracy tests', the tail frequencies of private_mean's "
            f"outputs ({'; '.join(shown)}) are thinner than the specified mechanism (independent Laplace noise on the "
            f"clipped sum and on the count, ε₁ + ε₂ <= ε) allows for any split (exact binomial tests, confidence "
            f"1 - 1e-6): tails this thin need ε₁ + ε₂ >= {result.epsilon:.2f}ε in that form. This audit does not "
            f"measure the privacy loss itself and cannot tell these apart: either the budget is overspent, or the "
            f"mechanism is not of the specified form (e.g. noise on the sum of x - m, centred on the range's midpoint "
            f"as Google's library does: such a mechanism can be differentially private, but it is not the form the "
            f"assignment asks for). Both break the assignment's rules (seed = {seed}; an implementation of the "
            f"specified form with "
            f"ε₁ + ε₂ <= ε fails with probability <= {ALPHA:g}). {hint_en}",
            diagnosis=diagnosis,
        )
    _say("check_private_mean_privacy", seed, text + " -> OK",
         zh=f"噪声尺度的审计：尾部与 ε₁ + ε₂ ≥ {result.epsilon:.2f}ε 的规定形式一样薄，没有超过 ε")


class _RecentBound:
    """What :data:`helpers.audit.RECENT` holds for the class report: a lower bound against a claim (in units of ε)."""

    def __init__(self, epsilon: float, claimed_epsilon: float):
        self.epsilon, self.claimed_epsilon = epsilon, claimed_epsilon


def _repeated_array(private_mean: Callable, values, lower, upper, epsilon, rng, n) -> np.ndarray:
    """:func:`_private_mean_repeated` as an array (the ``draw`` of :func:`noise_scale_bound`)."""
    return np.array(_private_mean_repeated(private_mean, values, lower, upper, epsilon, rng, n))
