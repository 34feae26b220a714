"""hub/limits.py without a class server: connections per peer, OAuth tokens per client, the log's mode (session 15)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import stat
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hub"))
import limits  # noqa: E402  (hub/limits.py)


def _stream(own: str):
    return SimpleNamespace(socket=SimpleNamespace(getsockname=lambda: (own, 8081)))


def test_only_other_addresses_are_counted():
    hub = "169.254.64.1"
    assert limits._capped_peer(_stream(hub), ("169.254.64.6", 40000)) == "169.254.64.6"    # a student's server
    assert limits._capped_peer(_stream(hub), (hub, 40000)) is None                           # the proxy, services
    assert limits._capped_peer(_stream("127.0.0.1"), ("127.0.0.1", 40000)) is None
    assert limits._capped_peer(_stream("::1"), ("::1", 40000, 0, 0)) is None
    assert limits._capped_peer(_stream(hub), "") is None                                     # a unix socket


def _serve(server_class, started: threading.Event, box: dict) -> None:
    from tornado.web import Application, RequestHandler

    class Hello(RequestHandler):
        def get(self):
            self.write("ok")

    async def main():
        server = server_class(Application([("/", Hello)]))
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        sock.setblocking(False)
        server.add_sockets([sock])
        box.update(server=server, port=sock.getsockname()[1], loop=asyncio.get_running_loop(),
                   stop=asyncio.Event())
        started.set()
        await box["stop"].wait()
        server.stop()

    asyncio.run(main())


def _closed_by_server(conn: socket.socket, wait: float = 2.0) -> bool:
    conn.settimeout(wait)
    try:
        return conn.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_one_peer_holds_at_most_its_connections(monkeypatch):
    """Idle connections beyond the cap are closed at once; a closed one frees its place; requests are answered."""
    from tornado.httpserver import HTTPServer

    class Server(HTTPServer):
        pass

    limits.cap_connections(Server, 4)
    # this test's peer is loopback: count it as a student's server would be counted
    monkeypatch.setattr(limits, "_capped_peer", lambda stream, address: address[0])
    started, box = threading.Event(), {}
    thread = threading.Thread(target=_serve, args=(Server, started, box), daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        held = [socket.create_connection(("127.0.0.1", box["port"])) for _ in range(10)]
        assert [_closed_by_server(c, 5) for c in held[4:]] == [True] * 6
        assert not any(_closed_by_server(c, 0.1) for c in held[:4])
        assert box["server"]._dp_course_held["127.0.0.1"] == 4
        for c in held[:2]:
            c.close()
        deadline = time.monotonic() + 10
        while box["server"]._dp_course_held["127.0.0.1"] > 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert box["server"]._dp_course_held["127.0.0.1"] == 2, "closed connections still counted"
        fresh = socket.create_connection(("127.0.0.1", box["port"]))
        fresh.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        fresh.settimeout(5)
        assert b"ok" in fresh.recv(4096)
        assert box["server"]._dp_course_held["127.0.0.1"] == 3
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(10)


def test_oauth_tokens_are_capped_per_client_and_others_stay():
    from jupyterhub import orm
    from jupyterhub.oauth.provider import JupyterHubRequestValidator

    class Validator(JupyterHubRequestValidator):
        pass

    limits.cap_oauth_tokens(Validator, 3)
    db = orm.new_session_factory("sqlite://")()
    user = orm.User(name="alice")
    db.add(user)
    for ident in ("jupyterhub", "jupyterhub-user-alice", "service-dp-course"):
        db.add(orm.OAuthClient(identifier=ident, redirect_uri=f"http://x/{ident}"))
    db.commit()
    server_token = user.new_api_token(note="Server at /user/alice/")     # client "jupyterhub"
    validator = Validator(db)
    formgrader = SimpleNamespace(user=user, client=SimpleNamespace(client_id="service-dp-course"),
                                 scopes=[], session_id="s")
    validator.save_bearer_token({"access_token": "formgrader-token", "expires_in": 3600}, formgrader)
    minted = []
    for i in range(8):
        request = SimpleNamespace(user=user, client=SimpleNamespace(client_id="jupyterhub-user-alice"),
                                  scopes=[], session_id="s")
        validator.save_bearer_token({"access_token": f"oauth-token-{i}", "expires_in": 3600}, request)
        minted.append(f"oauth-token-{i}")
    alive = {t for t in minted if orm.APIToken.find(db, t) is not None}
    assert alive == set(minted[-3:])
    assert orm.APIToken.find(db, server_token) is not None
    assert orm.APIToken.find(db, "formgrader-token") is not None


def test_the_hubs_log_is_private_from_its_first_line_and_after_rotation(tmp_path):
    before = os.umask(0o022)
    try:
        handler = limits.PrivateRotatingFileHandler(str(tmp_path / "jupyterhub.log"), maxBytes=200, backupCount=2)
        record = logging.LogRecord("JupyterHub", logging.WARNING, __file__, 1, "Failed login for Teach3r-S3cret!" * 3,
                                   None, None)
        for _ in range(5):
            handler.emit(record)
        handler.close()
    finally:
        assert os.umask(before) == 0o022, "the handler left the process umask changed"
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert set(modes) >= {"jupyterhub.log", "jupyterhub.log.1"} and set(modes.values()) == {0o600}, modes


def test_the_hub_may_open_more_than_systemds_default_1024_files():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 1024:
        pytest.skip(f"hard limit {hard}: nothing to raise to")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))      # systemd's default soft limit
        # root without CAP_SYS_RESOURCE (this container) cannot raise the hard limit: the soft one goes up to it
        got = limits.raise_nofile(65536)
        assert got == resource.getrlimit(resource.RLIMIT_NOFILE) and got[0] >= min(65536, hard) > 1024
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
