"""PAM logins whose failure delay does not hold one of the hub's PAM threads (red team, s6-rthub).

JupyterHub's ``PAMAuthenticator`` runs PAM on a pool of ``executor_threads`` (4) threads, and libpam
sleeps in that thread after a failure (Debian's ``/etc/pam.d/login``: ``pam_faildelay`` 3 s, pam_unix
2 s). Four failed logins at a time thus hold every PAM thread: a student's kernel sending failed logins
to the hub's address kept the instructor's login waiting 79 s (docs/redteam-hub-2026-11.md).
Here libpam gets a fail-delay callback (the ``PAM_FAIL_DELAY`` item, which libpam calls instead of
sleeping) that does nothing, and the login handler waits ``fail_delay`` seconds asynchronously instead:
a wrong password still costs its sender the delay, without taking a thread from anyone else.

``CoursePAMAuthenticator``, the one the hub uses, adds a cap on failed logins per source address and
per student account (issue 37; hub/README.md, "Who can do what").
"""

from __future__ import annotations

import asyncio
import ctypes
import ipaddress
import json
import math
import time

import pamela
from jupyterhub.auth import PAMAuthenticator
from tornado import web
from traitlets import Float, Integer, Set, Unicode

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


def source_of(handler) -> str:
    """The address a login came from, which no header of the client can change.

    The connection's peer, unless that is this machine's loopback (the hub's own proxy, a TLS front
    on the same machine): then the address that proxy appended to ``X-Forwarded-For``, walking from
    the right past further loopback hops. Tornado's ``remote_ip`` is not used: with JupyterHub's
    ``xheaders`` it takes a client's ``X-Real-Ip`` as it comes, and a student's server reaches the
    hub's own port directly (hub/spawner.py), so she could name a new source for every attempt.
    """
    request = getattr(handler, "request", None)
    address = getattr(getattr(getattr(request, "connection", None), "context", None), "address", None)
    if not address or not isinstance(address, tuple):
        return "unknown"
    source = _ip(address[0])
    hops = ",".join(request.headers.get_list("X-Forwarded-For")).split(",")
    while source is not None and source.is_loopback and hops:
        hop = _ip(hops.pop().strip())
        if hop is None:
            break
        source = hop
    return str(source) if source is not None else str(address[0])


def _ip(text: str):
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    return ip.ipv4_mapped or ip if isinstance(ip, ipaddress.IPv6Address) else ip


class TooManyFailures(web.HTTPError):
    """429 with a message for the login page (JupyterHub's error page shows it)."""

    def __init__(self, who: str, wait: float):
        seconds = max(1, math.ceil(wait))
        zh = {"source": "从你的网络地址登录失败的次数太多", "account": "这个账号登录失败的次数太多"}[who]
        en = {"source": "Too many failed logins from your address",
              "account": "Too many failed logins for this account"}[who]
        super().__init__(429, f"{zh}，请 {seconds} 秒后再试。 / {en}: try again in {seconds} s.")
        self.jupyterhub_message = self.log_message


class Bucket:
    """A token bucket: ``burst`` failed logins at once, then one more every ``refill`` seconds."""

    __slots__ = ("tokens", "stamp")

    def __init__(self, burst: int, now: float):
        self.tokens, self.stamp = float(burst), now

    def level(self, burst: int, refill: float, now: float) -> float:
        self.tokens = min(float(burst), self.tokens + (now - self.stamp) / refill)
        self.stamp = now
        return self.tokens


class CoursePAMAuthenticator(NoDelayPAMAuthenticator):
    """PAM logins with a cap on failures per source address and per account (issue 37).

    Each source (``source_of``) may fail ``source_burst`` logins, then one every ``source_refill``
    seconds; further attempts are refused at once with 429 and a message, without asking PAM. Each
    roster account likewise (``account_burst``, ``account_refill``), except ``exempt_accounts`` (the
    instructors): a student sending the instructor's name from her own address stops only her own
    address. Nor does the account cap apply at an address the account has logged in from before (the
    last 20 kept per account): a student who exhausts a classmate's account from her address does not
    lock him out of his own (only a first login from a new address waits). An attempt takes its token before PAM runs (a flood of simultaneous attempts gets no
    more than the burst) and gets it back if the password was right; a success clears nothing else,
    so logging in as herself between guesses does not refill a student's address. Counts live in
    the hub's memory: a restart of the hub forgives them.
    """

    source_burst = Integer(20, config=True, help="failed logins a source may make at once")
    source_refill = Float(30.0, config=True, help="seconds after which a source may fail once more")
    account_burst = Integer(10, config=True, help="failed logins an account may have at once")
    account_refill = Float(60.0, config=True, help="seconds after which an account may fail once more")
    exempt_accounts = Set(config=True, help="accounts without the per-account cap (the instructors)")
    roster_file = Unicode("", config=True, help="the roster provisioning applied (SRV/roster.json, hub/roster_ops.py), "
                                                "read at every login: who may log in; empty or unreadable: allowed_users")

    def check_allowed(self, username, authentication=None):
        # Read at each login, so that a roster change (`sudo make hub`) takes effect without a restart of
        # the hub; JupyterHub's own allowed_users is fixed at its start and grows with every user in its
        # database (a removed student could still log in).
        try:
            with open(self.roster_file, encoding="utf-8") as handle:
                people = json.load(handle)["people"]
        except (OSError, ValueError, KeyError, TypeError):
            return super().check_allowed(username, authentication)
        return username in people

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._sources: dict[str, Bucket] = {}
        self._accounts: dict[str, Bucket] = {}
        self._known: dict[str, list[str]] = {}     # account -> addresses it logged in from (newest last)

    def _take(self, table: dict, key: str, burst: int, refill: float, now: float) -> float:
        """Take a token; 0 if taken, else the seconds until one is there."""
        bucket = table.setdefault(key, Bucket(burst, now))
        level = bucket.level(burst, refill, now)
        if level < 1:
            return (1 - level) * refill
        bucket.tokens -= 1
        return 0.0

    async def authenticate(self, handler, data):
        now = time.monotonic()
        if len(self._sources) > 10_000:     # forget the sources whose buckets are full again
            self._sources = {k: b for k, b in self._sources.items()
                             if b.level(self.source_burst, self.source_refill, now) < self.source_burst}
        source = source_of(handler)
        username = self.normalize_username((data or {}).get("username", ""))
        # only roster accounts are counted per account (any other name fails anyway, and would grow the table)
        counted = (username in self.allowed_users and username not in self.exempt_accounts
                   and source not in self._known.get(username, ()))
        wait = self._take(self._sources, source, self.source_burst, self.source_refill, now)
        if wait:
            self.log.warning("login refused: %s failed too often (%s tried %r)", source, source, username)
            raise TooManyFailures("source", wait)
        if counted:
            wait = self._take(self._accounts, username, self.account_burst, self.account_refill, now)
            if wait:
                self._sources[source].tokens += 1
                self.log.warning("login refused: %r failed too often (tried from %s)", username, source)
                raise TooManyFailures("account", wait)
        name = await super().authenticate(handler, data)
        if name is not None:        # (the source's bucket may have been forgotten meanwhile)
            for table, key in ((self._sources, source), (self._accounts, username if counted else None)):
                if key in table:
                    table[key].tokens += 1
            known = self._known.setdefault(username, [])
            if source not in known:
                known[:] = [*known, source][-20:]
        return name
