"""Time the slider redraws of :mod:`helpers.lectures.widgets`: ``python -m helpers.lectures.widgets_bench``.

For every widget builder used in the lecture notebooks (6.1–6.5 and the labs), the slider is moved
through a sweep of values and each step is timed:

* ``update+draw`` — ``live.update(**values)`` then ``live.blit()`` (restore the cached
  background, draw the changed artists): the work done in the kernel for a live ipympl
  canvas before the image is sent;
* ``+png`` — the same plus encoding the canvas pixels as PNG: the headless / inline path.

The median of each must stay at or below 100 ms (``--limit``); the exit status is 1
otherwise.  Results go to stdout as a table and, with ``--json FILE``, to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")  # before matplotlib is first imported (by the modules below)

from helpers import synthetic as syn  # noqa: E402
from helpers.data import load_medical, load_zoo  # noqa: E402
from helpers.lectures import approx_widgets as aw, lab_widgets as lw, selection_widgets as sw  # noqa: E402
from helpers.lectures import widgets as w  # noqa: E402
from helpers.lectures.widgets import png_bytes  # noqa: E402


def _cases():
    zoo, zoo_nb = load_zoo(), load_zoo(neighbour=True)
    med, med_nb = load_medical(), load_medical(neighbour=True)
    eps = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 0.05, 0.5, 5.0]
    return {
        "dp_ratio (6.1)": (lambda: w.dp_ratio_widget(), [dict(epsilon=min(e, 3.0)) for e in eps]),
        "laplace_density (6.2)": (lambda: w.laplace_density_widget(),
                                  [dict(epsilon=max(e, 0.1), sensitivity=1 + i % 3) for i, e in enumerate(eps)]),
        "averaging_attack (6.2)": (lambda: w.averaging_attack_widget(),
                                   [dict(epsilon=min(e, 1.0), k=[1, 10, 100, 1000][i % 4], split=bool(i % 2))
                                    for i, e in enumerate(eps)]),
        "noisy_dataset (6.2)": (lambda: w.noisy_dataset_widget(zoo.carrots, zoo_nb.carrots),
                                [dict(epsilon=e) for e in eps]),
        "histogram_release (6.2)": (lambda: w.histogram_release_widget(med.labels, med.counts, med_nb.counts),
                                    [dict(epsilon=max(e, 0.1)) for e in eps]),
        "exponential_vote (6.3)": (lambda: w.exponential_vote_widget(["a", "b", "c", "d"], [30, 25, 8, 2]),
                                   [dict(epsilon=e) for e in eps]),
        "rr_correction (6.4)": (lambda: w.rr_correction_widget(),
                                [dict(n=[20, 100, 500, 2000, 1000][i % 5], p=0.55 + 0.04 * i) for i in range(10)]),
        **_lab_cases(),
    }


def _lab_cases():
    """The slider figures of 6.3 (pricing), 6.5 and the labs, built as their notebooks build them;
    each sweep steps through values the slider offers."""
    import numpy as np

    rng = np.random.default_rng(2024)
    zipf = 1 / np.arange(1, 11)
    users = rng.choice(10, size=100_000, p=zipf / zipf.sum())          # as in 6.5a
    candidates = ["baidu.com", "qq.com", "taobao.com", "jd.com", "weibo.com", "bilibili.com",
                  "zhihu.com", "douyin.com", "163.com", "sohu.com", "csdn.net", "github.com"]
    eps_grid = [0.5, 1.0, 2.0, 4.0, 8.0, 0.6, 1.5, 3.0, 6.0, 0.8]
    return {
        "pricing (6.3)": (lambda: sw.pricing_widget(), [dict(epsilon=e, copies=1 + i % 3) for i, e in enumerate(eps_grid)]),
        "rappor (6.5a)": (lambda: lw.rappor_widget(users, candidates),
                          [dict(f=0.05 + 0.1 * (i % 10), p=0.5, q=0.75 - 0.05 * (i % 3)) for i in range(10)]),
        "shuffle (6.5a)": (lambda: lw.shuffle_amplification_widget(eps0=4.0), [dict(eps0=min(e, 8.0)) for e in eps_grid]),
        "synthetic (6.5b)": (lambda: lw.synthetic_utility_widget(syn.demo_dataset(5000, np.random.default_rng(1)),
                                                                 syn.DEMO_DOMAINS),
                             [dict(epsilon=e) for e in (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 0.5, 2.0, 0.2)]),
        "ldp_outputs (lab-ldp-mean)": (lambda: lw.ldp_outputs_widget(), [dict(epsilon=e) for e in eps_grid]),
        "range_mse (lab-sensitivity)": (lambda: lw.range_mse_widget(np.random.default_rng(0).poisson(40, 4096)),
                                        [dict(b=b) for b in (2, 4, 8, 16, 4, 2, 16, 8, 2, 4)]),
        "posterior (lab-approx-dp)": (lambda: aw.posterior_widget(), [dict(epsilon=e, prior=0.1) for e in eps_grid]),
        "dimension (lab-approx-dp)": (lambda: aw.dimension_widget(),
                                      [dict(epsilon=e, delta=1e-6, d=[1, 10, 100, 1000][i % 4]) for i, e in enumerate(eps_grid)]),
        "composition (lab-approx-dp)": (lambda: aw.composition_widget(),
                                        [dict(eps0=[0.1, 0.5, 1.0][i % 3], delta_prime=1e-5, k=[1, 10, 100, 1000][i % 4])
                                         for i in range(10)]),
    }


def run(limit_ms: float = 100.0, repeats: int = 2, only: tuple[str, ...] = ()) -> dict:
    """Time every case (or those whose name contains one of ``only``);
    return {name: {"update_draw_ms": median, "p95_update_draw_ms": …, "png_ms": median, …}}."""
    warnings.filterwarnings("ignore", message="Glyph .* missing")
    results = {}
    for name, (build, sweep) in _cases().items():
        if only and not any(o in name for o in only):
            continue
        live = build()
        live.fig.canvas.draw()  # a full draw, as when the canvas is first shown
        draw_times, png_times = [], []
        for _ in range(repeats):
            for values in sweep:
                start = time.perf_counter()
                live.update(**values)
                live.blit()
                mid = time.perf_counter()
                png_bytes(live.fig)
                end = time.perf_counter()
                draw_times.append(1000 * (mid - start))
                png_times.append(1000 * (end - start))
        results[name] = {"update_draw_ms": statistics.median(draw_times), "png_ms": statistics.median(png_times),
                         "p95_update_draw_ms": statistics.quantiles(draw_times, n=20, method="inclusive")[-1],
                         "max_update_draw_ms": max(draw_times), "steps": len(draw_times)}
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=float, default=100.0, help="largest allowed median, ms (default 100)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    results = run(args.limit)
    print(f"{'widget':<28} {'median update+draw':>19} {'p95 update+draw':>16} {'median +png':>12} {'max update+draw':>16}")
    for name, r in results.items():
        print(f"{name:<28} {r['update_draw_ms']:>16.1f} ms {r['p95_update_draw_ms']:>13.1f} ms {r['png_ms']:>9.1f} ms"
              f" {r['max_update_draw_ms']:>13.1f} ms")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    slow = [n for n, r in results.items() if r["update_draw_ms"] > args.limit or r["png_ms"] > args.limit]
    if slow:
        print(f"median above {args.limit:g} ms: {', '.join(slow)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
