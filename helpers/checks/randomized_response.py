"""Checks of the ``randomized_response`` assignment (§6.4): ``rr_keep_probability``,
``rr_perturb`` and ``rr_correct``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    EPSILON,
    RecordingGenerator,
    _after_call,
    _ask,
    _call,
    _caller_function,
    _calls_name,
    _expect_value_error,
    _expect_value_error_via,
    _fail,
    _passed,
    _say,
    _short,
    check_seed,
)
from helpers.checks.forbidden import _check_built_from_draws, _check_no_forbidden, _check_replayed, _check_rng_discipline
from helpers.checks.reference import reference_keep_probability as _keep
from helpers.checks.stats import binomial_test


__all__ = [
    "check_rr_keep_probability_values",
    "check_rr_keep_probability_edge",
    "check_rr_perturb_basics",
    "check_rr_perturb_invalid",
    "check_rr_perturb_distribution",
    "check_rr_perturb_rng",
    "check_rr_correct_textbook",
    "check_rr_correct_formula",
    "check_rr_correct_invalid",
]

# --- randomized response (§6.4) ------------------------------------------------


def check_rr_keep_probability_values(rr_keep_probability: Callable) -> None:
    """p(ln 4) = 0.8 (the textbook's example), p(0.7), p(3); values to 1e-12."""
    for epsilon in (math.log(4.0), EPSILON, 3.0, 1e-3):
        got = _call(rr_keep_probability, epsilon)
        if isinstance(got, np.ndarray) and got.shape == ():
            got = float(got)
        if not isinstance(got, (float, np.floating)):
            raise _fail(
                f"rr_keep_probability({epsilon:.4g}) 应返回一个浮点数，实际返回 {type(got).__name__}。",
                f"rr_keep_probability({epsilon:.4g}) should return a float; it returned {type(got).__name__}.",
                diagnosis="randomized_response.not_float",
            )
        expected = _keep(epsilon)
        if not math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15):
            guess_zh, guess_en, guess_id = _keep_guess(float(got), epsilon)
            raise _fail(
                f"rr_keep_probability({epsilon:.4g}) = {got}，期望 e^ε/(e^ε+1) = {expected:.6f}。可能的错误：{guess_zh}。",
                f"rr_keep_probability({epsilon:.4g}) = {got}; expected e^ε/(e^ε+1) = {expected:.6f}. Likely mistake: {guess_en}.",
                diagnosis=guess_id,
            )
    _passed("check_rr_keep_probability_values", "p(ln 4) = 0.8、p(0.7)、p(3)、p(0.001) 正确",
            "exact values p(ln 4) = 0.8, p(0.7), p(3), p(0.001)")


def _keep_guess(got: float, epsilon: float) -> tuple[str, str, str]:
    """The likely mistake of a keep probability ``got`` at ``epsilon``: (Chinese, English, diagnosis id)."""
    expected = _keep(epsilon)
    if math.isclose(got, 1 - expected, rel_tol=1e-9):
        return ("p 与 1-p 弄反了（1/(e^ε+1) 是翻转的概率）", "p and 1-p swapped (1/(e^ε+1) is the flip probability)",
                "randomized_response.p_swapped")
    if math.isclose(got, _keep(epsilon / 2), rel_tol=1e-9) or math.isclose(got, _keep(2 * epsilon), rel_tol=1e-9):
        return "ε 多乘或多除了 2", "ε multiplied or divided by 2", "randomized_response.epsilon_factor_2"
    return ("检查公式 p = e^ε / (e^ε + 1)", "check the formula p = e^ε / (e^ε + 1)",
            "randomized_response.keep_formula_wrong")


def check_rr_keep_probability_edge(rr_keep_probability: Callable) -> None:
    """ValueError for ε <= 0 or NaN; ε = 800 gives 1.0, not nan (overflow)."""
    for epsilon in (0.0, -1.0, float("nan")):
        _expect_value_error(rr_keep_probability, (epsilon,), "ε 必须是有限正数", "epsilon must be a finite number > 0")
    with np.errstate(all="ignore"):
        got = _call(rr_keep_probability, 800.0)
    if not (isinstance(got, (float, np.floating, np.ndarray)) and math.isclose(float(got), 1.0, rel_tol=1e-12)):
        raise _fail(
            f"rr_keep_probability(800) = {got}，期望 1.0。e^800 溢出成 inf，inf/inf = nan：改写成 1/(1 + e^(-ε))。",
            f"rr_keep_probability(800) = {got}; expected 1.0. e^800 overflows to inf and inf/inf = nan: "
            f"write it as 1/(1 + e^(-ε)).",
            diagnosis="randomized_response.overflow",
        )
    _passed("check_rr_keep_probability_edge", "ε = 0、-1、nan 抛出 ValueError；p(800) = 1.0",
            "ValueError for ε = 0, -1, nan; p(800) = 1.0")


def _rr_output(out: Any, shape: tuple, args_text: str) -> np.ndarray:
    if not isinstance(out, np.ndarray) or out.shape != shape:
        raise _fail(
            f"rr_perturb({args_text}) 应返回形状为 {shape} 的 numpy 数组，实际返回 {type(out).__name__} {_short(out)}。",
            f"rr_perturb({args_text}) should return a numpy array of shape {shape}; it returned {type(out).__name__} {_short(out)}.",
            diagnosis="randomized_response.wrong_output_type",
        )
    if not np.issubdtype(out.dtype, np.integer):
        raise _fail(
            f"rr_perturb 返回的 dtype 是 {out.dtype}，期望整数 0/1（例如 .astype(int)）。",
            f"rr_perturb returned dtype {out.dtype}; expected integers 0/1 (e.g. .astype(int)).",
            diagnosis="randomized_response.not_integer",
        )
    if not np.all((out == 0) | (out == 1)):
        raise _fail(
            f"rr_perturb 返回了 0/1 以外的值：{np.unique(out)[:10]}。",
            f"rr_perturb returned values other than 0/1: {np.unique(out)[:10]}.",
            diagnosis="randomized_response.not_binary",
        )
    return out


def check_rr_perturb_basics(rr_perturb: Callable, *, keep_probability: Callable | None = None) -> None:
    """Shape, integer 0/1 output for 1-D and 2-D input; ValueError for ε <= 0 and bits not in {0, 1}.

    ``keep_probability``: the student's ``rr_keep_probability`` (default: the one where the check is
    called), asked for its value at ε = 800 when ``rr_perturb`` fails there (:func:`_name_the_keep_probability`).
    """
    keep = keep_probability if keep_probability is not None else _caller_function(KEEP)
    rng = RecordingGenerator(9)
    for bits in (np.array([0, 1, 1, 0, 1]), np.array([[1, 0, 0], [0, 1, 1]]), [1, 0, 1, 1]):
        out = _call(rr_perturb, bits, 1.0, rng, rng=rng)
        _after_call(rr_perturb, rng)
        _rr_output(out, np.shape(bits), f"{_short(bits)}, 1.0, rng")
    # The sampler's points need answers built from the draws (issue 35): 64 bits at ε = 0.1 (each
    # flipped with probability 0.475) replayed from the same draws must come out the same.
    bits, rng = np.arange(64) % 2, RecordingGenerator(19, keep=True)
    out = _rr_output(_call(rr_perturb, bits, 0.1, rng, rng=rng), bits.shape, f"{_short(bits)}, 0.1, rng")
    _after_call(rr_perturb, rng)
    _check_replayed(rr_perturb, lambda r: rr_perturb(bits, 0.1, r), rng.drawn(), out)
    # A huge ε (the notebook makes ε = 800 a required case of the keep probability): e^ε overflows a
    # float past ε ≈ 709.8, while the keep probability is 1 in floating point, so every bit is kept.
    bits = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    try:
        out = _call(rr_perturb, bits, 800.0, rng, rng=rng)
    except AssertionError as failure:
        if getattr(failure, "diagnosis", None) != "common.crashed":
            raise
        # the same exception from rr_keep_probability(800) is where the crash came from
        raise _name_the_keep_probability(rr_perturb, keep, 800.0, failure,
                                         lambda value, error: error is not None and f"raised {error}:" in failure.en) from None
    out = _rr_output(out, bits.shape, f"{_short(bits)}, 800.0, rng")
    _after_call(rr_perturb, rng)
    if not np.array_equal(out, bits):
        changed = int(np.sum(out != bits))
        if _calls_name(rr_perturb, KEEP):  # it takes p from rr_keep_probability: not its own e^ε
            guess_zh = "rr_perturb 调用了 rr_keep_probability，没有自己计算 e^ε：检查它怎样用 p（u < p 时保留，否则翻转）。"
            guess_en = "rr_perturb calls rr_keep_probability rather than computing e^ε: check how it uses p (keep when u < p, else flip)."
            mistake = "randomized_response.keep_rate_wrong"
        else:
            guess_zh = "是否直接计算了 e^ε（ε > 709 时溢出为 inf，inf/inf = nan）？请复用 rr_keep_probability。"
            guess_en = "Does it compute e^ε directly (inf past ε ≈ 709, and inf/inf = nan)? Reuse rr_keep_probability."
            mistake = "randomized_response.perturb_overflow"
        fact = (f"rr_perturb(bits, 800.0, rng) 改变了 {changed} 个比特，但 ε = 800 时保留概率 p = 1/(1 + e^(-800)) 在浮点数里就是 1。",
                f"rr_perturb(bits, 800.0, rng) changed {changed} bits, but at ε = 800 the keep probability "
                f"p = 1/(1 + e^(-800)) is 1 in floating point.")
        raise _name_the_keep_probability(rr_perturb, keep, 800.0,
                                         _fail(fact[0] + guess_zh, fact[1] + " " + guess_en, diagnosis=mistake),
                                         lambda value, error: error is None and value != 1.0, fact=fact)
    for args, zh, en in (
        ((np.array([0, 1, 2]), 1.0, rng), "bits 只能是 0 或 1", "bits must be 0 or 1"),
        ((np.array([0, 1, -1]), 1.0, rng), "bits 只能是 0 或 1", "bits must be 0 or 1"),
        ((np.array([0, 1, 1]), 0.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
        ((np.array([0, 1, 1]), -1.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
    ):
        if args[1] > 0:  # the bits are rr_perturb's to check
            _expect_value_error(rr_perturb, args, zh, en)
        else:  # ε may be left to rr_keep_probability (the notebook's solution does)
            _expect_value_error_via(rr_perturb, args, zh, en, keep, (args[1],), KEEP,
                                    "randomized_response.keep_probability_inherited")
    _passed("check_rr_perturb_basics", "返回形状为 (5,)、(2, 3)、(4,) 的 0/1 整数数组；ε = 800 时保留全部比特；比特为 2、-1 与 ε <= 0 抛出 ValueError",
            "integer 0/1 arrays of shapes (5,), (2, 3), (4,); every bit kept at ε = 800; ValueError for bits 2, -1 and ε <= 0")


#: The student's function rr_perturb may call (the notebook suggests it): a failure of rr_perturb is
#: said of it when the evidence points there (issue 35, §5: a helper's mistake had been reported
#: against a correct caller).
KEEP = "rr_keep_probability"


def _name_the_keep_probability(rr_perturb: Callable, keep: Callable | None, epsilon: float,
                               failure: AssertionError, follows: Callable,
                               fact: tuple[str, str] | None = None) -> AssertionError:
    """``failure`` of ``rr_perturb`` at ``epsilon``, said of the function the evidence points to.

    The judge asks the student's ``rr_keep_probability`` (``keep``) for its value at the same ε
    itself (one call). Right value: the mistake is ``rr_perturb``'s own, and the message says so.
    Wrong value (or an exception), ``rr_perturb``'s code calls ``rr_keep_probability`` (read, never
    run) and what ``rr_perturb`` did follows that value (``follows(value, error)``: the keep rates
    measured fit it, or it failed with the same exception): the mistake is ``rr_keep_probability``'s,
    id ``randomized_response.keep_probability_inherited``, quoting ``fact`` (Chinese, English: what
    was measured, without the failure's guess about ``rr_perturb``; default the whole failure).
    Otherwise ``failure`` unchanged.
    """
    if not hasattr(failure, "zh"):
        return failure
    got, error = _ask(keep, epsilon)
    value = _number(got)
    expected = _keep(epsilon)
    if error is None and value is not None and math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-15):
        return _fail(failure.zh + f"（你的 rr_keep_probability({epsilon:g}) = {value:.6g} 是正确的，所以错误在 rr_perturb 本身。）",
                     failure.en + f" (Your rr_keep_probability({epsilon:g}) = {value:.6g} is correct, so the mistake is "
                     f"in rr_perturb itself.)", diagnosis=failure.diagnosis)
    if (got is None and error is None) or not _calls_name(rr_perturb, KEEP) or not follows(value, error):
        return failure
    said_zh = f"抛出了 {error}" if error else f"返回 {_short(got)}"
    said_en = f"raises {error}" if error else f"returns {_short(got)}"
    follows_zh, follows_en = (("rr_perturb 抛出的正是这个异常。", "rr_perturb fails with that very exception.") if error else
                              ("rr_perturb 的结果与这个值相符，按它保留比特的做法没有发现问题。",
                               "What rr_perturb did fits that value; keeping bits with it showed no problem."))
    fact_zh, fact_en = fact or (failure.zh, failure.en)
    if epsilon > 700 and (error or value is None or not math.isfinite(value)):
        guess_zh = "e^ε 溢出了（e^800 = inf，inf/inf = nan）：改写成 1/(1 + e^(-ε))"
        guess_en = "e^ε overflows (e^800 = inf, inf/inf = nan): write it as 1/(1 + e^(-ε))"
    elif value is not None and math.isfinite(value):
        guess_zh, guess_en, _ = _keep_guess(value, epsilon)
    else:
        guess_zh, guess_en = "检查公式 p = e^ε / (e^ε + 1)", "check the formula p = e^ε / (e^ε + 1)"
    return _fail(
        f"错误多半在 rr_keep_probability，不在 rr_perturb：rr_perturb 调用了你的 rr_keep_probability，而 "
        f"rr_keep_probability({epsilon:g}) {said_zh}，正确的 p = e^ε/(e^ε+1) = {expected:.6g}。{follows_zh}"
        f"可能的错误：{guess_zh}。先修正 rr_keep_probability"
        f"（它自己的测试应该也没通过）。rr_perturb 的测试结果：{fact_zh}",
        f"The mistake is most likely in rr_keep_probability, not rr_perturb: rr_perturb calls your "
        f"rr_keep_probability, and rr_keep_probability({epsilon:g}) {said_en}, while p = e^ε/(e^ε+1) = {expected:.6g}. "
        f"{follows_en} Likely mistake: {guess_en}. "
        f"Fix rr_keep_probability first (its own test should fail too). rr_perturb's test said: {fact_en}",
        diagnosis="randomized_response.keep_probability_inherited",
    )


def _number(value: Any) -> float | None:
    """``value`` as a float when it is one number (a float, an int, a 0-d or 1-element array), else ``None``."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return float(array.reshape(-1)[0]) if array.size == 1 else None


def check_rr_perturb_invalid(rr_perturb: Callable, *, keep_probability: Callable | None = None) -> None:
    """ValueError for NaN ε and for a fractional bit (``keep_probability``: as :func:`check_rr_perturb_basics`)."""
    keep = keep_probability if keep_probability is not None else _caller_function(KEEP)
    rng = RecordingGenerator(10)
    _expect_value_error_via(rr_perturb, (np.array([0, 1]), float("nan"), rng), "ε 必须是有限正数",
                            "epsilon must be a finite number > 0", keep, (float("nan"),), KEEP,
                            "randomized_response.keep_probability_inherited")
    _expect_value_error(rr_perturb, (np.array([0.0, 0.5, 1.0]), 1.0, rng), "bits 只能是 0 或 1", "bits must be 0 or 1")
    _passed("check_rr_perturb_invalid", "ε = nan 与比特 0.5 抛出 ValueError", "ValueError for ε = nan and bit 0.5")


#: Shapes of 60,000 answers the hidden distribution check chooses from.
HIDDEN_SHAPES = (None, (300, 200), (200, 300), (600, 100), (100, 600), (240, 250), (250, 240), (1000, 60),
                 (60, 1000), (120, 500))


def hidden_perturb_case(seed: int | None = None) -> dict:
    """``{"epsilon", "n", "ones", "shape"}`` of the hidden ``check_rr_perturb_distribution``, drawn from
    the run's seed (issue 25: no fixed argument marks a hidden call): ε the visible one with probability
    1/10, else log-uniform on [0.3, 3] (3 significant digits); 60,000 answers in one of
    :data:`HIDDEN_SHAPES` (``None``: 1-D, as the visible call); a share of ones in [0.2, 0.8]."""
    g = np.random.default_rng(check_seed("hidden_perturb_case", seed))
    epsilon = EPSILON if g.random() < 0.1 else float(f"{math.exp(g.uniform(math.log(0.3), math.log(3.0))):.3g}")
    ones = round(float(g.uniform(0.2, 0.8)), 2)
    return {"epsilon": epsilon, "n": 60_000, "ones": ones, "shape": HIDDEN_SHAPES[int(g.integers(len(HIDDEN_SHAPES)))]}


def check_rr_perturb_distribution(rr_perturb: Callable, seed: int | None = None, *, epsilon: float = EPSILON,
                                  n: int = 100_000, ones: float = 0.3, shape: tuple | None = None,
                                  keep_probability: Callable | None = None) -> None:
    """Exact binomial tests of the keep rate among true 1s and among true 0s.

    Two two-sided tests at ``ALPHA / 2`` each: false-failure probability for a
    correct implementation <= ``ALPHA`` = 1e-6 in total. The answers judged must be
    built from the draws served for them (``judged`` draws checks of
    :func:`helpers.checks.forbidden._check_built_from_draws`: issue 35; they add
    less than 1e-9). On a failure the message names the function the evidence points to: the
    student's ``rr_keep_probability`` (``keep_probability``; default: the one where the check is
    called) is asked for p at the same ε (:func:`_name_the_keep_probability`).
    """
    keep = keep_probability if keep_probability is not None else _caller_function(KEEP)
    name = "check_rr_perturb_distribution"
    seed = check_seed(name + repr((epsilon, n, ones, shape)), seed)
    rng = RecordingGenerator(seed, keep=True)
    n_ones = int(round(n * ones))
    bits = np.zeros(n, dtype=np.int64)
    bits[np.random.default_rng(seed ^ 0x5EED).permutation(n)[:n_ones]] = 1
    if shape is not None:
        bits = bits.reshape(shape)
    out = _call(rr_perturb, bits, epsilon, rng, rng=rng)
    _after_call(rr_perturb, rng)
    out = _rr_output(out, bits.shape, f"bits of shape {bits.shape}, {epsilon:g}, rng")
    # The answers judged below must be built from the draws served for them (issue 35): checked once they fit.
    p = _keep(epsilon)
    kept1 = int(np.sum(out[bits == 1] == 1))
    kept0 = int(np.sum(out[bits == 0] == 0))
    p1 = binomial_test(kept1, n_ones, p)
    p0 = binomial_test(kept0, n - n_ones, p)
    r1, r0 = kept1 / n_ones, kept0 / (n - n_ones)
    text = (f"keep rate among {n_ones} ones = {r1:.4f} (binomial p = {p1:.3g}), among {n - n_ones} zeros = {r0:.4f} "
            f"(p = {p0:.3g}); expected p = e^ε/(e^ε+1) = {p:.4f} at ε = {epsilon:g}")
    if min(p1, p0) < ALPHA / 2:
        q = 1 - p
        if abs(r1 - q) < 0.01 and abs(r0 - q) < 0.01:
            mistake = "randomized_response.p_swapped"
            zh, en = "p 与 1-p 弄反了：真实答案以 1/(e^ε+1) 的概率保留", "p and 1-p swapped: the true answer is kept with probability 1/(e^ε+1)"
        elif abs(r1 - r0) > 0.05:
            mistake = "randomized_response.asymmetric_flip"
            zh, en = "对 0 和 1 的处理不同（只翻转了其中一种？）", "0s and 1s are treated differently (only one kind flipped?)"
        elif abs(r1 - (p + q / 2)) < 0.01:
            mistake = "randomized_response.warner_fair_coin"
            zh, en = "翻转时又掷了一次公平硬币（保留率变成 p + (1-p)/2）", "a fair coin decides the answer after a flip (keep rate p + (1-p)/2)"
        elif r1 in (0.0, 1.0) or r0 in (0.0, 1.0):
            mistake = "randomized_response.one_coin_for_all"
            zh, en = "所有比特一起保留或一起翻转：每个比特需要自己的随机数", "all bits kept or flipped together: each bit needs its own random number"
        elif abs(r1 - _keep(2 * epsilon)) < 0.01 or abs(r1 - _keep(epsilon / 2)) < 0.01:
            mistake = "randomized_response.epsilon_factor_2"
            zh, en = "ε 多乘或多除了 2", "ε multiplied or divided by 2"
        elif abs(r1 - 0.5) < 0.01:
            mistake = "randomized_response.ignores_truth"
            zh, en = "保留率是 1/2：输出与真实答案无关", "keep rate 1/2: the output ignores the true answer"
        else:
            mistake = "randomized_response.keep_rate_wrong"
            zh, en = "保留概率不是 e^ε/(e^ε+1)", "the keep probability is not e^ε/(e^ε+1)"
        def fits(value, error):  # the keep rates measured, tested against the student's own p at the same level
            return (error is None and value is not None and 0 <= value <= 1
                    and min(binomial_test(kept1, n_ones, value), binomial_test(kept0, n - n_ones, value)) >= ALPHA / 2)

        raise _name_the_keep_probability(rr_perturb, keep, epsilon, _fail(
            f"rr_perturb：真实为 1 的比特保留率 {r1:.4f}，真实为 0 的比特保留率 {r0:.4f}，期望都是 p = {p:.4f}（ε = {epsilon:g}；"
            f"二项检验 p 值 {p1:.2g} / {p0:.2g}，阈值 {ALPHA / 2:g}，seed = {seed}；正确实现被误判的概率 ≤ {ALPHA:g}）。可能的错误：{zh}。",
            f"rr_perturb: keep rate {r1:.4f} among true 1s and {r0:.4f} among true 0s; expected p = {p:.4f} for both "
            f"(ε = {epsilon:g}; binomial p-values {p1:.2g} / {p0:.2g}, threshold {ALPHA / 2:g}, seed = {seed}; a correct "
            f"implementation fails with probability <= {ALPHA:g}). Likely mistake: {en}.",
            diagnosis=mistake,
        ), fits)
    # Judged once the keep rates fit (a wrong p agrees more or less often by itself, and its message
    # names the mistake).
    _check_built_from_draws(rr_perturb, lambda r: rr_perturb(bits, epsilon, r), rng.drawn(), out, seed, judged=True,
                            outcomes=2, agree=p * p + (1 - p) * (1 - p))
    _say(name, seed, text + " -> OK",
         zh=f"真实为 1 与为 0 的比特保留率 {r1:.4f}、{r0:.4f} 都与 p = e^ε/(e^ε+1) = {p:.4f} 相符（二项检验）")


def check_rr_perturb_rng(rr_perturb: Callable, seed: int | None = None) -> None:
    """rng discipline plus the forbidden-call scan."""
    name = "check_rr_perturb_rng"
    seed = check_seed(name, seed)
    _check_no_forbidden(rr_perturb)
    bits = np.arange(400) % 2
    _check_rng_discipline(rr_perturb, lambda rng: rr_perturb(bits, 0.5, rng), name, seed, outcomes=2)


def _correct(n: float, n1: float, p: float) -> float:
    return ((p - 1) * n + n1) / (2 * p - 1)


def _rr_correct_value(rr_correct: Callable, n, n1, p) -> float:
    got = _call(rr_correct, n, n1, p)
    try:
        return float(got)
    except (TypeError, ValueError):
        raise _fail(
            f"rr_correct({n}, {n1}, {p}) 应返回一个数，实际返回 {type(got).__name__}。",
            f"rr_correct({n}, {n1}, {p}) should return a number; it returned {type(got).__name__}.",
            diagnosis="randomized_response.not_a_number",
        ) from None


def _rr_correct_compare(got: float, n, n1, p, where_zh: str, where_en: str) -> None:
    expected = _correct(n, n1, p)
    if math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9):
        return
    mistake = "randomized_response.correct_formula_wrong"
    zh, en = "检查公式 N = ((p-1)n + n1)/(2p-1)", "check the formula N = ((p-1)n + n1)/(2p-1)"
    if math.isclose(got, _correct(n, n1, 1 - p), rel_tol=1e-9, abs_tol=1e-9):
        mistake = "randomized_response.p_swapped"
        zh, en = "p 与 1-p 弄反了", "p and 1-p swapped"
    elif math.isclose(got, expected / n, rel_tol=1e-9, abs_tol=1e-12):
        mistake = "randomized_response.returned_fraction"
        zh, en = "返回了比例 π̂ 而不是人数 N = π̂·n", "returned the fraction π̂ instead of the count N = π̂·n"
    elif math.isclose(got, ((p - 1) * n + n1) / (2 * p), rel_tol=1e-9) or math.isclose(got, (p - 1) * n + n1 / (2 * p - 1), rel_tol=1e-9):
        mistake = "randomized_response.brackets_missing"
        zh, en = "括号/分母写错了：整个 (p-1)n + n1 要除以 (2p-1)", "brackets: the whole (p-1)n + n1 must be divided by (2p-1)"
    elif math.isclose(got, n1, rel_tol=1e-9):
        mistake = "randomized_response.no_correction"
        zh, en = "没有做校正（直接返回了 n1）", "no correction applied (n1 returned as is)"
    raise _fail(
        f"rr_correct({n}, {n1}, {p}) = {got:.6g}，期望 {expected:.6g}（{where_zh}）。可能的错误：{zh}。",
        f"rr_correct({n}, {n1}, {p}) = {got:.6g}; expected {expected:.6g} ({where_en}). Likely mistake: {en}.",
        diagnosis=mistake,
    )


def check_rr_correct_textbook(rr_correct: Callable) -> None:
    """The worked example of §6.4.2: 20 people, p = 0.8: 14 → 16.7 and 6 → 3.3."""
    for n1, shown in ((14, "16.7"), (6, "3.3")):
        got = _rr_correct_value(rr_correct, 20, n1, 0.8)
        _rr_correct_compare(got, 20, n1, 0.8, f"教材 6.4.2 的例子：≈ {shown}", f"textbook §6.4.2 worked example: ≈ {shown}")
    _passed("check_rr_correct_textbook", "教材的例子正确：rr_correct(20, 14, 0.8) ≈ 16.7，rr_correct(20, 6, 0.8) ≈ 3.3",
            "rr_correct(20, 14, 0.8) ≈ 16.7 and rr_correct(20, 6, 0.8) ≈ 3.3")


def check_rr_correct_formula(rr_correct: Callable) -> None:
    """Exact values away from the textbook example, including p < 1/2 and the ends n1 = 0, n1 = n."""
    for n, n1, p in ((1000, 615, _keep(EPSILON)), (37, 0, 0.9), (37, 37, 0.9), (500, 120, 0.25), (10, 4, 1.0), (10, 4, 0.0)):
        got = _rr_correct_value(rr_correct, n, n1, p)
        _rr_correct_compare(got, n, n1, p, "N = ((p-1)n + n1)/(2p-1)", "N = ((p-1)n + n1)/(2p-1)")
    _passed("check_rr_correct_formula", "p = 0.668、0.9、0.25、1、0 与 n1 = 0、n 的精确值正确",
            "exact values for p = 0.668, 0.9, 0.25, 1, 0 and n1 = 0, n")


def check_rr_correct_invalid(rr_correct: Callable) -> None:
    """ValueError for p = 1/2, p outside [0, 1], p = nan, n1 < 0 and n1 > n."""
    for args, zh, en in (
        ((20, 14, 0.5), "p = 0.5 时回答不含信息，分母 2p-1 = 0", "at p = 0.5 the answers carry no information and 2p-1 = 0"),
        ((20, 14, 1.2), "p 必须在 [0, 1] 内", "p must be in [0, 1]"),
        ((20, 14, -0.1), "p 必须在 [0, 1] 内", "p must be in [0, 1]"),
        ((20, 14, float("nan")), "p 必须是有限数", "p must be a finite number"),
        ((20, 21, 0.8), "n1 不能大于 n", "n1 cannot exceed n"),
        ((20, -1, 0.8), "n1 不能为负", "n1 cannot be negative"),
    ):
        _expect_value_error(rr_correct, args, zh, en)
    _passed("check_rr_correct_invalid", "p = 0.5、1.2、-0.1、nan 与 n1 = 21 > n、n1 = -1 抛出 ValueError",
            "ValueError for p = 0.5, 1.2, -0.1, nan and n1 = 21 > n, n1 = -1")
