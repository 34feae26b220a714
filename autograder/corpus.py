"""Read a corpus of submissions: ``manifest.json`` and ``<assignment>/<function>/<variant>.py``.

The course keeps one in ``tests/corpus/`` (correct variants written in many styles and realistic
mistakes; its README says how it is laid out). The tests and ``python -m autograder.bench`` read
it through this module, as data: the product never imports the test suite.
"""

from __future__ import annotations

import json
from pathlib import Path


def load_manifest(root: Path) -> dict:
    """``root/manifest.json`` plus one ``root/<assignment>/manifest.json`` per newer assignment."""
    root = Path(root)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    for own in sorted(root.glob("*/manifest.json")):
        assignment = own.parent.name
        if assignment in manifest:
            raise ValueError(f"{assignment}: listed both in manifest.json and in {own}")
        manifest[assignment] = json.loads(own.read_text(encoding="utf-8"))
    return manifest


def snippet(root: Path, assignment: str, function: str, variant: str) -> str:
    """The code of one variant of one graded function."""
    return (Path(root) / assignment / function / f"{variant}.py").read_text(encoding="utf-8")


def corpus_entries(root: Path, assignment: str) -> list[dict]:
    """Every corpus submission of ``assignment``.

    Correct entries ``correct_<i>`` take the i-th correct variant of each
    function (cycling). Wrong entries replace one function by a mutant and
    use the first correct variant for the others, except the manifest's
    ``costly`` functions, which a wrong entry of another function leaves as the
    release's stub (their cells then score 0 at once instead of running checks
    that do not look at the mutant: private_mean's privacy audits cost about 15 s
    of grading per submission). ``expect_zero`` lists the graded cells that must
    score 0 for a wrong entry; ``names`` (optional), ``{grade_id: function}``, the failing
    cells whose message must say the mistake is in that function (issue 35, §5: a wrong
    helper is named, not the correct function calling it, and the reverse).
    """
    spec = load_manifest(root)[assignment]
    correct = spec["correct"]
    costly = set(spec.get("costly", ()))
    entries = []
    for i in range(max(len(v) for v in correct.values())):
        solutions = {f: snippet(root, assignment, f, vs[i % len(vs)]) for f, vs in correct.items()}
        entries.append({"id": f"correct_{i}", "kind": "correct", "solutions": solutions, "expect_zero": [],
                        "why": " + ".join(f"{f}:{vs[i % len(vs)]}" for f, vs in correct.items())})
    for wrong in spec["wrong"]:
        solutions = {f: snippet(root, assignment, f, vs[0]) for f, vs in correct.items()
                     if f not in costly or f == wrong["function"]}
        solutions[wrong["function"]] = snippet(root, assignment, wrong["function"], wrong["variant"])
        entries.append({"id": f"wrong_{wrong['function']}_{wrong['variant']}", "kind": "wrong", "solutions": solutions,
                        "expect_zero": wrong["expect_zero"], "why": wrong["why"], "function": wrong["function"],
                        "names": wrong.get("names", {})})
    return entries
