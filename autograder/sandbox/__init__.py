"""Code that runs INSIDE the sandbox, next to the student's code (untrusted side).

Only this folder is visible in the sandbox (read-only): :mod:`runner` runs the
student's cells and answers calls; :mod:`wire` is the channel format, shared
with the trusted side. Nothing here imports ``autograder`` or ``helpers``, and
nothing the runner reports is believed by the grader without validation.
"""
