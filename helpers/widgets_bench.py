"""Time the slider redraws of :mod:`helpers.widgets`: ``python -m helpers.widgets_bench``.

For every widget builder used in the lecture notebooks, the slider is moved
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

os.environ.setdefault("MPLBACKEND", "Agg")


def _cases():
    from helpers import widgets as w
    from helpers.data import load_medical, load_zoo

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
    }


def run(limit_ms: float = 100.0, repeats: int = 2) -> dict:
    """Time every case; return {name: {"update_draw_ms": median, "png_ms": median}}."""
    from helpers.widgets import png_bytes

    warnings.filterwarnings("ignore", message="Glyph .* missing")
    results = {}
    for name, (build, sweep) in _cases().items():
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
                         "max_update_draw_ms": max(draw_times), "steps": len(draw_times)}
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=float, default=100.0, help="largest allowed median, ms (default 100)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    results = run(args.limit)
    print(f"{'widget':<26} {'median update+draw':>19} {'median +png':>12} {'max update+draw':>16}")
    for name, r in results.items():
        print(f"{name:<26} {r['update_draw_ms']:>16.1f} ms {r['png_ms']:>9.1f} ms {r['max_update_draw_ms']:>13.1f} ms")
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
