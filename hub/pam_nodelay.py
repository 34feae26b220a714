"""PAM logins whose failure delay does not hold one of the hub's PAM threads (red team, s6-rthub).

JupyterHub's ``PAMAuthenticator`` runs PAM on a pool of ``executor_threads`` (4) threads, and libpam
sleeps in that thread after a failure (Debian's ``/etc/pam.d/login``: ``pam_faildelay`` 3 s, pam_unix
2 s). Four failed logins at a time thus hold every PAM thread: a student's kernel sending failed logins
to the hub's address kept the instructor's login waiting 79 s (docs/redteam-hub-2026-11.md).
Here libpam gets a fail-delay callback (the ``PAM_FAIL_DELAY`` item, which libpam calls instead of
sleeping) that does nothing, and the login handler waits ``fail_delay`` seconds asynchronously instead:
a wrong password still costs its sender the delay, without taking a thread from anyone else.
"""

from __future__ import annotations

import asyncio
import ctypes

import pamela
from jupyterhub.auth import PAMAuthenticator
from traitlets import Float

PAM_FAIL_DELAY = 10          # <security/_pam_types.h>
_DELAY_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)
_NO_SLEEP = _DELAY_FN(lambda retval, usec, appdata: None)     # module-level: must outlive every handle
_set_item = pamela.LIBPAM.pam_set_item
_set_item.restype = ctypes.c_int
_set_item.argtypes = [pamela.PamHandle, ctypes.c_int, ctypes.c_void_p]


def _without_sleep(authenticate):
    def pam_authenticate(handle, flags):
        _set_item(handle, PAM_FAIL_DELAY, ctypes.cast(_NO_SLEEP, ctypes.c_void_p))
        return authenticate(handle, flags)

    pam_authenticate.wrapped = authenticate
    return pam_authenticate


if not hasattr(pamela.PAM_AUTHENTICATE, "wrapped"):      # pamela.authenticate looks it up at each call
    pamela.PAM_AUTHENTICATE = _without_sleep(pamela.PAM_AUTHENTICATE)


class NoDelayPAMAuthenticator(PAMAuthenticator):
    """PAMAuthenticator whose failure delay is an asynchronous sleep, not a PAM thread held."""

    fail_delay = Float(3.0, config=True, help="seconds a failed login waits before its answer")

    async def authenticate(self, handler, data):
        name = await super().authenticate(handler, data)
        if name is None and self.fail_delay > 0:
            await asyncio.sleep(self.fail_delay)
        return name
