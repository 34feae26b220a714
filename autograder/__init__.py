"""Headless, trusted grading of the course's nbgrader assignments.

Grades come from a process that never runs student code:

* :mod:`autograder.grade` lists the submissions, runs ``jobs`` trusted
  workers, validates everything they answer and writes ``OUT`` atomically;
* :mod:`autograder.worker` sanitizes one submission, scores it with
  :mod:`autograder.scorer` and builds the executed notebook and feedback;
* :mod:`autograder.scorer` runs the student's cells in a bubblewrap sandbox
  (:mod:`autograder.jail`; the code that runs inside is
  :mod:`autograder.sandbox`) and the instructor's test cells here, where each
  graded function is a :class:`autograder.proxy.Proxy` that exchanges plain
  data with the sandbox;
* :mod:`autograder.students`, :mod:`autograder.sanitize`, :mod:`autograder.cells`,
  :mod:`autograder.render.feedback`, :mod:`autograder.reports.report` read submissions,
  render safe feedback and write the outputs; :mod:`autograder.astcheck`
  notes suspicious code for the instructor (never points);
* :mod:`autograder.lms` brings an LMS's bulk download in and the grades back out, and
  :mod:`autograder.hostcheck` says where the sandbox cannot run and what to do instead.

See README.md in this folder for the threat model.
"""
