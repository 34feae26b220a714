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
