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
