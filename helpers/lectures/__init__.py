"""What the lecture notebooks show: figures, slider figures, self-checks and the notebooks' language.

One module per notebook family (the DP library itself is the rest of :mod:`helpers`; what
grading checks is :mod:`helpers.checks`):

=========================  =====================================================================
``i18n``                   the language of printed text (``set_lang``; ``tr`` for library code)
``plots``                  static figures, fonts, the plotting backend (``use_backend``)
``diagrams``               the chapter's flow figures drawn from real data (Fig. 6-12, RAPPOR)
``widgets``                ``LiveFigure`` and the ε-slider figures of 6.1–6.4
``selection_widgets``      6.3: pumpkin pricing on a price grid
``lab_widgets``            6.5 (RAPPOR, shuffling, synthetic data) and the LDP / histogram labs
``approx_widgets``         lab-approximate-dp: posterior odds, Laplace vs Gaussian, composition
``explorers``              the graded notebooks' ungraded ε-slider views (the student's own function)
``selfcheck``              the on-the-spot (ungraded) self-checks at the end of the notebooks
``widgets_bench``          ``python -m helpers.lectures.widgets_bench``: slider redraw times
=========================  =====================================================================
"""
