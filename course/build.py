#!/usr/bin/env python3
"""Build the bilingual lecture notebooks from their one source each: the entry point of :mod:`builder`.

    python course/build.py            # (re)write every notebook that changed
    python course/build.py --check    # exit 1 and list the notebooks that are out of date
                                      # (by content: outputs of a saved run do not count)
    python course/build.py 6.1 6.2    # only sources whose name starts with one of these
    python course/build.py --plan     # the teaching plan (course/_src/plan.toml) with minutes
                                      # (--plan-json: as JSON; --plan-sections: every section's counts)
    python course/build.py --fix-punctuation FILE ...   # full-width punctuation next to Chinese, then build

The build itself is the package ``course/builder/`` (the source format, the typography rule, the
terms and generated tables, the notebooks, the teaching plan; see its docstring). This script puts
its public and private names in one namespace, as the slides' and the guide's builds and the tests
load it (``importlib`` by path: course/ is not a package they can import from everywhere).
"""

from __future__ import annotations

import sys
from pathlib import Path

COURSE = Path(__file__).resolve().parent
sys.path.insert(0, str(COURSE))  # the builder package sits beside this script

from builder import generated, notebooks, source, teaching_plan, typography  # noqa: E402

for _module in (source, typography, generated, notebooks):
    globals().update({name: value for name, value in vars(_module).items()
                      if not name.startswith("__") and name not in ("annotations",)})
del _module

if __name__ == "__main__":
    sys.exit(notebooks.main())
