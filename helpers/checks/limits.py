"""The CPU time a graded submission may use, and how far a plain Python loop stays below it.

The trusted grader (``python -m autograder grade``) limits each call of a student function and
each test cell (its calls together) to ``--timeout`` seconds, default :data:`CPU_LIMIT_SECONDS`,
counted in the CPU time of the student's own sandbox: the machine's load and the judge's own work
do not count. :data:`LOOP_CPU_SECONDS` is the CPU time of the costliest graded cell of each
assignment when every function is written as a plain per-element Python loop (the corpus's loop
solutions), measured in one process with the checks' own work included
(``tests/power/measure_cpu_margins.py``, 2026-11-28, 2-core machine under load); the margin is the
limit divided by it. The rules the student reads quote :func:`cpu_rule`.
"""

from __future__ import annotations

#: Default per-call and per-cell limit, in seconds of the sandbox's CPU time (``--timeout``).
CPU_LIMIT_SECONDS = 120

#: Assignment -> (costliest graded cell, its CPU seconds with plain-loop solutions, with the reference).
LOOP_CPU_SECONDS = {
    "laplace": ("test_laplace_mechanism_distribution", 1.683, 0.017),
    "exponential": ("test_mechanism_distribution", 0.497, 0.572),
    "randomized_response": ("test_perturb_distribution", 1.099, 0.009),
    "local_frequency": ("test_perturb_privacy", 1.592, 0.037),
    "private_mean": ("test_private_mean_privacy", 4.668, 3.046),
    "privacy_budget": ("test_noise_matches_budget", 0.167, 0.166),
}


def cpu_margin(assignment: str) -> int:
    """How many times the plain-loop solution's costliest cell fits in the limit (rounded down)."""
    return int(CPU_LIMIT_SECONDS // LOOP_CPU_SECONDS[assignment][1])


def cpu_rule(assignment: str) -> tuple[str, str]:
    """``(zh, en)``: the time rule of ``assignment`` as its rules cell states it."""
    seconds, margin = LOOP_CPU_SECONDS[assignment][1], cpu_margin(assignment)
    return (f"每次调用你的函数、每个测试单元格最多用 {CPU_LIMIT_SECONDS} 秒 CPU 时间（按你的代码自己用掉的 CPU 计算，"
            f"与机器负载无关）。逐个元素的 Python 循环也能通过：本作业最耗时的单元格用这样的解法约需 {seconds:.2g} 秒，"
            f"上限是它的 {margin} 倍以上。",
            f"Each call of your functions and each test cell may use {CPU_LIMIT_SECONDS} s of CPU time (your code's "
            f"own CPU time, whatever the machine's load). Plain per-element Python loops pass too: with them the "
            f"costliest cell of this assignment takes about {seconds:.2g} s, and the limit is over {margin} times that.")
