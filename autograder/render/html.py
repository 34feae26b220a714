"""HTML that is safe to open: the allow-lists, :func:`clean_html`, and remote references disarmed.

Every HTML fragment a feedback page or an autograded notebook shows goes through here: student
outputs (:mod:`autograder.render.feedback`) and formulas rendered as MathML
(:mod:`autograder.render.mathml`, whose elements are allowed with presentation attributes only).
"""

from __future__ import annotations

import re

# --- remote resources in what the grader shows ----------------------------------------------------
# A remote image (``<img src="https://...">``, Markdown ``![](https://...)``, an SVG ``<image
# href>`` or ``url(...)``) in a feedback page or an autograded notebook would be fetched by the
# student's or the instructor's browser: a tracking pixel telling the student when and from where
# the page was opened. Only inline data (``data:``, attachments) stays.

_REMOTE = re.compile(r"^\s*(?:[a-z][a-z0-9+.\-]*:)?//|^\s*(?:https?|ftps?):", re.I)
_MD_REMOTE_IMAGE = re.compile(r"!\[((?:[^\]\\\n]|\\.)*)\]\(\s*<?\s*(?:[a-z][a-z0-9+.\-]*:)?//[^)\n]*\)", re.I)
_MD_REMOTE_REF = re.compile(r"^(\s{0,3}\[[^\]\n]+\]:\s*)<?\s*(?:[a-z][a-z0-9+.\-]*:)?//\S*.*$", re.I | re.M)
_SVG_REMOTE_ATTR = re.compile(
    r"""((?:xlink:)?href|src)\s*=\s*(?:"\s*(?:[a-z][a-z0-9+.\-]*:)?//[^"]*"|'\s*(?:[a-z][a-z0-9+.\-]*:)?//[^']*'"""
    r"""|(?:[a-z][a-z0-9+.\-]*:)?//[^\s>]*)""", re.I)
_CSS_REMOTE = re.compile(r"""url\(\s*["']?\s*(?:[a-z][a-z0-9+.\-]*:)?//[^)]*\)|@import[^;>]*""", re.I)


def is_remote_url(value: str) -> bool:
    """Whether a URL would be fetched from another host (``http(s):``, ``ftp:``, ``//host``)."""
    return bool(_REMOTE.match(str(value)))


def img_attribute(tag: str, name: str, value: str) -> bool:
    """bleach attribute filter for ``<img>``: ``src`` only when it is not a remote URL."""
    if name == "src":
        return not is_remote_url(value)
    return name in ("alt", "width", "height")


def strip_remote_markdown(source: str) -> str:
    """Markdown with remote images (inline ``![](http...)`` and reference definitions) disarmed."""
    if "//" not in source:
        return source
    source = _MD_REMOTE_IMAGE.sub(r"[\1](#)", source)
    if "![" in source:  # ``![alt][ref]`` takes its URL from a reference definition
        source = _MD_REMOTE_REF.sub(r"\1#", source)
    return source


def strip_remote_svg(svg: str) -> str:
    """SVG text without references to other hosts (``href``/``src`` attributes, CSS ``url()``)."""
    if "//" not in svg and "@import" not in svg.lower():
        return svg
    return _CSS_REMOTE.sub("none", _SVG_REMOTE_ATTR.sub(r'\1=""', svg))


# --- allow-lists -----------------------------------------------------------------------------------

#: MathML elements written by latex2mathml (MathML Core plus ``semantics``/``annotation``).
MATHML_TAGS = frozenset({
    "math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot", "mstyle",
    "merror", "mpadded", "mphantom", "menclose", "msub", "msup", "msubsup", "munder", "mover",
    "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "semantics",
    "annotation"})
#: Presentation attributes of those elements (no links, no events, no styles).
MATHML_ATTRIBUTES = ("display", "displaystyle", "scriptlevel", "mathvariant", "mathsize", "stretchy", "fence",
              "separator", "lspace", "rspace", "accent", "accentunder", "movablelimits", "largeop",
              "symmetric", "minsize", "maxsize", "form", "linethickness", "columnalign", "rowalign",
              "columnspacing", "rowspacing", "columnlines", "rowlines", "frame", "notation", "width",
              "height", "depth", "voffset", "encoding", "xmlns")
#: Tags and attributes HTML outputs may keep (pandas tables, simple formatting).
ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd",
    "li", "ol", "p", "pre", "s", "samp", "small", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var", "img", "center"})
#: Classes a fragment may keep: pygments' token classes (``n``, ``kn``, ``s2`` ...) and code blocks'
#: (``highlight``, ``hl-python``), and the score card's. The page carries JupyterLab's stylesheet,
#: whose classes position and cover (``jp-Spinner``, ``jp-Dialog``, ``lm-*``): with them a student's
#: Markdown laid a fake "10 / 10" over the real score (red team s11, A4).
_SAFE_CLASS = re.compile(r"(?:[a-z]{1,3}[0-9]?|highlight|hl-[A-Za-z0-9_+-]{1,30}|ansi-[a-z-]{1,30}|dp-score|dp-other-lang)")


def _any_attribute(tag: str, name: str, value: str) -> bool:
    """bleach's test for an attribute allowed on every element."""
    if name == "class":
        return all(_SAFE_CLASS.fullmatch(c) for c in value.split())
    return name in ("title", "align", "lang")


ALLOWED_ATTRIBUTES = {"*": _any_attribute, "a": ["href"], "img": img_attribute,  # no remote src
                      "td": ["colspan", "rowspan"],
                      "th": ["colspan", "rowspan"], "col": ["span"], "colgroup": ["span"]}


#: The most tags and the deepest nesting of one fragment cleaned as HTML. bleach's
#: parser (html5lib) takes time quadratic in how many elements stay open: 10,000 nested ``<div>``
#: cost 3.7 s of CPU, ``<b></i>`` written 20,000 times 35 s, ``<b><i></b></i>`` 15,000 times 7 s, in
#: the trusted worker and outside the sandbox's time limit (red team s9). A larger fragment is shown
#: as its text; honest output stays far below (the six assignments' pages: 917 tags, depth 13; a
#: table of 300 rows: 2,402 tags, depth 4). MathML elements count apart (:data:`MAX_MATH_TAGS`):
#: formulas rendered when the page is made bring about 35 tags each, so 150 paragraphs with two
#: inline formulas (18 kB of Markdown) passed 10,000 and were shown as raw markup.
MAX_TAGS = 10_000
MAX_MATH_TAGS = 60_000
MAX_NESTING = 1000
#: The most open elements that end tags may pass over in all (html5lib walks the stack of open
#: elements from the top for an end tag that does not close the innermost one).
MAX_WALK = 1_000_000
#: The most attribute characters html5lib may copy into elements it builds again: a formatting element
#: left open (``<b title=...>``) is rebuilt, attributes and all, at each later paragraph.
MAX_COPIED = 1_000_000
#: The most a fragment may grow in cleaning (besides 20,000 characters); a fragment past it is shown
#: as its text. Honest fragments shrink or stay about the same (attributes removed, tags closed).
GROWTH = 8
#: Where a start or end tag begins, and its name as html5lib's tokenizer reads it (up to white
#: space, ``/`` or ``>``). Only the beginning is matched: a ``<`` inside a quoted attribute, an
#: unclosed tag or a self-closing ``<div/>`` must not hide an element the parser opens (red team s9).
_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                   "source", "track", "wbr"})


def tag_load(text: str) -> tuple[int, int, int, int]:
    """``(tags, MathML tags, deepest nesting, walk)`` of ``text``, by one scan that stops past a limit.

    Counted from above, never below, what html5lib reads: every tag start counts (one inside
    a quoted attribute or a comment too; MathML names apart); a start tag opens an element unless
    its name is void (``<div/>`` opens one, as in HTML); an end tag closes the innermost open element
    of its name and those inside it, and one with no open element of its name closes nothing;
    ``walk`` adds, for each end tag that does not close the innermost element, the open elements
    it may pass. What html5lib builds *again* (formatting elements reopened at each paragraph:
    ``<p>x<b class=1></p>`` repeated makes n²/2 elements from 3n tags) is not modelled here: the
    parse itself is budgeted (:func:`clean_html`).
    """
    stack: list[str] = []
    tags = math = deepest = walk = 0
    for match in _TAG.finditer(text):
        name = match.group(2).lower()
        if name in MATHML_TAGS:
            math += 1
        else:
            tags += 1
        if tags > MAX_TAGS or math > MAX_MATH_TAGS or deepest > MAX_NESTING or walk > MAX_WALK:
            break
        if match.group(1):
            if stack and stack[-1] == name:
                stack.pop()
            else:
                walk += len(stack)
                if name in stack:
                    del stack[len(stack) - 1 - stack[::-1].index(name):]
        elif name not in _VOID:
            stack.append(name)
            deepest = max(deepest, len(stack))
    return tags, math, deepest, walk


def _too_costly(load: tuple[int, int, int, int]) -> bool:
    tags, math, deepest, walk = load
    return tags > MAX_TAGS or math > MAX_MATH_TAGS or deepest > MAX_NESTING or walk > MAX_WALK


class _OverBudget(Exception):
    """html5lib was about to build more than a fragment's budget allows."""


def _budgeted_tree():
    """An html5lib tree builder (bleach's etree one) that stops the parse past the budget: more than
    :data:`MAX_TAGS` HTML or :data:`MAX_MATH_TAGS` MathML elements built, reopened and adopted ones
    included, deeper than :data:`MAX_NESTING`, or :data:`MAX_COPIED` attribute characters copied.
    Counting what the parser builds, not what a scan of the text predicts, also bounds html5lib's
    rules nobody modelled (red team s10: the reopened ``<b>`` elements of ``'<p>x<b class=%d></p>'``
    repeated: 95 s of CPU and 4.9 GB for 72 kB)."""
    from bleach._vendor.html5lib import treebuilders

    base = treebuilders.getTreeBuilder("etree")
    built = {"html": 0, "math": 0, "copied": 0}
    holder: list = []

    class Element(base.elementClass):
        def __init__(self, name, namespace=None):
            super().__init__(name, namespace)
            kind = "math" if name in MATHML_TAGS else "html"
            built[kind] += 1
            if built["html"] > MAX_TAGS or built["math"] > MAX_MATH_TAGS or (
                    holder and len(holder[0].openElements) > MAX_NESTING):
                raise _OverBudget(kind)

        def cloneNode(self):
            built["copied"] += sum(len(k if isinstance(k, str) else str(k)) + len(str(v))
                                   for k, v in self._element.attrib.items())
            if built["copied"] > MAX_COPIED:
                raise _OverBudget("attributes")
            return super().cloneNode()

    class Builder(base):
        elementClass = Element

        def __init__(self, namespaceHTMLElements):
            super().__init__(namespaceHTMLElements)
            holder[:] = [self]

    return Builder


#: Cleaned fragments by their text, kept for the next submissions a worker grades: most of a feedback
#: page is the assignment's own Markdown, the same for every student (bleach's parse of it was about a
#: third of rendering a page). Fragments of at most ``_CACHE_CHARS``, at most ``_CACHE_TOTAL`` characters
#: (texts and results) in all, so that a class's hostile cells cannot grow a worker's memory.
_CACHE: dict[str, tuple[str, str]] = {}
_CACHE_CHARS, _CACHE_TOTAL = 64_000, 4_000_000
_CACHED = [0]


def clean_html(text: str) -> str:
    """Allowlist-clean an HTML fragment (bleach): no script, style, handlers or unsafe URLs.

    MathML elements (formulas rendered when the page is made, :mod:`autograder.render.mathml`) are
    kept with their presentation attributes only. A fragment past the limits of :func:`tag_load`,
    or whose parse would build more than its budget (:func:`_budgeted_tree`), is returned escaped
    (shown as its text).
    """
    text = str(text)
    cached = _CACHE.get(text)
    if cached is not None:
        return cached[1]
    cleaned = _clean(text)
    size = len(text) + len(cleaned)
    if len(text) <= _CACHE_CHARS and size <= _CACHE_TOTAL:
        while _CACHE and _CACHED[0] + size > _CACHE_TOTAL:  # the oldest go first
            old = _CACHE.pop(next(iter(_CACHE)))
            _CACHED[0] -= len(old[0]) + len(old[1])
        _CACHE[text] = (text, cleaned)
        _CACHED[0] += size
    return cleaned


def _clean(text: str) -> str:
    import html

    if _too_costly(tag_load(text)):
        return html.escape(text)
    import bleach  # lazy: ~0.5 s; the hub's nbgrader_config imports this package without rendering
    from bleach import html5lib_shim

    attributes = dict(ALLOWED_ATTRIBUTES, **{tag: list(MATHML_ATTRIBUTES) for tag in MATHML_TAGS})
    cleaner = bleach.Cleaner(tags=ALLOWED_TAGS | MATHML_TAGS, attributes=attributes,
                             protocols=["http", "https", "mailto"], strip=True, strip_comments=True)
    # the same parser bleach builds, with the budgeted tree (html5lib's phases keep the tree they
    # were made with: it cannot be swapped afterwards)
    cleaner.parser = html5lib_shim.BleachHTMLParser(tags=cleaner.tags, strip=cleaner.strip, consume_entities=False,
                                                    namespaceHTMLElements=False, tree=_budgeted_tree())
    try:
        cleaned = cleaner.clean(text)
    except _OverBudget:
        return html.escape(text)
    if len(cleaned) > GROWTH * len(text) + 20_000:
        # Within every budget and still a page of copies (60 paragraphs reopening one <b title=534
        # characters>: 33.5 kB of Markdown cleaned to 1 MB, red team s11 A5): shown as its text, which
        # escaping makes at most 6 times longer.
        return html.escape(text)
    return cleaned
