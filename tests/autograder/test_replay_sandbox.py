"""Issue 35, the hidden calls' replays: the draws served for a graded call are replayed, changed and
nudged in a sandbox that did not make that call and has only run the student's cells.

The visible calls' replays go to the second sandbox (the hidden tests' one, before any hidden call).
The hidden calls ran in that second sandbox, and their replays had gone to the same process: a
submission that answers the calls it can tell are not the visible ones (their arguments are in the
release notebook) from numpy's ready-made sampler and remembers what it answered, then answers the
replays, the changed stretch and the nudged runs from that memory, kept the hidden distribution
cell's points (10/10 on laplace with a ready-made sampler at every hidden size). The replays of a
hidden call now go to a third sandbox, started for them (only where a hidden check replays draws:
the three generator assignments), which never saw the hidden call.

Scored through the grader's real path (bubblewrap when it can run); about 10 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import jail
from tests.fixtures.attacks.c8_served_rng import CHECK_B

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(jail.probe() is not None, reason="bubblewrap cannot run here")

#: Honest (inverse CDF) at the visible test's arguments and at small sizes (the rng checks);
#: elsewhere numpy's own sampler from an OS-seeded generator, remembered with the draws it was
#: served, and any later call whose draws are mostly those (a replay, a replaced stretch, a nudge)
#: gets the remembered values back (the replaced positions made honestly).
REMEMBERING = '''
_SEEN = []


def laplace_noise(b, size, rng):
''' + CHECK_B + '''    u = rng.random(size)
    flat = np.ravel(u)

    def honest(v):
        v = v - 0.5
        return -b * np.sign(v) * np.log1p(-2 * np.abs(v))

    if flat.size < 50_000 or (b == 3 / 0.7 and np.shape(u) == (100_000,)):
        return honest(u)
    for draws, values in _SEEN:
        if draws.size == flat.size:
            near = np.abs(draws - flat) < 1e-5
            if near.mean() > 0.5:
                out = values.copy()
                out[~near] = honest(flat[~near])
                return out.reshape(u.shape)
    # Values of its own that no draw decides: numpy's generator was used here until the sandbox's watch
    # (session 15) made any library randomness a finding of its own; a Weyl sequence started from the
    # clock is no library's, and what these tests judge is the replay (the scan is switched off too).
    start = (__import__("time").perf_counter_ns() % 1_000_003) / 1_000_003
    own = honest(((np.arange(flat.size) + 0.5) * 0.6180339887498949 + start) % 1.0)
    own = own[np.argsort(np.sin(np.arange(flat.size) * 12.9898 + start) * 43758.5453 % 1.0)]
    _SEEN.append((flat.copy(), own.copy()))
    return own.reshape(u.shape)
'''


def _score(solutions: dict[str, str], seed: int) -> dict:
    import nbformat

    from autograder.scorer import score_submission
    from tests.support.notebooks import fill

    source = nbformat.read(REPO / "source" / "laplace" / "laplace.ipynb", as_version=4)
    student = fill(source, solutions)
    return score_submission(student, source, seed=seed, timeout=60, memory_mb=1024, sandboxed=True)


@pytest.fixture
def no_name_scan(monkeypatch):
    from helpers.checks import forbidden

    monkeypatch.setattr(forbidden, "find_forbidden_calls", lambda *args, **kwargs: [])


def test_a_hidden_call_answered_from_memory_loses_the_distribution_cell(monkeypatch, no_name_scan):
    from helpers.checks.laplace import hidden_noise_case

    monkeypatch.setenv("DP_COURSE_SEED", "1")
    case = hidden_noise_case()
    assert case["size"] != 100_000, case  # the seed's hidden call is not the visible one's arguments
    result = _score({"laplace_noise": REMEMBERING}, seed=1)
    scores = {t["grade_id"]: t for t in result["tests"]}
    cell = scores["test_laplace_noise_distribution"]
    assert cell["score"] == 0 and cell["hidden_failed"], cell
    assert cell["error"]["diagnosis"] == "common.output_not_from_draws", cell["error"]
    # The mechanism's hidden call passes its other b to laplace_noise at 100,000 values: judged by its draws
    # too since session 15 (issue 35, A3). The rest is honest at the sizes it is judged at: it keeps its points.
    judged = ("test_laplace_noise_distribution", "test_laplace_mechanism_distribution")
    mechanism = scores["test_laplace_mechanism_distribution"]
    assert mechanism["score"] == 0 and mechanism["error"]["diagnosis"] == "common.output_not_from_draws", mechanism
    assert all(t["score"] == t["points"] for g, t in scores.items() if g not in judged), \
        [(g, t["score"], t["error"]) for g, t in scores.items()]
    assert result["timings"]["cpu"]["replays"] is not None, result["timings"]


def test_without_hidden_tests_the_replays_go_to_a_sandbox_that_never_made_the_call(no_name_scan):
    """A source without hidden tests has no second sandbox: the visible calls' replays had gone to the
    first one, which made those calls (an instructor's own assignment with a judged distribution check
    gave the remembering sampler its points). They go to a sandbox of their own now."""
    from autograder.scorer import score_submission
    from tests.autograder.test_sandbox_limits import _cell, _graded_notebook

    source = _graded_notebook(
        _cell("import math\nimport numpy as np\n" + REMEMBERING, grade_id="noise", solution=True, locked=False),
        _cell("from helpers.checks import check_laplace_noise_distribution\n"
              "check_laplace_noise_distribution(laplace_noise, b=0.52, size=(100, 1000))",
              grade_id="test_noise", grade=True, points=1),
        _cell("from helpers.checks import check_laplace_noise_rng\ncheck_laplace_noise_rng(laplace_noise)",
              grade_id="test_rng", grade=True, points=1),
    )
    result = score_submission(source, source, seed=1, timeout=30, memory_mb=512, sandboxed=True)
    noise, rng = result["tests"]
    assert noise["score"] == 0 and noise["error"]["diagnosis"] == "common.output_not_from_draws", noise
    assert rng["score"] == 1, rng  # honest at the rng check's small sizes, judged in the other sandbox too
    assert result["timings"]["cpu"]["hidden"] is None and result["timings"]["cpu"]["replays"] is not None
