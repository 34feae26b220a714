#!/usr/bin/env bash
# Grade every collected submission of an assignment with the course's autograder and
# import the result into the Formgrader's gradebook. Run as the course account, in the
# course root (a terminal of the Formgrader service's JupyterLab is exactly that):
#
#     bash /srv/dp-course/grade.sh laplace [--jobs 2]     (provisioning's copy of this file)
#
# Writes autograder/<assignment>/ (grades.csv, report.json, feedback/) in the course
# root, then `python -m autograder import-gradebook`: scores per test cell, autograded
# notebooks and feedback into gradebook.db, autograded/ and feedback/. Afterwards the
# Formgrader shows the scores; manual grading, "Release feedback" (nbgrader
# release_feedback) and `nbgrader export` work as usual.
set -euo pipefail
assignment="${1:?usage: grade.sh ASSIGNMENT [--jobs N]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
python="${DP_PYTHON:-$here/../.venv/bin/python}"
test -x "$python" || python="$here/venv/bin/python"   # SRV/grade.sh next to the course's Python
test -x "$python" || python="$(command -v python3)"   # a container image without the .venv
course="${DP_COURSE_ROOT:-$PWD}"
export PATH="$(dirname "$python"):$PATH"
test -f "$course/gradebook.db" || { echo "no gradebook.db in $course: run in the course root" >&2; exit 2; }
out="$course/autograder/$assignment"
"$python" -m autograder grade --assignment "$assignment" --submissions "$course/submitted" \
    --out "$out" --course "$course" --jobs 2 "$@"
"$python" -m autograder import-gradebook --assignment "$assignment" --out "$out" --course "$course"
# the class report with the gradebook's final scores (manual grades included), owner-readable only
"$python" -m autograder report "$out" --out "$out/class_report.html" --gradebook "$course/gradebook.db"
echo "graded: $out/grades.csv"
echo "class report (open it in the Formgrader's JupyterLab): $out/class_report.html"
