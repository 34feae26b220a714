"""The chapter's flow diagrams drawn from the course's data (helpers.lectures.diagrams): Fig. 6-12."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

from matplotlib.colors import to_rgba  # noqa: E402

from helpers import ldp  # noqa: E402
from helpers._validation import InvalidParameterError  # noqa: E402
from helpers.i18n import set_lang  # noqa: E402
from helpers.lectures import diagrams, plots  # noqa: E402


def _client_rows(seed: int = 7):
    client = ldp.RapporClient(32, 2, 0.5, 0.5, 0.75, np.random.default_rng(seed))
    bloom = ldp.rappor_bloom("zhihu.com", 32, 2)
    permanent = client.permanent("zhihu.com")
    return bloom, permanent, [client.report("zhihu.com") for _ in range(3)]


def test_cells_show_the_bits_and_frame_exactly_the_permanent_flips(recwarn):
    set_lang("zh")
    bloom, permanent, reports = _client_rows()
    fig, ax = plots.new_figure((9, 2.9))
    drawn = diagrams.plot_rappor_flow(ax, bloom, permanent, reports, value="zhihu.com", f=0.5, p=0.5, q=0.75)
    fig.canvas.draw()
    rows = [bloom, permanent, *reports]
    assert len(drawn["cells"]) == 5 and all(len(cells) == 32 for cells in drawn["cells"])
    for bits, cells in zip(rows, drawn["cells"]):
        dark = [cell.get_facecolor() != to_rgba("#ffffff") for cell in cells]
        assert dark == [bool(b) for b in bits]
    framed = [cell.get_edgecolor() == to_rgba("#d62728") for cell in drawn["cells"][1]]
    assert framed == list(permanent != bloom) and any(framed)
    assert not any(cell.get_edgecolor() == to_rgba("#d62728") for row in (0, 2, 3, 4) for cell in drawn["cells"][row])
    assert drawn["flips"] == [0, int((permanent != bloom).sum()), *[int((s != permanent).sum()) for s in reports]]
    # Chinese labels and the stage notes draw real glyphs with the bundled font
    texts = " ".join(t.get_text() for t in ax.texts) + ax.get_title()
    assert "永久随机响应" in texts and "瞬时随机响应" in texts and "RAPPOR" in texts
    assert not [w for w in recwarn if "missing from font" in str(w.message)]


def test_english_labels_and_bad_rows_are_refused():
    set_lang("en")
    try:
        bloom, permanent, reports = _client_rows()
        fig, ax = plots.new_figure((9, 2.9))
        diagrams.plot_rappor_flow(ax, bloom, permanent, reports, value="v", f=0.5, p=0.5, q=0.75)
        assert "RAPPOR" in ax.get_title() and not any("永久" in t.get_text() for t in ax.texts)
        with pytest.raises(InvalidParameterError, match="permanent.*32 bits"):
            diagrams.plot_rappor_flow(ax, bloom, permanent[:31], reports, value="v", f=0.5, p=0.5, q=0.75)
        with pytest.raises(InvalidParameterError, match="reports"):
            diagrams.plot_rappor_flow(ax, bloom, permanent, [], value="v", f=0.5, p=0.5, q=0.75)
        with pytest.raises(InvalidParameterError, match=r"reports\[1\]"):
            diagrams.plot_rappor_flow(ax, bloom, permanent, [reports[0], reports[1] * 2], value="v",
                                      f=0.5, p=0.5, q=0.75)
    finally:
        set_lang("zh")


def test_composition_diagram_adds_on_one_dataset_and_takes_the_max_on_disjoint_parts(recwarn):
    set_lang("zh")
    fig, (seq, par) = plots.new_figure((9, 3.4), 1, 2)
    totals = diagrams.plot_composition_diagram(seq, par, [0.5, 0.3, 0.2])
    fig.canvas.draw()
    assert totals == {"sequential": pytest.approx(1.0), "parallel": 0.5}
    seq_text = " ".join(t.get_text() for t in seq.texts)
    par_text = " ".join(t.get_text() for t in par.texts)
    assert "0.5 + 0.3 + 0.2 = 1" in seq_text and "\\max\\varepsilon_i = 0.5" in par_text
    assert all(f"$M_{i}$" in seq_text and f"$M_{i}$" in par_text and f"$D_{i}$" in par_text for i in (1, 2, 3))
    assert "$D_1$" not in seq_text  # one dataset on the left, not a partition
    assert "定理 6-2" in seq.get_title() and "定理 6-3" in par.get_title()
    assert not [w for w in recwarn if "missing from font" in str(w.message)]
    with pytest.raises(InvalidParameterError, match="epsilons"):
        diagrams.plot_composition_diagram(seq, par, [0.5, -0.1])


def test_release_diagram_names_both_models_and_post_processing(recwarn):
    set_lang("zh")
    fig, (a, b) = plots.new_figure((8, 3.8), 2, 1)
    diagrams.plot_release_diagram(a, b)
    fig.canvas.draw()
    assert "交互式" in a.get_title(loc="left") and "非交互式" in b.get_title(loc="left")
    assert "消耗预算" in " ".join(t.get_text() for t in a.texts)
    assert "后处理" in " ".join(t.get_text() for t in b.texts)
    assert not [w for w in recwarn if "missing from font" in str(w.message)]
