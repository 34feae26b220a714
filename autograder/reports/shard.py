"""Deterministic shards of a class: round-robin over the sorted student ids.

``--shard K/N`` keeps the students at positions ``K-1, K-1+N, K-1+2N, ...``
of the list sorted by code point. Every shard of the same submissions folder
computes the same list, the shards are disjoint, together they cover every
student, and their sizes differ by at most one.
"""

from __future__ import annotations

import re

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``1 <= K <= N``; ``ValueError`` otherwise."""
    match = _SHARD.match(str(text))
    if not match:
        raise ValueError(f"--shard must look like K/N (e.g. 2/4); got {text!r}")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n:
        raise ValueError(f"--shard K/N needs 1 <= K <= N; got {text!r}")
    return k, n


def select_shard(students, k: int, n: int) -> list[str]:
    """The ``k``-th of ``n`` round-robin slices of ``sorted(students)``."""
    return sorted(students)[k - 1::n]
