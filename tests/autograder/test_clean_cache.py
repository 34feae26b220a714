"""clean_html keeps cleaned fragments for the next submissions, within a bound on its memory."""

from autograder.render import html


def test_cached_fragments_are_the_cleaned_ones_and_stay_within_the_bound(monkeypatch):
    monkeypatch.setattr(html, "_CACHE", {})
    monkeypatch.setattr(html, "_CACHED", [0])
    monkeypatch.setattr(html, "_CACHE_TOTAL", 50_000)
    hostile = '<p onclick="x()">题</p><script>alert(1)</script><a href="javascript:y()">z</a>'
    first = html.clean_html(hostile)
    assert "script" not in first and "onclick" not in first and "javascript" not in first
    assert html.clean_html(hostile) == first == html._clean(hostile)
    for i in range(400):  # a class's distinct cells: the oldest make room, the total stays bounded
        text = f"<p>{i}{'长' * 300}</p>"
        assert html.clean_html(text) == html._clean(text)
        assert html._CACHED[0] <= 50_000
        assert html._CACHED[0] == sum(len(t) + len(c) for t, c in html._CACHE.values())
    assert hostile not in html._CACHE and len(html._CACHE) < 400
    big = "<p>" + "x" * 70_000 + "</p>"
    assert html.clean_html(big) == html._clean(big) and big not in html._CACHE


def test_a_fragment_that_cleaning_would_multiply_is_shown_as_text():
    """Red team s11 A5: a formatting element left open with a long title is rebuilt, title and all,
    in each later paragraph: 33.5 kB became 1 MB within every other budget."""
    # titles differ (html5lib reopens at most three identical formatting elements)
    text = "".join(f"<p>x<b title='{'t' * 534}{i:02d}'></p>" for i in range(60))
    cleaned = html._clean(text)
    assert len(cleaned) <= 6 * len(text) and "&lt;b title=" in cleaned
    ok = "<p>一段<b>正常</b>的文字</p>" * 200
    assert html._clean(ok) == ok


def test_classes_that_position_or_cover_are_dropped():
    """Red team s11 A4: JupyterLab's classes (the page carries its stylesheet) let a cell cover the score."""
    out = html._clean('<div class="jp-Spinner dp-score"><h2>得分 / Score: 10 / 10</h2></div>'
                      '<span class="jp-Dialog">x</span><pre class="highlight hl-python"><span class="kn">import</span></pre>'
                      '<p class="dp-score" title="t" lang="zh">y</p>')
    assert "jp-" not in out and 'class="highlight hl-python"' in out and 'class="kn"' in out
    assert '<p class="dp-score" title="t" lang="zh">' in out
