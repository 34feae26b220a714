"""Hand-in and grades through a learning platform (issue 33 §3): Moodle, Canvas, 学习通, 雨课堂 ...

:mod:`~autograder.lms.importer` turns an LMS's bulk download into the grader's
``DIR/<student>/<assignment>/<notebook>.ipynb`` (``python -m autograder import-submissions``),
reading it through :mod:`~autograder.lms.archive` (no extraction, caps, no links, no path
traversal) and naming students with :mod:`~autograder.lms.naming` (Moodle's, Canvas's and the
course's own ``<学号>_<assignment>.ipynb`` names, a lecturer's pattern) and
:mod:`~autograder.lms.roster` (the LMS's own export mapping accounts to student numbers).
:mod:`~autograder.lms.export` writes grades and feedback back in the forms the LMSs import
(``python -m autograder export-grades``). Nothing here runs student code.
"""
