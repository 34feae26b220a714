"""Fixtures shared across test modules: the class server of the hub tests (``hubserver.py``)."""

from hubserver import _running_hub, class_server, hub  # noqa: F401  (fixtures)
