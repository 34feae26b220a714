"""Reference code for the differential-privacy course (textbook chapter 6, 差分隐私).

This is **teaching code**. It mirrors the formulas of the chapter so that a
student can read the mechanism next to the text. It is *not* safe for
protecting real data: noise drawn in floating point leaks information
through the low-order bits of its output (Mironov, CCS 2012), and the
parameters are not checked against side channels or timing. Real
deployments use a vetted library (OpenDP, Google's differential-privacy
library, Tumult Analytics) that samples exactly or snaps to a grid.

Conventions used everywhere in the package:

* randomness comes from a ``numpy.random.Generator`` passed as ``rng``:
  never from numpy's global state;
* invalid parameters raise :class:`helpers.InvalidParameterError` (a
  ``ValueError``) whose message names the function, the parameter, what was
  allowed and what was received;
* every docstring gives the formula and the textbook section it comes from.

Modules: ``mechanisms`` (the graded API), ``sampling`` (the textbook's LCG
and its printed Laplace formula), ``queries``, ``gaussian``, ``budget``
(accountant; advanced composition and Rényi DP), ``approx_dp`` (what ε and
δ mean), ``selection`` (the exponential mechanism's utility, noisy-max
samplers), ``data``, ``ldp``, ``shuffle``, ``synthetic``, ``graphical``
(dependency graphs of §6.5.3), ``audit``, ``histograms``, ``fp_leak``.
Two named parts sit beside this library: ``lectures`` (what the lecture
notebooks show: figures, sliders, self-checks, the notebook's language) and
``checks`` (the code the graded tests use).
"""

from helpers._validation import InvalidParameterError

__all__ = ["InvalidParameterError"]
