"""Fixtures shared across test modules: the class server of the hub tests (``hubserver.py``), the
``make lab`` of the lone student's and instructor's browser tests (``labserver.py``)."""

from tests.support.hubserver import _running_hub, class_server, hub  # noqa: F401  (fixtures)
from tests.support.labserver import make_lab  # noqa: F401  (fixture)
