"""Adapters to nbgrader: the hardened exchange, the Formgrader's Autograde button, the gradebook import.

Named after what it adapts; every module imports the real ``nbgrader`` absolutely (``from nbgrader...``),
which Python 3 resolves to the installed package, never to this folder.
"""
