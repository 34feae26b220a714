"""nbgrader configuration added to the course's own nbgrader_config.py for the Formgrader service.

The service runs in the course root (a copy of this repository's source/, release/ and
nbgrader_config.py), so the course's own file sets the root, the course id and the
exchange (NBGRADER_EXCHANGE, set by the hub). Here: feedback generated from the
Formgrader hides the hidden tests, as the headless autograder's feedback does
(nbgrader issue #917), and the Autograde button grades through the trusted grader
(autograder/nbgrader/formgrader.py: student code only in the bubblewrap sandbox, as the course
account never), whatever copy of the course's nbgrader_config.py the course root holds.
"""
import os

c = get_config()  # noqa: F821  (injected by nbgrader)

# A lost gradebook is an error naming the restore, never a new empty one that shows every
# score as 0 (the service and the grader's commands run in the course root).
from autograder.nbgrader.gradebook_guard import require_gradebook  # noqa: E402

require_gradebook(os.getcwd())

from autograder.nbgrader.exchange import configure  # noqa: E402

# Collect attributes a submission to its owner and its time to the kernel's ctime,
# refusing (not warning about) anything else; release never reuses a planted folder
# (hub/README.md, "The exchange").
configure(c)
# a student removed from the class (hub/roster_ops.py): her folders are no longer collected. This file is
# SRV/jupyter/grader/nbgrader_config.py on the class server, the roster SRV/roster.json.
c.ExchangeCollect.roster_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roster.json")
if os.environ.get("DP_EXCHANGE_UID_BASE"):      # Kubernetes: uids from hub names (hub/z2jh/)
    c.ExchangeCollect.uid_base = int(os.environ["DP_EXCHANGE_UID_BASE"])

# No fallback to nbgrader's own feedback either: it would publish the hidden tests (nbgrader
# issue #917) the day this import failed; the Formgrader shows the error instead.
from autograder.nbgrader.hidden_tests import StripHiddenTests  # noqa: E402
from autograder.render.mathml import MathToMathML  # noqa: E402
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import GetGrades  # noqa: E402

c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, StripHiddenTests, MathToMathML]

# No fallback to nbgrader's Execute: if the trusted grader cannot be imported, this file fails
# to load and the Formgrader's Autograde shows the error instead of running student code.
from autograder.nbgrader.formgrader import TrustedAutograde  # noqa: E402
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,  # noqa: E402
                                    LimitOutput, SaveAutoGrades)

c.Autograde.autograde_preprocessors = [TrustedAutograde, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# A submission's own files (an HTML or SVG file she handed in) are served without running a script,
# whatever copy of the course's nbgrader_config.py the course root holds (red team, session 13).
from autograder.nbgrader.formgrader import confine_submission_files  # noqa: E402

confine_submission_files()
