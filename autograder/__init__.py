"""Headless autograder for the course: nbgrader in parallel, with tamper checks.

The grading pipeline is a list of small steps, each testable alone::

    shard -> sanitize -> autograde (nbgrader) -> recheck -> feedback -> report

* :mod:`autograder.shard` picks the students of one CI shard;
* :mod:`autograder.sanitize` copies only the assignment's notebooks into a
  fresh course root, validates them, repairs duplicated ``grade_id`` values
  and restores/compares every instructor cell against the release version;
* :mod:`autograder.worker` is a long-lived process that grades many students
  with ``NbGraderAPI.autograde`` (one private course root and gradebook per
  submission, so there is never more than one SQLite writer);
* :mod:`autograder.recheck` re-runs the instructor's test cells in a fresh
  Python process in which only the student's function definitions and safe
  imports ran, and :mod:`autograder.astcheck` inspects the student's code;
* :mod:`autograder.feedback` strips hidden tests from the feedback HTML;
* :mod:`autograder.report` writes ``grades.csv`` and ``report.json`` and merges
  shard outputs.

This is a grading tool, not a security sandbox: student code runs with the
grader's user rights. Run it in a throw-away machine (CI runner, container).
"""
