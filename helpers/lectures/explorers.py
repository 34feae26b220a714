"""The ungraded ε-slider views of the graded notebooks: the student's own function against
the true distribution.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from helpers.checks.local_frequency import (
    reference_grr_probabilities,
    reference_grr_variance,
)
from helpers.checks.reference import (CARROTS, CARROTS_OVER_55, TABLE_6_4_SCORES, reference_exponential_probabilities,
                                      reference_keep_probability)
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT, configure_fonts
from helpers.lectures.widgets import RoundLogSlider
from helpers.queries import danger_probability

# --- ε-slider views (ungraded) -----------------------------------------------


def _explorer_figure():
    """A 6 × 3 in figure whose text can be Chinese (the course's bundled CJK font)."""
    import matplotlib.pyplot as plt

    configure_fonts()  # before any text is created: legends below are bilingual
    fig, ax = plt.subplots(figsize=(6, 3))
    plt.close(fig)
    return fig, ax


def _slider_view(draw: Callable[[float], None], fig, description: str = "ε"):
    import ipywidgets as widgets
    from IPython.display import display

    slider = RoundLogSlider(1.0, -1, 1, description=description, continuous_update=False)
    out = widgets.Output(layout=widgets.Layout(min_height="320px"))

    def redraw(change=None):
        with out:
            out.clear_output(wait=True)
            try:
                draw(slider.value)
                box.last_error = None
                display(fig)
            except NotImplementedError as error:
                box.last_error = error
                print("你的函数还没有实现 / your function is not implemented yet (NotImplementedError)")
            except Exception as error:  # noqa: BLE001  (shown to the student, not lost)
                box.last_error = error
                print(f"你的函数出错了 / your function raised {type(error).__name__}: {error}")

    box = widgets.VBox([slider, out])
    box.slider, box.figure, box.output, box.redraw, box.last_error = slider, fig, out, redraw, None
    slider.observe(redraw, names="value")
    redraw()
    return box


def laplace_explorer(laplace_mechanism: Callable, sensitivity: float = 1.0, n: int = 20_000, seed: int = 0):
    """Histogram of ``laplace_mechanism(0, Δ, ε, rng)`` against the Laplace(Δ/ε) density; ε on a log slider."""
    fig, ax = _explorer_figure()
    grid = np.linspace(-15, 15, 301)
    edges = np.linspace(-15, 15, 61)
    centers, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    bars = ax.bar(centers, np.zeros(centers.size), width=width, alpha=0.5, label="your samples / 你的样本")
    (line,) = ax.plot(grid, np.zeros(grid.size), "k-", label="Laplace(Δ/ε) density / 密度")
    ax.set_xlim(-15, 15)
    ax.set_ylim(0, 1.2)
    ax.legend(loc="upper right")

    def draw(epsilon):
        b = sensitivity / epsilon
        x = np.asarray(laplace_mechanism(np.zeros(n), sensitivity, epsilon, np.random.default_rng(seed)), dtype=float)
        heights, _ = np.histogram(x, bins=edges)
        for bar, h in zip(bars, heights / (n * width)):
            bar.set_height(h)
        line.set_ydata(np.exp(-np.abs(grid) / b) / (2 * b))
        ax.set_title(f"ε = {epsilon:g}, Δ = {sensitivity:g}, b = Δ/ε = {b:.3g}")

    return _slider_view(draw, fig)


def exponential_explorer(exponential_mechanism: Callable, scores=TABLE_6_4_SCORES, sensitivity: float = 1.0,
                         n: int = 2_000, seed: int = 0):
    """Frequencies of ``n`` draws of the student's mechanism against exp(εq/(2Δq)) (Table 6-4's scores)."""
    fig, ax = _explorer_figure()
    k = len(scores)
    xs = np.arange(k)
    bars = ax.bar(xs - 0.2, np.zeros(k), width=0.4, label="your draws / 你的抽样")
    truth = ax.bar(xs + 0.2, np.zeros(k), width=0.4, label="exp(εq/(2Δq))")
    ax.set_xticks(xs, [f"q = {s:g}" for s in scores])
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")

    def draw(epsilon):
        rng = np.random.default_rng(seed)
        counts = np.bincount([int(exponential_mechanism(list(scores), epsilon, sensitivity, rng)) for _ in range(n)], minlength=k)
        for bar, h in zip(bars, counts / n):
            bar.set_height(h)
        for bar, h in zip(truth, reference_exponential_probabilities(np.array(scores), epsilon, sensitivity)):
            bar.set_height(h)
        ax.set_title(f"ε = {epsilon:g}, Δq = {sensitivity:g}")

    return _slider_view(draw, fig)


def rr_explorer(rr_perturb: Callable, n: int = 200, true_ones: int = 60, repeats: int = 1_000, seed: int = 0):
    """Histogram of the number of reported 1s over ``repeats`` surveys against its exact distribution."""
    from scipy import stats

    fig, ax = _explorer_figure()
    support = np.arange(n + 1)
    bars = ax.bar(support, np.zeros(n + 1), width=1.0, alpha=0.5, label="your surveys / 你的调查")
    (line,) = ax.plot(support, np.zeros(n + 1), "k-", label="exact / 精确分布")
    ax.set_xlim(0, n)
    ax.set_ylim(0, 0.12)
    ax.legend(loc="upper right")
    bits = np.zeros((repeats, n), dtype=int)
    bits[:, :true_ones] = 1

    def draw(epsilon):
        p = reference_keep_probability(epsilon)
        reported = np.asarray(rr_perturb(bits, epsilon, np.random.default_rng(seed))).sum(axis=1)
        heights = np.bincount(reported.astype(int), minlength=n + 1)[: n + 1] / repeats
        for bar, h in zip(bars, heights):
            bar.set_height(h)
        exact = np.convolve(stats.binom.pmf(np.arange(true_ones + 1), true_ones, p),
                            stats.binom.pmf(np.arange(n - true_ones + 1), n - true_ones, 1 - p))
        line.set_ydata(exact)
        ax.set_title(f"ε = {epsilon:g}, p = {p:.3f}：{n} 人中 {true_ones} 人为 1 / {true_ones} true 1s out of {n}")

    return _slider_view(draw, fig)


# --- private_mean (ungraded) ----------------------------------------



def private_mean_explorer(private_mean: Callable, n_outputs: int = 1000, seed: int = 0):
    """Histogram of the student's ``private_mean`` on 40 ages in [0, 100]; ε on a log slider."""
    import matplotlib.pyplot as plt

    configure_fonts()  # the bilingual labels need a CJK font (no tofu)
    ages = np.array([23, 35, 41, 29, 52, 67, 38, 45, 31, 58, 26, 49, 72, 33, 44, 39, 61, 28, 36, 47,
                     55, 30, 42, 64, 37, 50, 25, 46, 34, 59, 40, 53, 27, 48, 69, 32, 43, 57, 24, 51], dtype=float)
    truth = float(ages.mean())
    fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
    plt.close(fig)
    edges = np.linspace(0, 100, 81)
    centers, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    bars = ax.bar(centers, np.zeros(centers.size), width=width, alpha=0.6, label="your outputs / 你的输出")
    ax.axvline(truth, color="k", label=f"true mean / 真实均值 {truth:.1f}")
    ax.set_xlim(0, 100)
    ax.set_xlabel("private mean of 40 ages / 40 个年龄的隐私均值")
    ax.legend(loc="upper center", fontsize=SMALL_TEXT_PT)

    def draw(epsilon):
        rng = np.random.default_rng(seed)
        out = np.array([float(private_mean(list(ages), 0.0, 100.0, float(epsilon), rng)) for _ in range(n_outputs)])
        heights, _ = np.histogram(out, bins=edges)
        for bar, h in zip(bars, heights / n_outputs):
            bar.set_height(h)
        ax.set_ylim(0, max(0.05, 1.3 * heights.max() / n_outputs))
        rmse = float(np.sqrt(np.mean((out - truth) ** 2)))
        ax.set_title(f"ε = {epsilon:.2f}: RMSE = {rmse:.2f}（{n_outputs} 个输出 / outputs）")

    return _slider_view(draw, fig)


# --- privacy_budget (ungraded) ----------------------------------------



def budget_explorer(make_accountant: Callable, answer_count: Callable, averaging_attack: Callable,
                    total_epsilon: float = 1.0, trials: int = 100, seed: int = 0):
    """Success rate of the student's attack against the student's server, with and without the accountant.

    For ε per query on a log slider and k = 1..200 repeated queries: without
    an accountant (a ledger with an unlimited budget) the attacker gets all k
    answers; with a ledger of ``total_epsilon`` she gets at most
    floor(total/ε) of them. The black line is Table 6-3's exact probability.
    """
    import matplotlib.pyplot as plt

    configure_fonts()  # the bundled CJK font: Chinese legend text without empty boxes

    fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
    plt.close(fig)
    ks = np.array([1, 2, 5, 10, 20, 50, 100, 200])
    (free,) = ax.plot(ks, np.zeros(ks.size), "o-", label="no accountant / 无预算管理")
    (guarded,) = ax.plot(ks, np.zeros(ks.size), "s--", label=f"accountant, total ε = {total_epsilon:g} / 有预算管理")
    (exact,) = ax.plot(ks, np.zeros(ks.size), "k-", linewidth=1, label="Table 6-3 exact / 精确概率")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("k")
    ax.set_ylabel("猜中的概率 / P(guess = truth)")
    ax.legend(loc="upper left", fontsize=SMALL_TEXT_PT)
    true_count = CARROTS_OVER_55

    def rates(epsilon: float, total: float, rng) -> list[float]:
        """Success rate for each k; one attacker per trial asks up to max(ks) times and
        attacks the first k answers she got (fewer when the ledger refused)."""
        hits = np.zeros(ks.size)
        for _ in range(trials):
            ledger = make_accountant(total)
            answers = []
            for _ in range(int(ks[-1])):
                try:
                    value, ledger = answer_count(ledger, CARROTS, 55.0, epsilon, rng)
                except ValueError:
                    break  # refused: the budget is spent
                answers.append(value)
            for j, k in enumerate(ks):
                got = answers[:int(k)]
                hits[j] += bool(got) and int(averaging_attack(np.array(got))) == true_count
        return list(hits / trials)

    def draw(epsilon):
        rng = np.random.default_rng(seed)
        free.set_ydata(rates(epsilon, 1e9, rng))
        guarded.set_ydata(rates(epsilon, total_epsilon, rng))
        exact.set_ydata([danger_probability(epsilon, int(k)) for k in ks])
        answered = int(total_epsilon / epsilon + 1e-9)
        ax.set_title(f"每个查询 ε = {epsilon:.2f}：账本回答 {answered} 次后拒绝\n"
                     f"ε per query = {epsilon:.2f}: the accountant refuses after {answered} "
                     f"answer{'' if answered == 1 else 's'}", fontsize=TITLE_PT)

    return _slider_view(draw, fig, description="ε")


# --- local_frequency (ungraded) ----------------------------------------



def grr_explorer(grr_perturb: Callable, grr_estimate: Callable, k: int = 6, n: int = 2_000, seed: int = 0):
    """Bars: true counts, the student's estimates from one run of the student's ``grr_perturb``
    (± 2 sd of the reference variance); ε on a log slider."""
    import matplotlib.pyplot as plt

    configure_fonts()  # the bundled CJK font: Chinese legend text without empty boxes

    fig, ax = plt.subplots(figsize=(6, 3))
    plt.close(fig)
    shares = np.array([0.35, 0.25, 0.2, 0.1, 0.1, 0.0])[:k]
    true_counts = np.round(shares / shares.sum() * n).astype(int)
    true_counts[0] += n - true_counts.sum()
    values = np.repeat(np.arange(k, dtype=np.int64), true_counts)
    xs = np.arange(k)
    ax.bar(xs - 0.2, true_counts, width=0.4, color="0.6", label="true / 真实")
    est_bars = ax.bar(xs + 0.2, np.zeros(k), width=0.4, label="your estimate / 你的估计")
    (err,) = ax.plot([], [], "k_", markersize=12, label="± 2 sd")
    ax.set_xticks(xs, [str(v) for v in xs])
    ax.set_ylim(-0.5 * n, 1.0 * n)
    ax.axhline(0, color="k", linewidth=0.5)
    ax.legend(loc="upper right", fontsize=SMALL_TEXT_PT)

    def draw(epsilon):
        rng = np.random.default_rng(seed)
        reports = np.asarray(grr_perturb(values, k, epsilon, rng))
        est = np.asarray(grr_estimate(reports, k, epsilon), dtype=float)
        for bar, h in zip(est_bars, est):
            bar.set_height(h)
        sd = np.array([math.sqrt(reference_grr_variance(n, k, epsilon, c / n)) for c in true_counts])
        err.set_data(np.concatenate([xs + 0.2, xs + 0.2]), np.concatenate([true_counts - 2 * sd, true_counts + 2 * sd]))
        p, q = reference_grr_probabilities(k, epsilon)
        ax.set_title(f"k = {k}, n = {n}, ε = {epsilon:.2f}: p = {p:.3f}, q = {q:.3f}")

    return _slider_view(draw, fig)
