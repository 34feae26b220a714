"""Diagnoses of the checks shared by every assignment and of the three that check the student's code
(laplace, exponential, randomized_response)."""

from __future__ import annotations

from helpers.checks.diagnoses.entry import Diagnosis

_D = Diagnosis

#: ``{id: Diagnosis}`` of ``common.*``, ``laplace.*``, ``exponential.*``, ``randomized_response.*``.
CODE: dict[str, Diagnosis] = {
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
        "代码用了不允许的随机数来源或现成抽样器（np.random.*、random 模块、scipy.stats 分布的 .rvs(...)、helpers 里的参考实现等）。",
        "随机数只能来自传入的 rng；不要导入参考实现。scipy.special.expit 这类确定性的函数可以用。",
        "A forbidden source of randomness or a ready-made sampler was used (np.random.*, random, the .rvs(...) of a "
        "scipy.stats distribution, helpers).",
        "Take every random number from the rng passed in; do not import the reference. Deterministic functions "
        "such as scipy.special.expit are fine."),
    "common.library_randomness": _D(
        "评分时在调用函数的过程中看到了库自带的随机数（numpy 或 Python 的生成器被新建或抽了数、np.random 的全局状态变了、"
        "用了 os.urandom），包括通过 scipy 等库间接用到的。",
        "随机数只能来自传入 rng 的 rng.random(...)，再自己变换；不要调用任何会抽随机数的库函数。",
        "Library randomness was seen during a graded call (a numpy or Python generator made or drawn from, "
        "np.random's global state advanced, os.urandom), also when reached through a library such as scipy.",
        "Take every random number from rng.random(...) of the rng passed in and transform it yourself; call no "
        "library function that draws random numbers."),
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
        "删掉函数内部用固定种子新建的生成器或 np.random.seed，直接用参数 rng。",
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
    "common.output_from_coarse_digest": _D(
        "输出只随均匀数的粗略区间变化：移动极小的量，连续输出原封不动；移动稍大一点，离散输出大批改变。多半是按 int(u * 1024) 这类区间从现成抽样器的表里查出结果，或用它做种子。",
        "自己实现的抽样是均匀数的连续变换（逆 CDF、符号×指数、Gumbel-max），输出随 u 平滑移动，只在少数阈值处跳变；请直接变换 u。",
        "Outputs follow only coarse cells of the uniforms: tiny moves leave continuous outputs unchanged, moderate moves change many discrete ones (a table of a ready-made sampler indexed by int(u * 1024), or a seed).",
        "Transform u directly (inverse CDF, sign × exponential, Gumbel-max): outputs move with u and jump only at a few thresholds."),
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
    "laplace.log_of_negative": _D(
        "输出中有很多 nan：某个 ln(·) 的参数是负数（例如把 u - 1/2 写成了 u）。",
        "检查每个对数的参数：ln(1 - 2|u - 1/2|) 需要 u - 1/2 ∈ [-1/2, 1/2)，rng.random() 给出的 u 在 [0, 1) 内；"
        "u = 0 时这个参数恰为 0，更稳妥的写法是随机符号乘以 -b·ln(1 - u)。",
        "The output has many nan values: a logarithm got a negative argument (e.g. u written for u - 1/2).",
        "Check every log's argument: ln(1 - 2|u - 1/2|) needs u - 1/2, while rng.random() gives u in [0, 1); "
        "at u = 0 that argument is 0, so a random sign times -b·ln(1 - u) is safer."),
    "exponential.epsilon_zero_not_uniform": _D(
        "ε = 0 时指数机制没有在候选中均匀选择。",
        "ε = 0 合法：所有权重 e^0 = 1，均匀选择；不要除以 ε。",
        "At ε = 0 the exponential mechanism did not choose uniformly.",
        "ε = 0 is valid: every weight is e^0 = 1; do not divide by ε."),
    "randomized_response.perturb_overflow": _D(
        "ε 很大（800）时 rr_perturb 没有保留全部比特：直接计算 e^ε 溢出。",
        "复用 rr_keep_probability（稳定的写法 1/(1 + e^(-ε))）。",
        "rr_perturb did not keep every bit at a huge ε (800): e^ε computed directly overflows.",
        "Reuse rr_keep_probability (the stable form 1/(1 + e^(-ε)))."),
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
        "重新推导：尺度 b = Δf/ε；噪声 = 随机符号 × 指数分布：x = s·(-b·ln(1 - u))，其中 u 来自 rng.random()，"
        "取值 [0, 1)，1 - u 落在 (0, 1]，不会取到 ln 0；符号 s 由另一个均匀数决定（小于 1/2 取 -1，否则取 +1）。",
        "The measured scale differs from b = Δf/ε and matches no common mistake.",
        "Re-derive: b = Δf/ε; noise = random sign × exponential: x = s·(-b·ln(1 - u)) with u from rng.random() "
        "in [0, 1), so 1 - u is in (0, 1] and ln 0 never occurs; the sign s comes from a second uniform "
        "(-1 below 1/2, else +1)."),
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
    "exponential.probabilities_inherited": _D(
        "exponential_mechanism 没通过，但错误在学生自己的 exponential_probabilities：机制调用了它，评分程序用同样的"
        "参数问过它，它给的概率是错的（或不是概率分布），或者该抛出 ValueError 时没有抛出，而机制的表现正随着它。",
        "先修正 exponential_probabilities（它自己的测试也没通过）；按概率抽样的做法没有发现问题。",
        "exponential_mechanism failed, but the mistake is in the student's exponential_probabilities: the mechanism "
        "calls it, the grader asked it for the same arguments and found its probabilities wrong (or no distribution) "
        "or no ValueError where one is due, and the mechanism follows it.",
        "Fix exponential_probabilities first (its own test fails too); sampling from the probabilities showed no problem."),
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
        "指数机制的指数是 εq/(2Δq)：相邻数据集上分子和归一化常数各可能变化 e^(ε/2) 倍，合起来才是 e^ε。",
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
    "randomized_response.keep_probability_inherited": _D(
        "rr_perturb 没通过，但错误在学生自己的 rr_keep_probability：rr_perturb 调用了它，评分程序用同一个 ε "
        "问过它，它的值是错的（公式不对或溢出），或者该抛出 ValueError 时没有抛出，而 rr_perturb 的表现正随着它。",
        "先修正 rr_keep_probability（它自己的测试也没通过）；rr_perturb 按 p 保留比特的做法没有发现问题。",
        "rr_perturb failed, but the mistake is in the student's rr_keep_probability: rr_perturb calls it, the "
        "grader asked it for the same ε and found its value wrong (formula or overflow) or no ValueError where one "
        "is due, and rr_perturb's results follow it.",
        "Fix rr_keep_probability first (its own test fails too); keeping bits with p showed no problem."),
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
}
