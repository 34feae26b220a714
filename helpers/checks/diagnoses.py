"""Every diagnosis id a check can report, with what it means and what to tell the student.

A failed check raises ``CheckFailure(zh, en, diagnosis)`` (:mod:`helpers.checks.core`);
``diagnosis`` is one of the keys of :data:`DIAGNOSES`. The class report groups
submissions by these ids, and the instructor's guide (``docs/teacher-guide.md``,
written by ``docs/build_guide.py``) prints this table, so the explanation a
lecturer reads is the one kept beside the checks. ``tests/test_diagnoses.py``
fails when a check names an id that is not here, or this table keeps an id no
check names any more.

Each entry: the meaning (Chinese), what to tell the student (Chinese), then the
same two in English.
"""

from __future__ import annotations

from typing import NamedTuple


class Diagnosis(NamedTuple):
    """What a diagnosis id means and the advice for the student, in both languages."""

    meaning_zh: str
    advice_zh: str
    meaning_en: str
    advice_en: str


_D = Diagnosis

#: Title of each id's prefix (the assignment, or ``common`` for the checks shared by all).
GROUPS = {
    "common": ("所有作业共用的检查", "checks shared by every assignment"),
    "laplace": ("作业 laplace（拉普拉斯机制）", "assignment laplace"),
    "exponential": ("作业 exponential（指数机制）", "assignment exponential"),
    "randomized_response": ("作业 randomized_response（随机响应）", "assignment randomized_response"),
    "private_mean": ("作业 private_mean（带隐私审计的均值）", "assignment private_mean"),
    "privacy_budget": ("作业 privacy_budget（隐私预算记账）", "assignment privacy_budget"),
    "local_frequency": ("作业 local_frequency（本地化差分隐私下的频率估计）", "assignment local_frequency"),
}

DIAGNOSES: dict[str, Diagnosis] = {
    # --- common ---------------------------------------------------------------------------------
    "common.not_implemented": _D(
        "函数仍是模板，调用时抛出 NotImplementedError。",
        "删掉 raise NotImplementedError，在 YOUR CODE HERE 处写出实现。",
        "The function is still the template and raises NotImplementedError.",
        "Remove the raise NotImplementedError and write the implementation."),
    "common.crashed": _D(
        "调用学生函数时抛出了意料之外的异常（消息里有异常类型和参数）。",
        "用消息里给出的参数在自己的笔记本里调用一次，读懂报错再改；常见原因是变量名写错、形状不对或整数除法。",
        "Calling the student's function raised an unexpected exception (type and arguments in the message).",
        "Call it with the arguments shown, read the error and fix it."),
    "common.timeout": _D(
        "一次调用超过了时间限制，多半是逐个元素的 Python 循环太慢或死循环。",
        "用 numpy 向量化（一次生成 size 个随机数）；检查 while 循环能否结束。",
        "A call ran past its time limit: a slow element-by-element loop or an endless loop.",
        "Vectorize with numpy (draw size numbers at once); check that loops terminate."),
    "common.no_value_error": _D(
        "非法参数（如 ε ≤ 0、尺度 ≤ 0）没有抛出 ValueError。",
        "在函数开头检查参数，不合法时 raise ValueError，并在消息里说明哪个参数、允许的范围和收到的值。",
        "An invalid argument (ε ≤ 0, scale ≤ 0, …) did not raise ValueError.",
        "Validate the parameters first and raise ValueError naming the parameter, the range and the value."),
    "common.nan_accepted": _D(
        "参数为 nan（或 inf）时没有抛出 ValueError：nan <= 0 为 False，普通的比较拦不住它。",
        "用 math.isfinite（或 np.isfinite）单独检查，再比较大小。",
        "nan (or inf) was accepted: nan <= 0 is False, so a plain comparison lets it through.",
        "Check math.isfinite (or np.isfinite) before comparing."),
    "common.wrong_exception": _D(
        "非法参数抛出了 ValueError 以外的异常（例如 TypeError、ZeroDivisionError）。",
        "显式检查参数并 raise ValueError，不要等到后面的计算自己出错。",
        "An invalid argument raised something other than ValueError.",
        "Check the argument explicitly and raise ValueError."),
    "common.forbidden_rng_method": _D(
        "调用了 rng.random 以外的 rng 方法（如 rng.laplace、rng.exponential、rng.choice）。本作业要求自己实现抽样。",
        "只用 rng.random(size) 产生均匀随机数，再用逆变换等方法把它变成所需的分布。",
        "An rng method other than rng.random was called (rng.laplace, rng.choice, …); this assignment asks for a hand-built sampler.",
        "Draw uniforms with rng.random(size) only and transform them (inverse CDF, …)."),
    "common.rng_dtype": _D(
        "调用 rng.random 时指定了 float64 以外的 dtype。",
        "用默认的 rng.random(size)，不要加 dtype=np.float32。",
        "rng.random was called with a dtype other than float64.",
        "Use rng.random(size) with the default dtype."),
    "common.forbidden_sampler": _D(
        "代码用了不允许的随机数来源或现成抽样器（np.random.*、random 模块、scipy.stats、helpers 里的参考实现等）。",
        "随机数只能来自传入的 rng；不要导入参考实现。",
        "A forbidden source of randomness or a ready-made sampler was used (np.random.*, random, scipy.stats, helpers).",
        "Take every random number from the rng passed in; do not import the reference."),
    "common.rng_unused": _D(
        "函数没有调用传入的 rng（rng.random 被调用 0 次）。",
        "用参数 rng 产生随机数，不要用 np.random.* 或在函数里新建生成器。",
        "The function never used the rng it was given.",
        "Draw from the rng parameter; do not create a generator inside the function."),
    "common.rng_not_reproducible": _D(
        "同一个种子的 rng 给出了不同的输出：有随机性来自 rng 以外（全局状态、random 模块、未设种子的生成器）。",
        "所有随机数都从传入的 rng 取，这样同一种子的结果才能复现，评分也才能审核。",
        "Two rngs with the same seed gave different outputs: some randomness comes from outside rng.",
        "Take all randomness from the rng passed in."),
    "common.rng_seed_fixed": _D(
        "不同种子的 rng 给出了完全相同的输出：函数里固定了种子，或根本没用 rng。",
        "删掉函数内部的 default_rng(固定种子) 或 np.random.seed，直接用参数 rng。",
        "Different seeds gave identical outputs: a seed is fixed inside the function, or rng is ignored.",
        "Remove the fixed seed and use the rng parameter."),
    "common.output_not_from_draws": _D(
        "把同样的 rng.random 抽样重放一遍，输出却变了：输出不只由这些均匀数决定。",
        "输出必须是 rng.random 给出的数的函数；检查是否有其他随机来源或全局状态。",
        "Replaying the same rng.random draws changed the output: it does not depend only on those draws.",
        "Make the output a function of the draws only."),
    "common.draw_count_unstable": _D(
        "稍微改动抽到的均匀数，抽样次数就跟着变：抽样次数由全部抽样混合决定，而不是自己实现的抽样。",
        "每个输出元素只用它自己的均匀数构造（逆变换、符号×指数等），抽样次数应当固定或只在阈值附近变化。",
        "Nudging the uniforms changed how many were drawn: the count depends on a mix of all draws, not a hand-built sampler.",
        "Build each output element from its own uniforms; the number of draws should be fixed."),
    "common.generator_seeded_from_draws": _D(
        "只换掉少数几个均匀数，就有许多输出元素改变：把抽到的数当种子新建了生成器，或把所有抽样混在一起。",
        "不要用抽到的数做种子；每个元素应由它自己用到的均匀数直接变换得到。",
        "Replacing a few uniforms changed many outputs: a generator seeded from the draws, or all draws mixed.",
        "Do not seed generators from draws; transform each element's own uniforms."),
    "common.sampler_seeded_per_element": _D(
        "把每个均匀数移动极小的量，输出却跳到毫不相关的值：用抽到的数给每个元素的现成抽样器做种子。",
        "自己实现的抽样（逆变换等）是均匀数的连续函数；请直接变换 u，而不是 default_rng(int(u * 2**32))。",
        "A tiny move of each uniform made outputs jump: a ready-made sampler seeded per element from the draws.",
        "Transform u directly (inverse CDF); do not seed a sampler from it."),
    # --- laplace ----------------------------------------------------------------------------------
    "laplace.not_an_array": _D(
        "laplace_noise 没有返回 numpy 数组（返回了列表、数或 None）。",
        "用 numpy 运算一次生成 size 个噪声，返回 np.ndarray。",
        "laplace_noise did not return a numpy array.",
        "Compute the noise with numpy and return an ndarray."),
    "laplace.wrong_shape": _D(
        "返回数组的形状与 size 不一致。",
        "用 rng.random(size) 生成与 size 同形状的均匀数，整个计算保持这个形状。",
        "The returned array's shape differs from size.",
        "Draw rng.random(size) and keep that shape throughout."),
    "laplace.not_float": _D(
        "返回的 dtype 不是浮点数（多半做了取整或 astype(int)）。",
        "噪声是连续的实数，不要取整。",
        "The returned dtype is not floating point.",
        "Laplace noise is real-valued: do not round."),
    "laplace.scalar_not_float": _D(
        "laplace_mechanism 对一个数的查询结果没有返回浮点数。",
        "返回 float（例如 float(value + noise)），而不是数组或整数。",
        "laplace_mechanism did not return a float for a scalar value.",
        "Return float(value + noise)."),
    "laplace.log_of_zero": _D(
        "输出中有 inf 或 nan：rng.random() 可能恰好返回 0，ln(0) = -inf。",
        "避开 0，例如用 1 - u（rng.random 的取值范围是 [0, 1)，1 - u 落在 (0, 1]）。",
        "The output has inf or nan: rng.random() can return 0 and ln(0) = -inf.",
        "Use 1 - u, which lies in (0, 1]."),
    "laplace.one_noise_for_all": _D(
        "只抽了一个（或少数几个）噪声，用在整个数组或所有查询上。",
        "每个元素、每次调用都要自己独立的噪声：rng.random(size) 一次生成 size 个。",
        "One noise value (or a few) was used for the whole array or every call.",
        "Every element needs its own independent noise."),
    "laplace.missing_sign": _D(
        "所有噪声同号：少了随机符号（两个分支中的一个）。",
        "拉普拉斯分布关于 0 对称：用第二个均匀数（或 u 是否小于 1/2）决定符号。",
        "All noise values have the same sign: the random sign is missing.",
        "Laplace is symmetric: draw the sign too."),
    "laplace.extra_u2_term": _D(
        "噪声的均值约为 0.5：在噪声上多加了一个均匀随机数 u2，这是教材 6.2.2 印刷公式的错误。",
        "对照课程勘误：正确的组合法是符号 × 指数分布，不要再加 u2。",
        "The noise has mean ≈ 0.5: a uniform u2 was added, the misprint of textbook §6.2.2.",
        "Follow the erratum: sign × exponential, no extra u2."),
    "laplace.asymmetric_noise": _D(
        "噪声均值明显不为 0：两个分支的概率或公式不对称。",
        "检查两个分支是否各占 1/2，且互为相反数。",
        "The noise mean is clearly not 0: the two branches are not symmetric.",
        "Each branch must have probability 1/2 and mirror the other."),
    "laplace.scale_wrong": _D(
        "测得的尺度与 b = Δf/ε 不符，且不像任何一种常见的写错。",
        "重新推导：尺度 b = Δf/ε；逆变换为 x = -b·sgn(u - 1/2)·ln(1 - 2|u - 1/2|)。",
        "The measured scale differs from b = Δf/ε and matches no common mistake.",
        "Re-derive: b = Δf/ε and the inverse CDF."),
    "laplace.scale_inverted": _D(
        "尺度写成了 ε/Δf（或 1/b），分子分母颠倒。",
        "尺度 b = Δf/ε：ε 越小噪声越大，用这个直觉检查公式。",
        "The scale is ε/Δf (or 1/b): inverted.",
        "b = Δf/ε: smaller ε, more noise."),
    "laplace.scale_one_over_eps_delta": _D(
        "尺度写成了 1/(ε·Δf)。",
        "灵敏度在分子上：b = Δf/ε。",
        "The scale is 1/(ε·Δf).",
        "The sensitivity goes in the numerator: b = Δf/ε."),
    "laplace.scale_eps_times_delta": _D(
        "尺度写成了 ε·Δf。",
        "b = Δf/ε，不是乘积。",
        "The scale is ε·Δf.",
        "b = Δf/ε, not a product."),
    "laplace.sensitivity_ignored": _D(
        "尺度是 1/ε：忘了乘灵敏度 Δf。",
        "噪声要盖住一个人能造成的最大变化 Δf：b = Δf/ε。",
        "The scale is 1/ε: the sensitivity is missing.",
        "b = Δf/ε."),
    "laplace.epsilon_ignored": _D(
        "尺度是 Δf：忘了除以 ε。",
        "隐私预算 ε 决定噪声大小：b = Δf/ε。",
        "The scale is Δf: ε is ignored.",
        "b = Δf/ε."),
    "laplace.scale_halved": _D(
        "尺度只有应有的一半（如 Δf/(2ε)，或 b/2）。",
        "检查是否把指数机制的 2Δ 或逆变换里的 2 用错了地方；拉普拉斯机制 b = Δf/ε。",
        "The scale is half of what it should be.",
        "Check stray factors of 2; b = Δf/ε."),
    "laplace.scale_doubled": _D(
        "尺度是应有的两倍（如 2Δf/ε）。",
        "不多不少：b = Δf/ε；多余的噪声浪费了精度。",
        "The scale is twice what it should be.",
        "b = Δf/ε exactly."),
    "laplace.scale_is_epsilon": _D(
        "尺度等于 ε。",
        "把 ε 当成了尺度：b = Δf/ε。",
        "The scale equals ε.",
        "b = Δf/ε."),
    "laplace.scale_ignored": _D(
        "尺度恒为 1：参数 b 没有用上。",
        "把标准拉普拉斯样本乘以 b。",
        "The scale is always 1: b is ignored.",
        "Multiply the standard sample by b."),
    "laplace.scale_squared": _D(
        "尺度是 b²。",
        "拉普拉斯样本与 b 成正比：乘 b 一次。",
        "The scale is b².",
        "Multiply by b once."),
    "laplace.scale_sqrt": _D(
        "尺度是 √b。",
        "拉普拉斯样本与 b 成正比，不是与 √b。",
        "The scale is √b.",
        "The sample is proportional to b."),
    "laplace.scale_is_std": _D(
        "尺度是 b/√2：把 b 当成了标准差（Lap(b) 的标准差是 √2·b）。",
        "参数 b 是尺度，不是标准差；方差是 2b²。",
        "The scale is b/√2: b was taken for the standard deviation (Lap(b) has sd √2·b).",
        "b is the scale; the variance is 2b²."),
    "laplace.not_laplace_shape": _D(
        "均值和尺度都接近正确，但分布形状不是拉普拉斯分布（例如用了正态或均匀分布，或只在一个分支上做了变换）。",
        "画出样本直方图与 Laplace 密度对比；检查逆变换的两个分支。",
        "Mean and scale are close but the shape is not Laplace (normal, uniform, one branch only, …).",
        "Plot a histogram against the Laplace density; check both branches."),
    "laplace.no_noise": _D(
        "laplace_mechanism 返回了精确值（或几乎没有噪声）。",
        "返回 value + 噪声，噪声尺度为 Δf/ε。",
        "laplace_mechanism returned the exact value.",
        "Return value + Lap(Δf/ε) noise."),
    # --- exponential ------------------------------------------------------------------------------
    "exponential.wrong_output_type": _D(
        "exponential_probabilities 没有返回长度为候选数的 numpy 数组。",
        "返回一个 np.ndarray，每个候选一个概率。",
        "exponential_probabilities did not return an array with one probability per candidate.",
        "Return an ndarray of length k."),
    "exponential.formula_wrong": _D(
        "概率与 Pr[r] ∝ exp(ε·q(D, r)/(2Δq)) 不符，且不像任何常见错误。",
        "对照教材公式逐项检查：分子 εq，分母 2Δq，最后归一化。",
        "The probabilities do not follow Pr[r] ∝ exp(εq/(2Δq)).",
        "Check each factor against the formula, then normalize."),
    "exponential.missing_factor_2": _D(
        "指数中少了因子 2（用了 exp(εq/Δq)）。",
        "指数机制的指数是 εq/(2Δq)：2 来自分母归一化常数也会随数据变化。",
        "The factor 2 is missing (exp(εq/Δq) was used).",
        "The exponent is εq/(2Δq)."),
    "exponential.eps_times_delta": _D(
        "用了 ε·Δq 而不是 ε/Δq。",
        "灵敏度在分母上：exp(εq/(2Δq))。",
        "ε·Δq was used instead of ε/Δq.",
        "Δq divides: exp(εq/(2Δq))."),
    "exponential.sensitivity_ignored": _D(
        "忘了除以灵敏度 Δq。",
        "分数的变化幅度由 Δq 衡量：exp(εq/(2Δq))。",
        "The sensitivity Δq is missing.",
        "Divide by Δq."),
    "exponential.sign_reversed": _D(
        "符号反了：分数低的候选概率反而高。",
        "可用性越高越应被选中：指数为 +εq/(2Δq)。",
        "Wrong sign: low scores get high probabilities.",
        "Use +εq/(2Δq)."),
    "exponential.ignores_scores": _D(
        "概率与分数无关（均匀分布）。",
        "每个候选的权重是 exp(εq/(2Δq))，与它的分数有关。",
        "The probabilities ignore the scores (uniform).",
        "Weight each candidate by exp(εq/(2Δq))."),
    "exponential.always_best": _D(
        "总是输出最高分（没有随机性），不满足差分隐私。",
        "按概率随机选择，而不是取 argmax。",
        "Always the highest score: no randomness, not differentially private.",
        "Sample by the probabilities, not argmax."),
    "exponential.linear_in_scores": _D(
        "概率正比于分数本身，而不是 exp(...)。",
        "权重是分数的指数函数：exp(εq/(2Δq))。",
        "Probabilities proportional to the scores, not to exp(...).",
        "Use the exponential of the scores."),
    "exponential.not_normalized": _D(
        "没有归一化，概率之和不是 1。",
        "把所有权重除以它们的和。",
        "Not normalized: the probabilities do not sum to 1.",
        "Divide the weights by their sum."),
    "exponential.overflow": _D(
        "分数或 ε 较大时 exp 溢出成 inf，结果出现 nan。",
        "先减去最大的 εq/(2Δq) 再取 exp（结果不变，数值稳定）。",
        "exp overflowed for large scores or ε, giving nan.",
        "Subtract the maximum logit before exp."),
    "exponential.table_mismatch": _D(
        "与教材表 6-4（分数 30、25、8、2，Δq = 1）的概率不符。",
        "用表 6-4 的数自己算一遍，对照每一列。",
        "Does not match Table 6-4.",
        "Recompute Table 6-4 by hand and compare."),
    "exponential.not_a_distribution": _D(
        "返回的概率有负数或和不为 1。",
        "权重 exp(...) 总是正的；最后除以总和。",
        "Negative probabilities or a sum other than 1.",
        "Weights are positive; normalize."),
    "exponential.single_candidate_wrong": _D(
        "只有一个候选时概率不是 [1.0]。",
        "检查边界情况：归一化后唯一候选的概率必为 1。",
        "One candidate does not get probability 1.",
        "Check the one-candidate case."),
    "exponential.not_shift_invariant": _D(
        "所有分数加同一个常数后概率变了：溢出或精度丢失。",
        "先减去最大值再取 exp，概率对平移不变。",
        "Adding a constant to all scores changed the probabilities: overflow or lost precision.",
        "Subtract the maximum before exp."),
    "exponential.not_an_index": _D(
        "exponential_mechanism 没有返回整数下标（返回了分数、数组或布尔值）。",
        "返回被选中候选的下标 int。",
        "exponential_mechanism did not return an int index.",
        "Return the chosen index as an int."),
    "exponential.index_off_by_one": _D(
        "返回的下标不在 0..k-1 之内，多半差了 1。",
        "用累积概率找下标时检查边界（np.searchsorted 的 side 参数）。",
        "The index is outside 0..k-1: off by one.",
        "Check the boundaries when mapping cumulative probabilities to indices."),
    "exponential.best_not_certain": _D(
        "分数差距极大时（[0, 1e6, 3]）输出了几乎不可能的候选：溢出或下标错位。",
        "先减去最大值再取 exp；检查累积概率到下标的对应。",
        "With scores [0, 1e6, 3] an impossible candidate came out: overflow or off by one.",
        "Stabilize exp and check the index mapping."),
    "exponential.sampling_wrong": _D(
        "抽到各候选的频率与概率不符，且不像公式写错：抽样步骤有误。",
        "检查由一个均匀数 u 和累积概率得到下标的步骤。",
        "The frequencies do not match the probabilities: the sampling step is wrong.",
        "Check how u and the cumulative probabilities give the index."),
    # --- randomized_response ----------------------------------------------------------------------
    "randomized_response.not_float": _D(
        "rr_keep_probability 没有返回浮点数。",
        "返回 float，例如 float(1 / (1 + math.exp(-epsilon)))。",
        "rr_keep_probability did not return a float.",
        "Return a float."),
    "randomized_response.keep_formula_wrong": _D(
        "保留概率与 p = e^ε/(e^ε + 1) 不符。",
        "从 p/(1-p) = e^ε 解出 p。",
        "The keep probability differs from p = e^ε/(e^ε + 1).",
        "Solve p/(1-p) = e^ε."),
    "randomized_response.p_swapped": _D(
        "p 与 1-p 弄反了：1/(e^ε + 1) 是翻转（说假话）的概率。",
        "保留真实答案的概率更大：p = e^ε/(e^ε + 1) > 1/2。",
        "p and 1-p swapped: 1/(e^ε+1) is the flip probability.",
        "The keep probability is the larger one."),
    "randomized_response.epsilon_factor_2": _D(
        "ε 多乘或多除了 2。",
        "随机响应满足 ε-差分隐私的条件是 p/(1-p) = e^ε，没有 2。",
        "ε is multiplied or divided by 2.",
        "p/(1-p) = e^ε, no factor 2."),
    "randomized_response.overflow": _D(
        "ε 很大（如 800）时 e^ε 溢出，inf/inf = nan。",
        "改写成 1/(1 + e^(-ε))，数学上相同而不会溢出。",
        "e^ε overflows for large ε (800): inf/inf = nan.",
        "Write 1/(1 + e^(-ε))."),
    "randomized_response.wrong_output_type": _D(
        "rr_perturb 没有返回与输入同形状的 numpy 数组。",
        "返回与 bits 同形状的 np.ndarray。",
        "rr_perturb did not return an array shaped like its input.",
        "Return an ndarray shaped like bits."),
    "randomized_response.not_integer": _D(
        "rr_perturb 返回的不是整数 0/1（例如布尔或浮点）。",
        "用 .astype(int) 转成整数。",
        "rr_perturb did not return integers 0/1.",
        "Convert with .astype(int)."),
    "randomized_response.not_binary": _D(
        "rr_perturb 返回了 0/1 以外的值。",
        "翻转用 1 - bit，不要用 -bit 或 bit + 1。",
        "rr_perturb returned values other than 0/1.",
        "Flip with 1 - bit."),
    "randomized_response.asymmetric_flip": _D(
        "对真实值 0 和 1 的处理不同（只翻转了其中一种）。",
        "每个比特，无论 0 还是 1，都以同一个概率 1-p 翻转。",
        "0s and 1s are treated differently (only one kind flipped).",
        "Flip every bit with the same probability 1-p."),
    "randomized_response.warner_fair_coin": _D(
        "翻转后又掷了一次公平硬币决定答案（保留率变成 p + (1-p)/2），与要求的机制不同。",
        "本作业的机制：以概率 p 报告真实值，否则报告相反值。",
        "A fair coin decides after a flip (keep rate p + (1-p)/2).",
        "Report the truth with probability p, else its opposite."),
    "randomized_response.one_coin_for_all": _D(
        "所有比特一起保留或一起翻转：只用了一个随机数。",
        "每个比特需要自己的随机数：rng.random(bits.shape) < p。",
        "All bits kept or flipped together: one random number for all.",
        "Draw one uniform per bit."),
    "randomized_response.ignores_truth": _D(
        "保留率为 1/2：输出与真实答案无关，没有任何可用性。",
        "保留概率应为 p = e^ε/(e^ε + 1)，而不是 1/2。",
        "Keep rate 1/2: the output ignores the truth.",
        "Keep with probability p = e^ε/(e^ε+1)."),
    "randomized_response.keep_rate_wrong": _D(
        "测得的保留率与 p 不符。",
        "检查比较方向：u < p 时保留。",
        "The measured keep rate differs from p.",
        "Keep when u < p."),
    "randomized_response.not_a_number": _D(
        "rr_correct 没有返回一个数。",
        "返回估计的人数（float）。",
        "rr_correct did not return a number.",
        "Return the estimated count."),
    "randomized_response.correct_formula_wrong": _D(
        "校正结果与 N = ((p-1)n + n1)/(2p-1) 不符。",
        "从 E[n1] = pN + (1-p)(n-N) 解出 N。",
        "The correction differs from N = ((p-1)n + n1)/(2p-1).",
        "Solve E[n1] = pN + (1-p)(n-N) for N."),
    "randomized_response.returned_fraction": _D(
        "返回了比例 π̂ 而不是人数 N = π̂·n。",
        "再乘以 n。",
        "Returned the fraction π̂ instead of the count.",
        "Multiply by n."),
    "randomized_response.brackets_missing": _D(
        "括号或分母写错：整个 (p-1)n + n1 要除以 (2p-1)。",
        "按运算优先级加上括号。",
        "Brackets: the whole (p-1)n + n1 must be divided by (2p-1).",
        "Add the brackets."),
    "randomized_response.no_correction": _D(
        "直接返回了 n1（观测到的“是”的个数），没有校正。",
        "观测值包含翻转进来的人，必须用 p 校正。",
        "Returned n1 uncorrected.",
        "Correct with p."),
    # --- private_mean -----------------------------------------------------------------------------
    "private_mean.not_implemented": _D(
        "函数仍是模板（NotImplementedError）。",
        "先完成前面的 clip 和灵敏度函数，再写 private_mean。",
        "The function is still the template.",
        "Implement it."),
    "private_mean.crashed": _D(
        "调用时抛出了意料之外的异常。",
        "用消息里的参数复现并修正。",
        "The call raised an unexpected exception.",
        "Reproduce with the arguments shown."),
    "private_mean.validation_missing": _D(
        "非法参数（lower ≥ upper、ε ≤ 0、nan 等）没有抛出 ValueError。",
        "在函数开头检查参数，并在消息里说明哪个参数不合法。",
        "An invalid argument was accepted.",
        "Validate and raise ValueError."),
    "private_mean.clip_return_type_wrong": _D(
        "clip 没有返回同长度的 numpy 数组。",
        "用 np.clip 或 np.minimum/np.maximum，返回新数组。",
        "clip did not return an array of the same length.",
        "Return a new ndarray."),
    "private_mean.clip_values_wrong": _D(
        "截断结果不对：小于 lower 的应变成 lower，大于 upper 的应变成 upper。",
        "对照消息里的期望值逐个检查。",
        "Clipped values are wrong.",
        "Values below lower become lower, above upper become upper."),
    "private_mean.clip_modifies_input": _D(
        "clip 修改了传入的数组。",
        "返回新数组（np.clip 默认如此），不要原地赋值。",
        "clip modified its input.",
        "Return a new array."),
    "private_mean.sensitivity_not_a_number": _D(
        "灵敏度函数没有返回一个有限的数。",
        "返回 float。",
        "A sensitivity function did not return a finite number.",
        "Return a float."),
    "private_mean.sensitivity_negative": _D(
        "灵敏度为负。",
        "灵敏度是最大变化量的绝对值，不可能为负：注意 lower 可能是负数。",
        "A sensitivity is negative.",
        "It is an absolute change; lower may be negative."),
    "private_mean.sum_sensitivity_wrong": _D(
        "求和的灵敏度错误（定义 6-2）。",
        "增删一条记录时，和最多变化 max(|lower|, |upper|)；替换一条记录时最多变化 upper - lower。",
        "The sum's sensitivity is wrong (Definition 6-2).",
        "Add/remove: max(|lower|, |upper|); replace: upper - lower."),
    "private_mean.sum_sensitivity_one_bound": _D(
        "求和的灵敏度只看了一个边界（如 |upper|），忽略了负的 lower。",
        "增删关系下被删的记录可能在任一端：max(|lower|, |upper|)。",
        "The sum's sensitivity uses one bound only (|upper|).",
        "Use max(|lower|, |upper|)."),
    "private_mean.sensitivity_wrong_relation": _D(
        "两种相邻关系的灵敏度对调了（增删关系用了 upper - lower，或反之）。",
        "分别想：增删一条记录和替换一条记录时，和与计数最多变多少。",
        "The two neighbour relations were swapped.",
        "Think through add/remove and replace separately."),
    "private_mean.count_sensitivity_replace_counts_change": _D(
        "替换关系下计数的灵敏度给了 1：替换一条记录，记录数不变，灵敏度为 0。",
        "替换 = 删一条再加一条，n 不变。",
        "Count sensitivity under replacement given as 1; it is 0.",
        "Replacing a record keeps n."),
    "private_mean.count_sensitivity_wrong": _D(
        "计数的灵敏度错误。",
        "增删关系下计数变化 1，替换关系下变化 0。",
        "The count's sensitivity is wrong.",
        "Add/remove: 1; replace: 0."),
    "private_mean.mean_not_a_float": _D(
        "private_mean 没有返回浮点数。",
        "返回 float。",
        "private_mean did not return a float.",
        "Return a float."),
    "private_mean.noisy_count_not_raised_to_one": _D(
        "噪声计数可能 ≤ 0，没有先提高到至少 1 就相除。",
        "按要求用 max(c, 1) 作分母，c 为噪声计数（后处理，不消耗隐私预算）。",
        "The noisy count was not raised to at least 1 before dividing.",
        "Divide by max(noisy count, 1)."),
    "private_mean.result_not_clipped": _D(
        "结果不在 [lower, upper] 内。",
        "最后把结果截断到区间内（后处理，不消耗隐私预算）。",
        "The result is outside [lower, upper].",
        "Clip the result (post-processing)."),
    "private_mean.rng_not_used": _D(
        "private_mean 没有使用传入的 rng。",
        "噪声从 rng 取（本作业允许 rng.laplace）。",
        "private_mean did not use its rng.",
        "Draw the noise from rng."),
    "private_mean.randomness_outside_rng": _D(
        "状态相同的两个 rng 给出了不同结果：有随机性不来自 rng，无法审计。",
        "所有噪声都从传入的 rng 取。",
        "Same rng state, different results: randomness from outside rng.",
        "Take all noise from rng."),
    "private_mean.noise_fixed_or_missing": _D(
        "不同的 rng 给出相同结果：没有加噪声，或噪声来自固定种子。",
        "对和与计数各加拉普拉斯噪声，尺度为 灵敏度/分到的 ε。",
        "Different rngs, same result: no noise, or a fixed seed.",
        "Add Laplace noise to sum and count."),
    "private_mean.mean_biased": _D(
        "结果有系统偏差：分子和分母没有对应同一批截断后的数据。",
        "先截断，再对截断后的和与记录数分别加噪。",
        "The result is biased: numerator and denominator do not describe the same clipped data.",
        "Clip first, then noise the clipped sum and the count."),
    "private_mean.too_much_noise": _D(
        "误差的中位数超过最优预算分配的 1.5 倍：噪声太多（ε 分配不当，或灵敏度取大了）。",
        "比较和与计数的噪声对结果的影响，把更多 ε 分给影响大的一项；用最小的正确灵敏度。",
        "The median error exceeds 1.5× that of the best split: too much noise.",
        "Give more ε to the release that matters more; use the tight sensitivity."),
    "private_mean.budget_split_wrong": _D(
        "隐私审计证明实际 ε 超过声称的 ε：和与计数两次发布消耗的隐私预算加起来超过了 ε（串行组合）。",
        "和与计数是对同一数据的两次查询：ε_和 + ε_计数 ≤ ε（定理 6-2）。",
        "The audit proves ε beyond the claim: the sum and the count together consume more than ε.",
        "Sequential composition: ε_sum + ε_count ≤ ε."),
    "private_mean.values_not_clipped": _D(
        "隐私审计失败：数据没有截断，一条极端记录可以任意改变和，灵敏度无界。",
        "先用 clip 把每条记录截断到 [lower, upper]，再求和。",
        "Audit failed: values not clipped, the sum's sensitivity is unbounded.",
        "Clip before summing."),
    "private_mean.noise_reused": _D(
        "隐私审计失败：和与计数用了同一个噪声样本，两次发布不独立。",
        "和与计数各抽一个独立噪声。",
        "Audit failed: one noise draw reused for sum and count.",
        "Draw independent noises."),
    "private_mean.exact_count_published": _D(
        "隐私审计失败：用精确的记录数作分母，等于公开了精确计数。",
        "计数也要加噪并消耗一部分隐私预算。",
        "Audit failed: the exact count is the denominator.",
        "Noise the count too."),
    # --- privacy_budget ---------------------------------------------------------------------------
    "privacy_budget.not_implemented": _D(
        "函数仍是模板（NotImplementedError）。",
        "按单元格顺序实现。",
        "The function is still the template.",
        "Implement it."),
    "privacy_budget.crashed": _D(
        "调用时抛出了意料之外的异常。",
        "用消息里的参数复现并修正。",
        "The call raised an unexpected exception.",
        "Reproduce with the arguments shown."),
    "privacy_budget.unexpected_value_error": _D(
        "预算足够的合法查询抛出了 ValueError。",
        "只有预算不够或参数非法时才拒绝；检查比较的方向和容差。",
        "A valid query within budget raised ValueError.",
        "Refuse only when the budget is exceeded."),
    "privacy_budget.validation_missing": _D(
        "非法参数（ε ≤ 0、nan、总预算 ≤ 0 等）没有抛出 ValueError。",
        "检查参数，消息说明哪个参数不合法。",
        "An invalid argument was accepted.",
        "Validate and raise ValueError."),
    "privacy_budget.ledger_not_plain_data": _D(
        "账本（state）不是只含数字、字符串、列表、字典的普通数据（用了 Fraction、Decimal、numpy 数组或自定义对象）。",
        "账本只用 Python 基本类型保存；精确小数可存成字符串，用时再转换。",
        "The ledger is not plain data (Fraction, Decimal, arrays, objects).",
        "Store numbers, strings, lists and dicts only."),
    "privacy_budget.randomness_outside_rng": _D(
        "使用了 rng 以外的随机数来源，或导入了 helpers。",
        "噪声只能来自传入的 rng（可以用 rng.laplace）。",
        "Randomness from outside rng, or helpers imported.",
        "Use the rng passed in."),
    "privacy_budget.count_return_value_wrong": _D(
        "answer_count 没有返回两个值：带噪声的计数和新的账本。",
        "最后写 return noisy, new_state，返回二者。",
        "answer_count did not return (noisy count, new state).",
        "Return both."),
    "privacy_budget.histogram_return_value_wrong": _D(
        "answer_histogram 没有返回两个值：带噪声的各类计数和新的账本。",
        "返回长度为 k 的数组和新账本。",
        "answer_histogram did not return (noisy counts, new state).",
        "Return both."),
    "privacy_budget.threshold_not_strict": _D(
        "“超过 55”按 ≥ 55 计了：恰好等于阈值的不该算。",
        "用 >，不是 >=。",
        "'More than 55' counted as ≥ 55.",
        "Use >."),
    "privacy_budget.count_wrong": _D(
        "噪声极小时的计数仍不对：没有正确数出大于阈值的个数。",
        "先写对精确计数 np.sum(values > threshold)，再加噪。",
        "The count is wrong even with negligible noise.",
        "Count values > threshold first."),
    "privacy_budget.rng_not_used": _D(
        "answer_count 没有使用传入的 rng。",
        "噪声从 rng 取（如 rng.laplace）。",
        "answer_count did not use its rng.",
        "Draw noise from rng."),
    "privacy_budget.noise_fixed_or_missing": _D(
        "同一种子结果不同，或不同种子结果相同：噪声不是来自 rng，或没有加噪声。",
        "每次回答都从 rng 抽拉普拉斯噪声。",
        "Noise not from rng, or no noise at all.",
        "Draw Laplace noise from rng on every answer."),
    "privacy_budget.refusal_missing": _D(
        "超出预算的查询没有被拒绝：要么没记账，要么没检查。",
        "串行组合：已消耗的 ε 相加；加上本次超过总预算时 raise ValueError。",
        "A query beyond the budget was answered.",
        "Sum the spent ε (sequential composition) and refuse beyond the total."),
    "privacy_budget.float_sum_refuses_exact_budget": _D(
        "朴素的浮点累加使恰好用完预算的查询被拒绝（0.1 + 0.2 = 0.30000000000000004）。",
        "用 Fraction(str(ε))、Decimal(str(ε)) 精确相加，或比较时留 1e-9 × 总预算的容差。",
        "Plain float sums refused a query that exactly uses up the budget.",
        "Use Fraction(str(ε)) / Decimal(str(ε)) or a small tolerance."),
    "privacy_budget.fsum_without_tolerance": _D(
        "用了 math.fsum 但没有容差：fsum([1.1, 1.1, 1.1]) = 3.3000000000000003 仍超过 3.3。",
        "fsum 只是更精确的浮点和，仍需容差，或改用十进制精确表示。",
        "math.fsum without a tolerance still exceeds the exact budget.",
        "Add a tolerance or use decimal arithmetic."),
    "privacy_budget.binary_fraction_sum": _D(
        "用 Fraction(0.1) 相加：它是 0.1 的二进制近似值，略大于 1/10。",
        "写 Fraction(str(ε)) 或 Decimal(str(ε))。",
        "Fraction(0.1) is the binary approximation, slightly above 1/10.",
        "Use Fraction(str(ε))."),
    "privacy_budget.refuses_within_budget": _D(
        "恰好用完预算的查询被拒绝了（用了 < 而不是 ≤），或被拒绝的查询也记了账。",
        "已消耗 + 本次 ≤ 总预算时接受；拒绝时不记账。",
        "A query that exactly uses up the budget was refused (< instead of ≤).",
        "Accept when spent + ε ≤ total."),
    "privacy_budget.refused_query_charged": _D(
        "拒绝查询时已经修改了传入的账本：被拒绝的查询不应消耗隐私预算。",
        "先检查预算够不够，再记账；或返回新账本，不修改传入的。",
        "A refused query changed the ledger.",
        "Check first, charge after; do not mutate the input."),
    "privacy_budget.refusal_unexplained": _D(
        "拒绝时 ValueError 的消息没有说明原因。",
        "在消息里写明本次 ε、已消耗和剩余预算。",
        "The refusal's message does not say why.",
        "Say the ε asked, spent and remaining."),
    "privacy_budget.noise_for_wrong_budget": _D(
        "噪声尺度远小于 1/ε：按总预算或剩余预算生成了噪声，而不是本次的 ε。",
        "每次查询的噪声 Lap(Δ/ε_本次)，计数的 Δ = 1。",
        "The noise is far below 1/ε: generated for the total or remaining budget.",
        "Use Lap(1/ε) for this query's ε."),
    "privacy_budget.noise_larger_than_charged": _D(
        "噪声尺度远大于 1/ε：噪声比消耗的预算所需要的多（ε 被再次分割？）。",
        "本题要求恰好 Lap(1/ε)，多余的噪声浪费了精度。",
        "The noise is far above 1/ε.",
        "Use exactly Lap(1/ε)."),
    "privacy_budget.noise_not_laplace": _D(
        "噪声尺度不对，或分布不是拉普拉斯分布（如高斯噪声）。",
        "计数查询用 Lap(1/ε)。",
        "Wrong scale, or not Laplace (Gaussian?).",
        "Use Lap(1/ε)."),
    "privacy_budget.noise_scale_inverted": _D(
        "噪声尺度是 ε 而不是 1/ε。",
        "尺度 = 灵敏度/ε。",
        "The noise scale is ε instead of 1/ε.",
        "Scale = sensitivity/ε."),
    "privacy_budget.noise_scale_doubled": _D(
        "噪声尺度是 2/ε。",
        "计数的灵敏度是 1：尺度 1/ε。",
        "The noise scale is 2/ε.",
        "A count has sensitivity 1."),
    "privacy_budget.noise_scale_halved": _D(
        "噪声尺度是 1/(2ε)：噪声不够，不满足 ε-差分隐私。",
        "尺度 1/ε。",
        "The noise scale is 1/(2ε): not ε-DP.",
        "Use 1/ε."),
    "privacy_budget.histogram_counts_wrong": _D(
        "噪声极小时直方图计数仍不对（标签 0..k-1 各有多少个，没人的类别计 0）。",
        "用 np.bincount(labels, minlength=k)。",
        "Histogram counts wrong even with negligible noise.",
        "np.bincount(labels, minlength=k)."),
    "privacy_budget.histogram_noise_larger_than_needed": _D(
        "直方图每类噪声大于 Lap(1/ε)：仍满足差分隐私，但按并行组合每类只需 Lap(1/ε)。",
        "各类互不相交，一个人只影响一类：整个直方图消耗 ε，每类 Lap(1/ε)（定理 6-3）。",
        "Histogram noise larger than Lap(1/ε): private but wasteful.",
        "Parallel composition: Lap(1/ε) per bin."),
    "privacy_budget.histogram_noise_too_small": _D(
        "直方图噪声比消耗的预算所需要的少，不满足 ε-差分隐私。",
        "每类 Lap(1/ε)。",
        "Histogram noise too small: not ε-DP.",
        "Lap(1/ε) per bin."),
    "privacy_budget.histogram_overcharged": _D(
        "直方图记了 k·ε：仍满足差分隐私，但多记了账；并行组合下只需记 ε。",
        "各类不相交，整个直方图按并行组合（定理 6-3）记 ε。",
        "The histogram was charged k·ε; parallel composition charges ε.",
        "Charge ε once."),
    "privacy_budget.histogram_undercharged": _D(
        "直方图记账少于它消耗的 ε，不满足差分隐私。",
        "每个直方图记 ε，预算用完后必须拒绝。",
        "The histogram was charged less than it consumed.",
        "Charge ε per histogram."),
    "privacy_budget.histogram_budget_not_shared": _D(
        "直方图和计数查询没有记在同一个账本上：它们查询同一数据集，必须共用隐私预算（串行组合）。",
        "两种查询都从同一个 state 中扣除。",
        "Histogram and count queries do not share one budget.",
        "Charge both to the same ledger (sequential composition)."),
    "privacy_budget.histogram_noise_shared_across_bins": _D(
        "直方图各类的噪声相关：所有类共用了一个噪声。",
        "每类加独立的噪声：rng.laplace(0, 1/ε, size=k)。",
        "The bins' noises are correlated: one noise shared.",
        "Independent noise per bin."),
    "privacy_budget.attack_not_integer": _D(
        "averaging_attack 没有返回整数。",
        "返回 int(round(平均值))。",
        "averaging_attack did not return an integer.",
        "Return int(round(mean))."),
    "privacy_budget.attack_not_average": _D(
        "攻击不是“取平均再四舍五入”。",
        "表 6-3 的攻击：对重复查询的答案取平均，四舍五入到最近的整数。",
        "The attack is not average-then-round.",
        "Average the answers and round to the nearest integer."),
    "privacy_budget.attack_truncates": _D(
        "用了截断或向下取整，而不是四舍五入。",
        "用 round，不要用 int() 或 floor。",
        "Truncated or floored instead of rounding.",
        "Use round."),
    "privacy_budget.attack_uses_median": _D(
        "用了中位数：表 6-3 的攻击是取平均。",
        "用 np.mean。",
        "Used the median; Table 6-3 averages.",
        "Use the mean."),
    "privacy_budget.attack_weaker_than_averaging": _D(
        "攻击成功率显著低于表 6-3 的精确概率。",
        "检查平均与四舍五入。",
        "The attack succeeds less often than Table 6-3's exact probability.",
        "Check averaging and rounding."),
    "privacy_budget.attack_stronger_than_averaging": _D(
        "攻击成功率显著高于表 6-3 的平均攻击：多半用了中位数（对拉普拉斯噪声，中位数比平均值更准）。",
        "本题要求表 6-3 的平均攻击：取平均再四舍五入。",
        "The attack beats Table 6-3's averaging attack: probably the median (better for Laplace noise).",
        "Use Table 6-3's averaging attack."),
    # --- local_frequency --------------------------------------------------------------------------
    "local_frequency.wrong_output_type": _D(
        "grr_perturb 没有返回与输入同形状的 numpy 整数数组。",
        "返回 np.ndarray，形状与 values 相同。",
        "grr_perturb did not return an integer array shaped like its input.",
        "Return an ndarray shaped like values."),
    "local_frequency.not_integer": _D(
        "grr_perturb 返回的不是整数。",
        "用 .astype(int)。",
        "grr_perturb did not return integers.",
        "Use .astype(int)."),
    "local_frequency.value_out_of_range": _D(
        "报告了 0..k-1 以外的值。",
        "替换值从其他 k-1 个值中抽取，注意下标。",
        "Reports outside 0..k-1.",
        "Draw replacements among the k-1 other values."),
    "local_frequency.one_coin_for_all": _D(
        "所有用户一起保留或一起替换：只用了一个随机数。",
        "每个用户需要自己的随机数。",
        "All users kept or replaced together.",
        "One uniform per user."),
    "local_frequency.other_value_missed": _D(
        "有的值从不（或很少）被报告为“其他值”：抽取其他值时漏掉了一个值（下标错位）。",
        "常用写法：r = rng.integers(0, k-1)，再 r + (r >= v)。",
        "Some value is never reported as a replacement: off by one.",
        "Use r + (r >= v) with r uniform on 0..k-2."),
    "local_frequency.binary_p_for_k": _D(
        "用了 k = 2 时的保留概率 e^ε/(e^ε + 1)：k 个取值时应使 p/q = e^ε，p = e^ε/(e^ε + k - 1)。",
        "从 p + (k-1)q = 1 和 p/q = e^ε 解出 p。",
        "Used the binary keep probability; for k values p = e^ε/(e^ε + k - 1).",
        "Solve p + (k-1)q = 1, p/q = e^ε."),
    "local_frequency.replacement_includes_truth": _D(
        "替换值从全部 k 个值中抽取（包括真实值），保留率变成 p + (1-p)/k。",
        "替换值只从其他 k-1 个值中抽。",
        "The replacement may equal the truth.",
        "Draw among the k-1 other values only."),
    "local_frequency.epsilon_factor_2": _D(
        "ε 多乘或多除了 2。",
        "p/q = e^ε，没有 2。",
        "ε multiplied or divided by 2.",
        "p/q = e^ε."),
    "local_frequency.denominator_off_by_one": _D(
        "保留概率写成了 e^ε/(e^ε + k)：分母应为 e^ε + k - 1。",
        "各报告的概率之和为 1：p + (k-1)q = 1，由此得到分母。",
        "Keep probability e^ε/(e^ε + k); the denominator is e^ε + k - 1.",
        "p + (k-1)q = 1."),
    "local_frequency.replacement_not_uniform": _D(
        "其他值被报告的频率差别很大：替换值没有在其他 k-1 个值中均匀抽取。",
        "用 rng.integers 均匀抽取。",
        "Replacements are not uniform over the other values.",
        "Draw uniformly."),
    "local_frequency.keep_rate_wrong": _D(
        "测得的保留率与 p = e^ε/(e^ε + k - 1) 不符。",
        "检查比较方向 u < p 与 p 的公式。",
        "The measured keep rate differs from p.",
        "Check u < p and the formula for p."),
    "local_frequency.ldp_epsilon_exceeded": _D(
        "隐私审计证明 grr_perturb 不满足 ε-本地化差分隐私：某个报告在两个真实值下的概率之比超过 e^ε。",
        "检查 p/q 是否恰为 e^ε，以及替换值是否只在其他 k-1 个值中均匀抽取。",
        "The audit proves grr_perturb is not ε-LDP.",
        "p/q must be exactly e^ε, replacements uniform."),
    "local_frequency.estimate_wrong_length": _D(
        "grr_estimate 没有返回长度为 k 的数组。",
        "没人报告的取值也要有估计：np.bincount(reports, minlength=k)。",
        "grr_estimate did not return k estimates.",
        "np.bincount(reports, minlength=k)."),
    "local_frequency.returned_fractions": _D(
        "返回了比例而不是人数（忘了乘 n）。",
        "估计的是人数：乘 n。",
        "Returned fractions instead of counts.",
        "Multiply by n."),
    "local_frequency.clipped_negative": _D(
        "把负的估计截成了 0（或截到 [0, n]）：截断后的估计有偏；本作业要求无偏估计。",
        "保留负数：无偏估计可以为负，发布前再做后处理。",
        "Negative estimates were clipped: clipping biases them.",
        "Keep negatives: the unbiased estimate can be negative."),
    "local_frequency.binary_q": _D(
        "用了二值随机响应的 p 和 1-p：k 个取值时 q = 1/(e^ε + k - 1)，不是 1-p。",
        "分别写出 p 和 q。",
        "Used binary RR's p and 1-p; q = 1/(e^ε + k - 1).",
        "Write p and q separately."),
    "local_frequency.no_q_subtraction": _D(
        "只除以了 p，没有减去其他用户误报到这个值的 n·q。",
        "E[C(v)] = n_v p + (n - n_v) q，解出 n_v = (C(v) - nq)/(p - q)。",
        "Divided by p without subtracting n·q.",
        "n_v = (C(v) - nq)/(p - q)."),
    "local_frequency.estimate_formula_wrong": _D(
        "估计公式错误。",
        "从 E[C(v)] = n_v p + (n - n_v) q 解出 n_v。",
        "The estimate formula is wrong.",
        "Solve E[C(v)] = n_v p + (n - n_v) q."),
    "local_frequency.estimate_biased": _D(
        "多次估计的平均与真实人数显著不同：估计有偏（截断、四舍五入或公式错误）。",
        "无偏即 E[估计] = 真实人数：不要截断或取整。",
        "The average estimate differs from the truth: biased.",
        "Do not clip or round."),
    "local_frequency.not_a_number": _D(
        "函数没有返回一个数。",
        "返回 float。",
        "The function did not return a number.",
        "Return a float."),
    "local_frequency.variance_missing_f_term": _D(
        "方差只有 n q(1-q)/(p-q)² 一项：持有该值的 n·f 个用户以概率 p 报告它，方差与 f 有关。",
        "C(v) 是 n·f 个成功率 p、n(1-f) 个成功率 q 的伯努利变量之和，分别求方差再相加。",
        "The variance lacks the f term.",
        "Sum the Bernoulli variances of both groups."),
    "local_frequency.variance_of_fraction": _D(
        "给出的是比例的方差（除以了 n²），要的是人数的方差。",
        "乘回 n²。",
        "That is the fraction's variance; the count's is asked.",
        "Multiply by n²."),
    "local_frequency.variance_binary_formula": _D(
        "用了二值随机响应（k = 2）的方差公式。",
        "用 k 个取值时的 p、q 重新推导。",
        "Used the binary RR variance.",
        "Re-derive with the k-ary p and q."),
    "local_frequency.variance_formula_wrong": _D(
        "方差公式错误。",
        "按两组伯努利变量分别求方差：Var = [n f p(1-p) + n(1-f) q(1-q)]/(p-q)²。",
        "The variance formula is wrong.",
        "Var = [nf p(1-p) + n(1-f) q(1-q)]/(p-q)²."),
    "local_frequency.asymmetric_as_symmetric": _D(
        "两个骰子方案用了对称随机响应的校正（把 a 当作 p）：这里 P(1|0) = b ≠ 1 - a。",
        "E[n1] = N a + (n - N) b，解出 N。",
        "Symmetric RR's correction used for the two-dice scheme.",
        "Solve E[n1] = Na + (n-N)b."),
    "local_frequency.asymmetric_no_b_subtraction": _D(
        "只除以了 a，没有减去真实为 0 的人以概率 b 报告的 1。",
        "按 N = (n1 - n b)/(a - b) 校正。",
        "Divided by a without subtracting n·b.",
        "N = (n1 - nb)/(a - b)."),
    "local_frequency.asymmetric_formula_wrong": _D(
        "两个骰子方案的校正公式错误。",
        "E[n1] = N a + (n - N) b，解出 N = (n1 - n b)/(a - b)。",
        "The two-dice correction is wrong.",
        "N = (n1 - nb)/(a - b)."),
}


def group_of(diagnosis: str) -> str:
    """The prefix of ``diagnosis`` (``"laplace"`` for ``"laplace.scale_inverted"``)."""
    return diagnosis.split(".", 1)[0]
