"""Diagnoses of the three assignments that ask the student to decide and audit privacy
(private_mean, privacy_budget, local_frequency)."""

from __future__ import annotations

from helpers.checks.diagnoses.entry import Diagnosis

_D = Diagnosis

#: ``{id: Diagnosis}`` of ``private_mean.*``, ``privacy_budget.*``, ``local_frequency.*``.
DECISIONS: dict[str, Diagnosis] = {
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
    "private_mean.tails_thinner_than_the_form": _D(
        "输出的尾部比规定形式的机制在任何 ε₁ + ε₂ ≤ ε 的分配下都窄：要么预算超支，要么机制不是规定的形式"
        "（例如以区间中点为中心加噪，可以满足差分隐私，但不是作业要求的形式）。",
        "按规定形式实现：截断后的和与计数各加独立的拉普拉斯噪声，ε₁ + ε₂ ≤ ε，结果为 noisy_sum / max(noisy_count, 1)。",
        "Tails thinner than the specified form allows: an overspent budget, or a mechanism of another form.",
        "Implement the specified form: independent Laplace noise on the clipped sum and the count."),
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
        "账本（state）里有数字、字符串、列表、字典以外的对象（Fraction、Decimal、numpy 数组或自定义对象）。",
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
    "privacy_budget.tolerance_relative_to_remaining": _D(
        "容差相对剩余预算计算（Tumult 的规则）：预算快用完时容差趋于 0，拒绝了恰好用完预算的查询。",
        "容差要相对总预算（总预算的 1e-12 到 1e-9 倍），或用十进制精确运算。",
        "The tolerance is relative to the remaining budget and vanishes as it runs out.",
        "Make it relative to the total, or compute in decimal."),
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
        "每次查询的噪声是 Lap(Δ/ε)，ε 为本次查询消耗的预算，计数的 Δ = 1。",
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
        "把平均值四舍五入后转成 int 返回。",
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
    "local_frequency.large_epsilon_overflow": _D(
        "ε = 800 时结果错误或抛出异常：e^ε 溢出（inf/inf = nan，math.exp 抛出 OverflowError）。",
        "把 p、q 写成只含 e^(-ε) 的形式：p = 1/(1 + (k-1)e^(-ε))。",
        "Wrong or crashed at ε = 800: e^ε overflows.",
        "Write p and q with e^(-ε) only."),
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
