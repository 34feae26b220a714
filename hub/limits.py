"""What one person's connections and OAuth logins may hold in the hub (hub/jupyterhub_config.py).

- :func:`cap_connections`: connections held at once to the hub's HTTP server per peer address.
  The students' servers reach the hub's API from their own network namespaces (hub/spawner.py), one
  address each; a kernel there could hold 20,000 idle connections, every one a file descriptor of
  the hub, until sqlite could open no file and every classmate got 403 (red team, session 15).
  The proxy and the services connect from the hub's own address or loopback: never capped.
- :func:`raise_nofile`: the hub's soft RLIMIT_NOFILE up to its hard limit (systemd's default soft
  limit is 1024: the class's own connections and the database share it).
- :class:`PrivateRotatingFileHandler`: the hub's log, 0600 from its first line and after each rotation.
- :func:`cap_oauth_tokens`: OAuth access tokens one person holds for one client (her server, the
  Formgrader): a new one deletes the oldest beyond the cap. A kernel minted 1,428 a minute with her
  server's client id and token (authorize, code, token), past ``DP_HUB_TOKENS_PER_USER``, which caps
  only tokens asked of ``/hub/api/users/<name>/tokens``.
"""

from __future__ import annotations

import collections
import ipaddress
import logging
import logging.handlers
import os
import resource

log = logging.getLogger("JupyterHub")


def _capped_peer(stream, address) -> str | None:
    """The peer's address to count, or None for loopback, the hub's own address and unix sockets."""
    if not isinstance(address, tuple) or not address:
        return None
    try:
        peer = ipaddress.ip_address(address[0])
    except ValueError:
        return None
    if peer.is_loopback:
        return None
    try:
        own = stream.socket.getsockname()[0]
    except (AttributeError, OSError):
        own = None
    # the proxy reaches the hub at its address on lo: a connection from that same address is local
    return None if own is not None and ipaddress.ip_address(own) == peer else str(peer)


def cap_connections(server_class, per_peer: int) -> None:
    """Let ``server_class`` (tornado's HTTPServer) hold at most ``per_peer`` connections per peer address.

    A connection beyond the cap is closed as soon as it is accepted (it costs the hub a descriptor for
    that moment only); the count falls when a connection ends (``on_close``). Applied once per class.
    """
    if getattr(server_class, "dp_course_per_peer", None) is not None:
        server_class.dp_course_per_peer = per_peer
        return
    handle, closed = server_class.handle_stream, server_class.on_close
    server_class.dp_course_per_peer = per_peer

    def handle_stream(self, stream, address):
        peer = _capped_peer(stream, address)
        if peer is not None:
            held = self.__dict__.setdefault("_dp_course_held", collections.Counter())
            if held[peer] >= type(self).dp_course_per_peer:
                if peer not in self.__dict__.setdefault("_dp_course_warned", set()):
                    self._dp_course_warned.add(peer)
                    log.warning("%s holds %d connections to the hub, the most one address may: refusing more",
                                peer, held[peer])
                stream.close()
                return
            held[peer] += 1
            stream.dp_course_peer = peer
        handle(self, stream, address)

    def on_close(self, server_conn):
        peer = getattr(getattr(server_conn, "stream", None), "dp_course_peer", None)
        if peer is not None:
            held = self._dp_course_held
            held[peer] -= 1
            if held[peer] <= 0:
                del held[peer]
                self.__dict__.get("_dp_course_warned", set()).discard(peer)
        closed(self, server_conn)

    server_class.handle_stream = handle_stream
    server_class.on_close = on_close


def raise_nofile(want: int = 65536) -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to ``want`` (root: the hard limit too, if lower); returns (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return want, want
        except (ValueError, OSError):
            want = hard
    if soft == resource.RLIM_INFINITY or soft >= want:
        return soft, hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want, hard


def cap_oauth_tokens(validator_class, per_client: int) -> None:
    """After ``validator_class.save_bearer_token`` (JupyterHub's OAuth provider) stores a token, delete
    the owner's oldest tokens of that same client beyond ``per_client``.

    Only tokens issued to that OAuth client (her server's ``jupyterhub-user-<name>``, the Formgrader's
    ``service-dp-course``): her server's own API token and the tokens she made at /hub/token belong to
    the client ``jupyterhub`` and are never touched. A browser whose token went logs in again
    through OAuth without a question (the hub's login cookie still holds).
    """
    if getattr(validator_class, "dp_course_per_client", None) is not None:
        validator_class.dp_course_per_client = per_client
        return
    save = validator_class.save_bearer_token
    validator_class.dp_course_per_client = per_client

    def save_bearer_token(self, token, request, *args, **kwargs):
        result = save(self, token, request, *args, **kwargs)
        from jupyterhub import orm

        client_id = request.client.client_id
        if client_id != "jupyterhub":
            held = (self.db.query(orm.APIToken).filter_by(user_id=request.user.id, client_id=client_id)
                    .order_by(orm.APIToken.created.desc(), orm.APIToken.id.desc()))
            old = held.offset(type(self).dp_course_per_client).all()
            for stale in old:
                self.db.delete(stale)
            if old:
                self.db.commit()
        return result

    validator_class.save_bearer_token = save_bearer_token


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """RotatingFileHandler whose files are 0600 (the hub's umask would make them 0644)."""

    def _open(self):
        old = os.umask(0o077)
        try:
            return super()._open()
        finally:
            os.umask(old)
