"""The course's lecture notebooks (``course/*.ipynb``, built from ``course/_src/`` by
``course/build.py``) and the student's launcher: ``python3 -m course lab`` (Windows:
``py -m course lab``), see :mod:`course.__main__`.

Only the standard library is imported here: this package runs under whatever Python the
student has, before the course's environment exists.
"""
