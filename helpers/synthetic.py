"""Differentially private synthetic data (textbook §6.5.3).

Two levels:

* the single-column example of Tables 6-5 / 6-6: a noisy histogram of the
  ages 12-15 is clipped at 0, normalized into probabilities and sampled
  (:func:`synthesize_column`);
* a small *select–measure–estimate* synthesizer over 2-way marginals in the
  spirit of MWEM (Hardt, Ligett, McSherry 2012) and AIM (McKenna et al.
  2022), simplified so that the whole joint distribution is one numpy array
  (a handful of attributes with small domains): :func:`fit_marginal_model`,
  :func:`sample_model`, :func:`synthesize`, evaluated by
  :func:`workload_error` on marginal queries.

Neighbouring datasets differ by adding or removing one record, so one
record changes every marginal's count vector by 1 in one cell (L1 and L2
sensitivity 1).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_probability, check_rng, fail
from helpers.budget import BudgetAccountant
from helpers.gaussian import analytic_gaussian_sigma, gaussian_mechanism
from helpers.i18n import get_lang, tr
from helpers.mechanisms import laplace_mechanism

__all__ = [
    "TABLE_6_5_AGES", "TABLE_6_5_DOMAIN",
    "noisy_column_histogram", "synthesize_column",
    "DEMO_COLUMNS", "DEMO_DOMAINS", "DEMO_LEVELS", "DEMO_COLUMNS_ZH", "DEMO_LEVELS_ZH", "demo_names",
    "demo_dataset", "REDUNDANT_DOMAINS", "REDUNDANT_COLUMNS", "redundant_dataset",
    "marginal", "all_marginals", "workload_error",
    "MarginalModel", "fit_marginal_model", "sample_model", "synthesize",
]

#: Table 6-5: ages of six junior-high students (records 1..6).
TABLE_6_5_AGES = np.array([12, 13, 15, 13, 15, 12])
#: The histogram's domain: ages 12 to 15 (14 has count 0).
TABLE_6_5_DOMAIN = np.array([12, 13, 14, 15])

#: Columns of :func:`demo_dataset` and their domain sizes.
DEMO_COLUMNS = ("age", "education", "income", "sex")
DEMO_DOMAINS = (4, 3, 3, 2)
#: Human-readable levels of the demo columns.
DEMO_LEVELS = {
    "age": ("<30", "30-44", "45-59", "60+"),
    "education": ("secondary", "bachelor", "graduate"),
    "income": ("low", "middle", "high"),
    "sex": ("female", "male"),
}
#: The same names in Chinese (the Chinese notebooks print these).
DEMO_COLUMNS_ZH = ("年龄段", "教育", "收入", "性别")
DEMO_LEVELS_ZH = {
    "age": ("30 岁以下", "30–44 岁", "45–59 岁", "60 岁及以上"),
    "education": ("中学", "本科", "研究生"),
    "income": ("低", "中", "高"),
    "sex": ("女", "男"),
}

#: :func:`redundant_dataset`: six columns with three levels each.
REDUNDANT_DOMAINS = (3, 3, 3, 3, 3, 3)
REDUNDANT_COLUMNS = {"zh": ("地区", "房价", "房租", "物价", "运动", "健康"),
                     "en": ("region", "house price", "rent", "prices", "exercise", "health")}


def demo_names(lang: str | None = None) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Column names and level names of :func:`demo_dataset` in ``lang`` ("zh"/"en"; default: the course's language).

    Returns ``(columns, levels)``; ``levels`` is keyed by the English column names of ``DEMO_COLUMNS``.
    """
    lang = get_lang() if lang is None else lang
    if lang not in ("zh", "en"):
        raise fail("demo_names", "lang", "'zh' or 'en'", lang)
    return (DEMO_COLUMNS_ZH, DEMO_LEVELS_ZH) if lang == "zh" else (DEMO_COLUMNS, DEMO_LEVELS)


# ---------------------------------------------------------------------------
# Tables 6-5 / 6-6: one column
# ---------------------------------------------------------------------------

def noisy_column_histogram(values: ArrayLike, domain: ArrayLike, epsilon: float,
                           rng: np.random.Generator) -> dict:
    """The steps from Table 6-5 to Table 6-6, returned one by one.

    1. ``counts``: histogram of ``values`` over ``domain`` (sensitivity 1);
    2. ``noisy``: counts + Lap(1/ε) each (:func:`helpers.mechanisms.laplace_mechanism`),
       ε-DP for the whole histogram (one record changes one count);
    3. ``clipped``: negative noisy counts set to 0 (post-processing);
    4. ``probabilities``: clipped / sum. If every clipped count is 0 (possible
       for tiny data and small ε) the probabilities fall back to uniform
       over the domain and ``fallback_uniform`` is True — still ε-DP, as it
       is a function of the noisy counts only;
    5. ``noisy_total``: the sum of the *unclipped* noisy counts, rounded and
       at least 0 — an unbiased estimate of n (before rounding; noise sd
       ``√(2k)/ε`` for k cells) and post-processing of step 2, so it costs
       no extra budget.

    Neighbours differ by adding or removing one record (the course's
    relation, 6.1): one count changes by 1, so the histogram's l1
    sensitivity is 1. (Under replacement one record moves between two
    cells, Δ1 = 2, and Lap(1/ε) would only give 2ε-DP.) The exact n is not
    released: under add/remove it would itself distinguish neighbours.

    Returns a dict with keys ``domain, counts, noisy, clipped, probabilities,
    fallback_uniform, noisy_total``.
    """
    func = "noisy_column_histogram"
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    dom = np.asarray(domain)
    if dom.ndim != 1 or dom.size == 0 or np.unique(dom).size != dom.size:
        raise fail(func, "domain", "a non-empty 1-D sequence of distinct values", domain)
    vals = np.asarray(values)
    if vals.ndim != 1:
        raise fail(func, "values", "a 1-D sequence of column values", f"shape {vals.shape}")
    inside = np.isin(vals, dom)
    if not np.all(inside):
        raise fail(func, "values", "values that all belong to the domain", vals[~inside][:5].tolist())
    counts = np.array([(vals == v).sum() for v in dom], dtype=float)
    noisy = np.asarray(laplace_mechanism(counts, 1.0, epsilon, rng), dtype=float)
    clipped = np.maximum(noisy, 0.0)
    total = clipped.sum()
    fallback = not total > 0
    probabilities = np.full(dom.size, 1.0 / dom.size) if fallback else clipped / total
    return {"domain": dom, "counts": counts, "noisy": noisy, "clipped": clipped,
            "probabilities": probabilities, "fallback_uniform": fallback,
            "noisy_total": int(max(0, round(float(noisy.sum()))))}


def synthesize_column(values: ArrayLike, domain: ArrayLike, epsilon: float, rng: np.random.Generator,
                      n: int | None = None) -> np.ndarray:
    """Synthetic column: noisy histogram → clip negatives → normalize → sample (§6.5.3, Table 6-6).

    ε-DP under add/remove neighbours (Laplace on a histogram of l1
    sensitivity 1, then post-processing). The number of synthetic records
    defaults to the histogram's ``noisy_total``, not ``len(values)``: the
    textbook's "same shape" would publish the exact n, which is not ε-DP
    under add/remove neighbours. Pass ``n`` only for a size that is public
    or chosen independently of the data. See :func:`noisy_column_histogram`
    for the all-zero case.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> synthesize_column(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, rng)  # doctest: +SKIP
    array([13, 15, 12, 15, 12, 13])   # varies
    """
    func = "synthesize_column"
    steps = noisy_column_histogram(values, domain, epsilon, rng)
    size = steps["noisy_total"] if n is None else check_int(n, func=func, name="n", minimum=0)
    return rng.choice(steps["domain"], size=size, p=steps["probabilities"])


# ---------------------------------------------------------------------------
# demo data and marginals
# ---------------------------------------------------------------------------

def demo_dataset(n: int, rng: np.random.Generator) -> np.ndarray:
    """A correlated toy census: ``(n, 4)`` ints (age bucket, education, income, sex).

    Domains ``DEMO_DOMAINS = (4, 3, 3, 2)``, level names in ``DEMO_LEVELS``.
    Education depends on age, income on education, age and sex, so 2-way
    marginals carry information the 1-way marginals miss. Generated locally
    (no download); the numbers are invented for teaching.
    """
    func = "demo_dataset"
    n = check_int(n, func=func, name="n", minimum=1)
    rng = check_rng(rng, func=func)
    age = rng.choice(4, size=n, p=[0.25, 0.30, 0.25, 0.20])
    sex = (rng.random(n) < 0.5).astype(np.int64)
    p_edu = np.array([[0.40, 0.45, 0.15],   # <30
                      [0.45, 0.35, 0.20],   # 30-44
                      [0.60, 0.28, 0.12],   # 45-59
                      [0.75, 0.18, 0.07]])  # 60+
    u = rng.random(n)
    edu = (u[:, None] > np.cumsum(p_edu[age], axis=1)[:, :-1]).sum(axis=1)
    # income score: education and mid-career age raise it; a pay gap by sex
    score = 0.9 * edu + np.array([-0.6, 0.4, 0.5, -0.3])[age] + 0.35 * sex + rng.normal(0, 0.7, n)
    income = np.digitize(score, [0.3, 1.3])
    return np.column_stack([age, edu, income, sex]).astype(np.int64)


def redundant_dataset(n: int, rng: np.random.Generator, *, stay: float = 0.85, link: float = 0.6) -> np.ndarray:
    """Six 3-level columns where four say nearly the same thing: ``(n, 6)`` ints.

    Column 0 ("region") is uniform; columns 1–3 ("house price", "rent", "prices") each equal
    column 0 with probability ``stay`` and are uniform otherwise; column 4 ("exercise") is
    uniform and column 5 ("health") equals it with probability ``link``, else uniform. The
    six pairs among columns 0–3 all look strongly dependent, but any three of them that
    connect the four columns explain the others: a test case for batch against iterative
    selection (§6.5.3). Invented for teaching; generated locally.
    """
    func = "redundant_dataset"
    n = check_int(n, func=func, name="n", minimum=1)
    rng = check_rng(rng, func=func)
    stay = check_probability(stay, func=func, name="stay")
    link = check_probability(link, func=func, name="link")
    region = rng.integers(0, 3, n)
    cols = [region] + [np.where(rng.random(n) < stay, region, rng.integers(0, 3, n)) for _ in range(3)]
    exercise = rng.integers(0, 3, n)
    health = np.where(rng.random(n) < link, exercise, rng.integers(0, 3, n))
    return np.column_stack(cols + [exercise, health]).astype(np.int64)


def _check_data(data: Any, domains: Any, func: str) -> tuple[np.ndarray, tuple[int, ...]]:
    try:
        doms = tuple(int(check_int(k, func=func, name="domains", minimum=1)) for k in domains)
    except TypeError:
        raise fail(func, "domains", "a sequence of domain sizes (ints >= 1)", domains) from None
    if not doms:
        raise fail(func, "domains", "a non-empty sequence of domain sizes", domains)
    arr = np.asarray(data)
    if arr.ndim != 2 or arr.shape[1] != len(doms) or not np.issubdtype(arr.dtype, np.integer):
        raise fail(func, "data", f"an (n, {len(doms)}) integer array", f"shape {arr.shape}, dtype {arr.dtype}")
    if arr.size and (np.any(arr < 0) or np.any(arr >= np.array(doms))):
        raise fail(func, "data", f"column j in {{0, ..., domains[j]-1}} with domains={doms}", "values out of range")
    return arr.astype(np.int64), doms


def _check_attrs(attrs: Any, n_attrs: int, func: str) -> tuple[int, ...]:
    try:
        out = tuple(int(a) for a in attrs)
    except (TypeError, ValueError):
        raise fail(func, "attrs", "a tuple of column indices", attrs) from None
    if not out or len(set(out)) != len(out) or min(out) < 0 or max(out) >= n_attrs:
        raise fail(func, "attrs", f"distinct column indices in [0, {n_attrs - 1}]", attrs)
    return out


def marginal(data: ArrayLike, domains: Sequence[int], attrs: Sequence[int]) -> np.ndarray:
    """Count table of columns ``attrs``; shape ``(domains[a] for a in attrs)``."""
    func = "marginal"
    arr, doms = _check_data(data, domains, func)
    attrs = _check_attrs(attrs, len(doms), func)
    shape = tuple(doms[a] for a in attrs)
    flat = np.ravel_multi_index(tuple(arr[:, a] for a in attrs), shape) if arr.shape[0] else np.zeros(0, int)
    return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(float)


def all_marginals(n_attrs: int, way: int) -> list[tuple[int, ...]]:
    """All ``way``-way attribute subsets, e.g. ``all_marginals(4, 2)`` = the 6 pairs."""
    func = "all_marginals"
    n_attrs = check_int(n_attrs, func=func, name="n_attrs", minimum=1)
    way = check_int(way, func=func, name="way", minimum=1)
    if way > n_attrs:
        raise fail(func, "way", f"at most n_attrs={n_attrs}", way)
    return list(itertools.combinations(range(n_attrs), way))


def workload_error(real: ArrayLike, synthetic: ArrayLike, queries: Sequence[Sequence[int]],
                   domains: Sequence[int]) -> float:
    """Average L1 distance between normalized marginals of real and synthetic data.

    For each query (a tuple of columns) both marginals are turned into
    probability tables and ``sum |p_real - p_syn|`` is taken (0 = identical,
    2 = disjoint supports); the mean over queries is returned. Use queries
    that were not measured (e.g. 3-way marginals) to see what the model
    *inferred*.
    """
    func = "workload_error"
    r, doms = _check_data(real, domains, func)
    s, _ = _check_data(synthetic, domains, func)
    if r.shape[0] == 0 or s.shape[0] == 0:
        raise fail(func, "synthetic", "non-empty real and synthetic datasets", (r.shape[0], s.shape[0]))
    queries = list(queries)
    if not queries:
        raise fail(func, "queries", "a non-empty list of column tuples", queries)
    errors = [np.abs(marginal(r, doms, q) / r.shape[0] - marginal(s, doms, q) / s.shape[0]).sum() for q in queries]
    return float(np.mean(errors))


# ---------------------------------------------------------------------------
# select–measure–estimate
# ---------------------------------------------------------------------------

def _ipf(joint: np.ndarray, targets: dict, iters: int) -> np.ndarray:
    """Iterative proportional fitting of ``joint`` to the target marginals."""
    d = joint.ndim
    for _ in range(iters):
        for attrs, target in targets.items():
            other = tuple(i for i in range(d) if i not in attrs)
            current = joint.sum(axis=other, keepdims=True)
            ratio = np.divide(target.reshape(current.shape), current,
                              out=np.ones_like(current), where=current > 0)
            joint = joint * ratio
            joint /= joint.sum()
    return joint


def _combined_targets(measurements: list, domains: tuple[int, ...]) -> dict:
    """Inverse-variance average of repeated measurements, clipped and normalized."""
    grouped: dict[tuple[int, ...], list] = {}
    for m in measurements:
        grouped.setdefault(tuple(sorted(m["attrs"])), []).append(m)
    targets = {}
    for attrs, ms in grouped.items():
        weights = np.array([1.0 / m["variance"] for m in ms])
        avg = sum(w * m["noisy"] for w, m in zip(weights, ms)) / weights.sum()
        clipped = np.maximum(avg, 0.0)
        total = clipped.sum()
        probs = clipped / total if total > 0 else np.full(clipped.shape, 1.0 / clipped.size)
        # a little mass everywhere, so one noisy zero cannot kill cells that
        # other marginals still need
        targets[attrs] = (1 - 1e-6) * probs + 1e-6 / probs.size
    return targets


def fit_marginal_model(data: ArrayLike, domains: Sequence[int], epsilon: float, rng: np.random.Generator, *,
                       rounds: int | None = None, workload: Sequence[Sequence[int]] | None = None,
                       initial_fraction: float = 0.2, mechanism: str = "laplace", delta: float = 1e-6,
                       ipf_iters: int = 30, selection: str = "iterative") -> MarginalModel:
    """Select–measure–estimate synthesizer over marginals (§6.5.3; MWEM/AIM-style, simplified).

    Budget (sequential composition, Theorem 6-2; charged on a
    :class:`helpers.budget.BudgetAccountant` with total ε):

    * **initialize**: ``initial_fraction·ε`` split evenly over the d 1-way
      marginals, each measured with Laplace (sensitivity 1); their noisy
      totals give ``n_hat`` and IPF on them gives an independent model;
    * **rounds** T (default: the number of workload marginals, at most 6),
      each with ``ε_r = (1 - initial_fraction)·ε / T``:

      - *select* (ε_r/2): the exponential mechanism over the workload with
        score ``||c_q(D) - n_hat·p̂_q||_1`` (the L1 error of the current
        model on marginal q), sensitivity 1 because the model depends on D
        only through earlier noisy answers;
      - *measure* (ε_r/2): the selected marginal's counts with Laplace
        (scale 2/ε_r) or, with ``mechanism="gaussian"``, the analytic
        Gaussian mechanism (L2 sensitivity 1, δ/T each; then the total is
        (ε, δ)-DP);
      - *estimate*: IPF (iterative proportional fitting) of the full joint
        table to all noisy marginals so far (post-processing). PGM/AIM use
        mirror descent on a graphical model; IPF on the full table is the
        same idea for domains small enough to enumerate.

    With ``selection="batch"`` (the chapter's other family, §6.5.3 part 3) the same budget is
    spent in another order: all T selections are made first, each with the exponential
    mechanism (ε_r/2) against the *initial* model and without replacement, then the T
    marginals are measured (ε_r/2 each) and the model is estimated once. The charges are
    the same as in the iterative order, so both total exactly ε.

    Returns a :class:`MarginalModel`; sample it with :func:`sample_model`.
    """
    func = "fit_marginal_model"
    arr, doms = _check_data(data, domains, func)
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    if int(np.prod(doms, dtype=float)) > 2_000_000:
        raise fail(func, "domains", "a joint domain of at most 2,000,000 cells (the model is a full table)", doms)
    initial_fraction = check_probability(initial_fraction, func=func, name="initial_fraction",
                                         low_open=True, high_open=True)
    if mechanism not in ("laplace", "gaussian"):
        raise fail(func, "mechanism", "'laplace' or 'gaussian'", mechanism)
    if selection not in ("iterative", "batch"):
        raise fail(func, "selection", "'iterative' or 'batch'", selection)
    if mechanism == "gaussian":
        delta = check_probability(delta, func=func, name="delta", low_open=True, high_open=True)
    ipf_iters = check_int(ipf_iters, func=func, name="ipf_iters", minimum=1)
    d = len(doms)
    work = all_marginals(d, 2) if workload is None and d >= 2 else (list(workload) if workload is not None else [])
    work = [_check_attrs(q, d, func) for q in work]
    if rounds is None:
        rounds = min(len(work), 6)
    rounds = check_int(rounds, func=func, name="rounds", minimum=0)
    if rounds > 0 and not work:
        raise fail(func, "workload", "a non-empty list of marginals when rounds > 0", workload)

    total_delta = delta if mechanism == "gaussian" and rounds > 0 else 0.0
    acc = BudgetAccountant(epsilon, total_delta)
    measurements: list[dict] = []

    eps_one = initial_fraction * epsilon / d
    for j in range(d):
        counts = marginal(arr, doms, (j,))
        name = tr(zh=f"列 {j} 的一维边缘", en=f"1-way marginal {j}")
        noisy = np.asarray(acc.laplace(counts, 1.0, eps_one, rng, label=name), dtype=float)
        measurements.append({"attrs": (j,), "noisy": noisy, "scale": 1.0 / eps_one, "variance": 2.0 / eps_one ** 2,
                             "epsilon": eps_one, "delta": 0.0, "mechanism": "laplace", "label": name})
    # n_hat: mean of the d noisy totals (post-processing of the 1-way measurements)
    n_hat = max(1.0, float(np.mean([m["noisy"].sum() for m in measurements])))
    joint = _ipf(np.full(doms, 1.0 / np.prod(doms)), _combined_targets(measurements, doms), ipf_iters)
    model = MarginalModel(joint=joint, domains=doms, n_hat=n_hat, measurements=measurements, accountant=acc,
                          selection=selection)
    if not rounds:
        return model

    eps_round = (1 - initial_fraction) * epsilon / rounds
    eps_sel = eps_meas = eps_round / 2
    true_margs = [marginal(arr, doms, q) for q in work]

    def scores() -> np.ndarray:
        # L1 error of the current model on each workload marginal; sensitivity 1 under add/remove
        # (one record moves one count by 1; the model depends on D only through noisy answers)
        return np.array([np.abs(c - n_hat * model.marginal(q)).sum() for c, q in zip(true_margs, work)])

    def measure(pick: int, name: str) -> None:
        q = work[pick]
        if mechanism == "laplace":
            noisy = np.asarray(acc.laplace(true_margs[pick], 1.0, eps_meas, rng, label=name), dtype=float)
            scale, variance, dlt = 1.0 / eps_meas, 2.0 / eps_meas ** 2, 0.0
        else:
            dlt = total_delta / rounds
            acc.check(eps_meas, dlt, name)
            noisy = np.asarray(gaussian_mechanism(true_margs[pick], 1.0, eps_meas, dlt, rng), dtype=float)
            acc.spend(eps_meas, dlt, name)
            scale = analytic_gaussian_sigma(1.0, eps_meas, dlt)
            variance = scale ** 2
        measurements.append({"attrs": tuple(sorted(q)),
                             "noisy": np.transpose(noisy, np.argsort(q)) if len(q) > 1 else noisy,
                             "scale": scale, "variance": variance, "epsilon": eps_meas, "delta": dlt,
                             "mechanism": mechanism, "label": name})
        model.selected.append(q)

    if selection == "iterative":
        for r in range(rounds):
            pick = acc.exponential(scores(), 1.0, eps_sel, rng,
                                   label=tr(zh=f"第 {r + 1} 轮：选择", en=f"round {r + 1}: select"))
            measure(pick, tr(zh=f"第 {r + 1} 轮：测量 {work[pick]}", en=f"round {r + 1}: measure {work[pick]}"))
            model.joint = _ipf(model.joint, _combined_targets(measurements, doms), ipf_iters)
        return model

    # batch: every selection is scored against the initial (independent) model, without
    # replacement (starting over if rounds > |workload|); then measure all, then estimate once
    initial_scores = scores()
    picks: list[int] = []
    remaining: list[int] = []
    for r in range(rounds):
        if not remaining:
            remaining = [i for i in range(len(work))]
        k = acc.exponential(initial_scores[remaining], 1.0, eps_sel, rng,
                            label=tr(zh=f"批处理选择 {r + 1}", en=f"batch select {r + 1}"))
        picks.append(remaining.pop(k))
    for r, pick in enumerate(picks):
        measure(pick, tr(zh=f"批处理测量 {r + 1}：{work[pick]}", en=f"batch measure {r + 1}: {work[pick]}"))
    model.joint = _ipf(model.joint, _combined_targets(measurements, doms), ipf_iters)
    return model


def sample_model(model: MarginalModel, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw n records ``(n, d)`` from the model's joint table (post-processing: no extra budget)."""
    func = "sample_model"
    if not isinstance(model, MarginalModel):
        raise fail(func, "model", "a MarginalModel from fit_marginal_model", type(model).__name__)
    n = check_int(n, func=func, name="n", minimum=0)
    rng = check_rng(rng, func=func)
    p = model.joint.ravel()
    idx = rng.choice(p.size, size=n, p=p / p.sum())
    return np.column_stack(np.unravel_index(idx, model.domains)).astype(np.int64).reshape(n, len(model.domains))


def synthesize(data: ArrayLike, domains: Sequence[int], epsilon: float, rng: np.random.Generator, *,
               n: int | None = None, rounds: int | None = None,
               workload: Sequence[Sequence[int]] | None = None, **kwargs: Any) -> np.ndarray:
    """:func:`fit_marginal_model` then :func:`sample_model`.

    ``n`` defaults to ``round(model.n_hat)``, the *noisy* record count (the
    exact n would not be ε-DP under add/remove neighbours). Extra keyword
    arguments go to :func:`fit_marginal_model`.
    """
    model = fit_marginal_model(data, domains, epsilon, rng, rounds=rounds, workload=workload, **kwargs)
    size = int(round(model.n_hat)) if n is None else check_int(n, func="synthesize", name="n", minimum=0)
    return sample_model(model, size, rng)


@dataclass
class MarginalModel:
    """A fitted joint distribution and the record of how the budget was spent.

    ``joint`` has shape ``domains`` and sums to 1. ``measurements`` lists
    dicts ``{attrs, noisy, scale, epsilon, delta, mechanism, label}``;
    ``selected`` the marginal picked in each round; ``accountant`` is the
    :class:`helpers.budget.BudgetAccountant` that charged every step.
    """

    joint: np.ndarray
    domains: tuple[int, ...]
    n_hat: float
    measurements: list = field(default_factory=list)
    selected: list = field(default_factory=list)
    accountant: Any = None
    selection: str = "iterative"

    @property
    def epsilon_spent(self) -> float:
        return self.accountant.spent if self.accountant is not None else 0.0

    @property
    def delta_spent(self) -> float:
        return self.accountant.spent_delta if self.accountant is not None else 0.0

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        """The model's marginal probability table on ``attrs``."""
        attrs = _check_attrs(attrs, len(self.domains), "MarginalModel.marginal")
        other = tuple(i for i in range(len(self.domains)) if i not in attrs)
        table = self.joint.sum(axis=other)
        # sum keeps the remaining axes in increasing order; reorder to `attrs`
        kept = sorted(attrs)
        return np.transpose(table, [kept.index(a) for a in attrs])
