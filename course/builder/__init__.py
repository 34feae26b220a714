"""The course build: the bilingual lecture notebooks from their one source each (``python course/build.py``).

    python course/build.py            # (re)write every notebook that changed
    python course/build.py --check    # exit 1 and list the notebooks that are out of date
                                      # (by content: outputs of a saved run do not count)
    python course/build.py 6.1 6.2    # only sources whose name starts with one of these
    python course/build.py --plan     # the teaching plan (course/_src/plan.toml) with minutes
                                      # (--plan-json: as JSON; --plan-sections: every section's counts)

Sources live in ``course/_src/<stem>.md``; each gives ``course/<stem>.ipynb``
(Chinese) and ``course/en/<stem>.ipynb`` (English).  The format is described
in ``course/_src/README.md``; in short, a source is a sequence of cells, each
opened by a marker line::

    # %% [markdown] zh        Chinese-only markdown
    # %% [markdown] en        English-only markdown
    # %% [markdown]           markdown shared by both languages
    # %%                      code shared by both languages (the usual case)
    # %% zh   /   # %% en     code for one language only (rare)

optionally followed by ``tags=a,b`` (cell tags).  In every cell ``{{LANG}}``
becomes ``zh`` or ``en`` and ``{{ROOT}}`` the relative path from the notebook
to ``course/`` ("" or "../").  Lines before the first marker are a comment.

A shared code cell is written once with both languages' strings, as
``tr(zh=…, en=…)`` (printed text) or ``label(zh=…, en=…)`` (text drawn in a
figure); the build replaces each such call by the expression of its notebook's
language, so a built notebook's code holds one language only (the Chinese
notebook ``print("噪声")``, the English one ``print("noise")``).  A whole-line
comment ``# zh: …`` or ``# en: …`` is kept in its language only, and so is each half of an
end-of-line comment ``# zh: … # en: …``.  Any other comment goes to both notebooks, so it must
belong to neither language (a formula such as ``# Pr[M(D) >= 3.5]``): the build refuses a
comment that a notebook would show in the other language (see :func:`comment_problems`).

The teaching plan ``course/_src/plan.toml`` labels every ``##`` section 核心/core, 4 课时/4-hour
or 选学/optional (see :mod:`teaching_plan`): the build writes the label into each section
heading of both notebooks and the plan tables into ``course/README.md`` (between the
``<!-- plan:zh -->`` / ``<!-- plan:en -->`` markers and their ``<!-- /plan:… -->`` ends), writes
each notebook's "在课程中的位置" paragraph in place of ``{{POSITION}}`` (see ``teaching_plan.position``), and
refuses a plan that does not fit the class hours, names a missing section, leaves a section
unlabelled or teaches a section without one it needs.

Output is deterministic: no outputs, no execution counts, cell ids derived
from the language and position, JSON written the way nbformat writes it
(indent 1, sorted keys, UTF-8), so a rebuild is byte-identical.
The build is split by job: :mod:`.source` (the source format and each language's code),
:mod:`.typography` (the Chinese punctuation rule and its fixer), :mod:`.generated` (the terms and the
generated tables and rules cells), :mod:`.notebooks` (the notebooks, ``course/README.md`` and ``main``),
:mod:`.teaching_plan` (``course/_src/plan.toml``). Modules import down that list only.
"""
