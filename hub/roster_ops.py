"""Roster changes and the switch from demo to real passwords, with the class running (issue 38).

Called by ``hub/provision.py`` (``sudo make hub``); hub/README.md, "Roster changes".

- ``SRV/roster.json`` (root's, 0644) is the roster provisioning last applied: who is in the class
  and who was removed. The hub reads it at every login (``CoursePAMAuthenticator.roster_file``:
  a student added or removed needs no restart of the hub), Collect reads it (skips the folders of
  ids not on it, ``autograder.nbgrader.exchange.ExchangeCollect.roster_file``), and the next
  provisioning compares the new roster with it.
- A person no longer on the roster is removed: from the hub (through its API when it runs: her
  server stopped by its spawner, her user deleted with every token; else her server's processes,
  cgroup, network namespace and home mount cleaned here and her rows deleted from the hub's
  database), and a student's OS account locked (``usermod -L`` and expired): her files, her
  submissions and her grades stay for the record. Added back later, she is unlocked.
- ``void_demo_sessions``: after a demo (``--demo-passwords``), every login cookie and API token the
  demo made is voided without touching the servers' records: the cookie secret is replaced (the hub
  makes a new one at its start), every user's cookie id renewed, and every user token deleted but the
  one each running server holds (read from that server's own environment), so the running servers
  still reach the hub and the restarted hub finds them all (before, provisioning deleted the hub's
  database and orphaned them).
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

RECORD = "roster.json"
#: the token provisioning uses to reach a running hub's API (made by jupyterhub_config.py, root-only)
API_TOKEN = "provision-api-token"
#: the hub's own API address, written by jupyterhub_config.py at each start
API_URL = "hub-api-url"
#: straight to the hub's own address, never through an http_proxy of root's environment
_open = urllib.request.build_opener(urllib.request.ProxyHandler({})).open


def load_record(srv: Path) -> dict:
    """The roster provisioning last applied: ``{"people": {id: role}, "removed": {id: role}}``."""
    try:
        record = json.loads((Path(srv) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"people": {}, "removed": {}}
    return {"people": dict(record.get("people", {})), "removed": dict(record.get("removed", {}))}


def write_record(srv: Path, roster: list[dict], removed: dict[str, str]) -> None:
    path = Path(srv) / RECORD
    people = {p["id"]: p["role"] for p in roster}
    record = {"people": people, "students": sorted(i for i, r in people.items() if r == "student"),
              "removed": {i: r for i, r in removed.items() if i not in people}}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    os.chown(tmp, 0, 0)
    tmp.chmod(0o644)
    os.replace(tmp, path)


def apply(srv: Path, state: Path, roster: list[dict], stop_servers) -> dict[str, str]:
    """Apply the roster's changes since the last provisioning; print what was done; who was ever removed (id: role).

    Everyone removed before and still off the roster is removed again (idempotent: a hub stopped at
    the time, a server started meanwhile); someone back on it is unlocked.
    """
    record = load_record(srv)
    now = {p["id"] for p in roster}
    removed = {i: r for i, r in {**record["removed"], **record["people"]}.items() if i not in now}
    for name, role in removed.items():
        lines = remove_person(srv, state, name, role, stop_servers)
        for line in lines if name not in record["removed"] else lines[:-1] if role == "student" else lines:
            print(line)     # (removed before: the lock of her account again is no news)
    for name in sorted(now - set(record["people"])) if record["people"] or record["removed"] else []:
        print(f"added to the class: {name}" + (f"; {readmit(name)}" if name in record["removed"] else ""))
    write_record(srv, roster, removed)
    return removed


def _hub_api(state: Path):
    """``(url, token)`` of the running hub's API, or None when the hub does not run."""
    try:
        url = (state / API_URL).read_text().strip().rstrip("/") + "/hub/api"
        token = (state / API_TOKEN).read_text().strip()
        _open(urllib.request.Request(url + "/", headers={"Authorization": f"token {token}"}), timeout=5).read()
    except (OSError, urllib.error.URLError, ValueError):
        return None
    return url, token


def _call(api, method: str, path: str) -> int:
    url, token = api
    request = urllib.request.Request(url + path, method=method, headers={"Authorization": f"token {token}"})
    try:
        with _open(request, timeout=120) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def _forget_offline(state: Path, name: str) -> str:
    """Delete ``name`` from the stopped hub's database (her tokens, servers, OAuth client go with her)."""
    db = state / "jupyterhub.sqlite"
    if not db.exists():
        return ""
    from jupyterhub import orm

    session = orm.new_session_factory(f"sqlite:///{db}")()
    try:
        user = orm.User.find(session, name)
        if user is None:
            return ""
        tokens = len(user.api_tokens)
        session.delete(user)
        client = session.query(orm.OAuthClient).filter_by(identifier=f"jupyterhub-user-{name}").first()
        if client is not None:
            session.delete(client)
        session.commit()
        return f"deleted from the hub's database with {tokens} API token(s)"
    finally:
        session.close()


def remove_person(srv: Path, state: Path, name: str, role: str, stop_servers) -> list[str]:
    """Take ``name`` out of the class (module docstring); what was done, as lines to print."""
    done = []
    api = _hub_api(state)
    if api is not None:
        status = _call(api, "DELETE", f"/users/{name}")
        if status == 204:
            done.append("hub user deleted with her server and every token (through the running hub)")
        elif status != 404:
            done.append(f"the hub refused to delete the user (HTTP {status}); her rows stay in its database")
    else:
        forgot = _forget_offline(state, name)
        if forgot:
            done.append(forgot)
    # whatever the hub did: nothing of her server may survive (processes, cgroup, netns, home mount)
    done += [line for line in stop_servers(srv, [{"id": name}], exchange=False)]
    if role == "student":
        try:
            subprocess.run(["usermod", "--lock", "--expiredate", "1", name], check=True, capture_output=True)
            done.append("OS account locked and expired (files, submissions and grades kept)")
        except subprocess.CalledProcessError as error:
            done.append(f"OS account not locked: {error.stderr.decode(errors='replace').strip()}")
        except FileNotFoundError:
            pass
    return [f"removed from the class: {name}: {line}" for line in done]


def readmit(name: str) -> str:
    """A removed student back on the roster: her account unexpired and unlocked."""
    subprocess.run(["usermod", "--expiredate", "", name], capture_output=True)
    subprocess.run(["usermod", "--unlock", name], capture_output=True)   # refused when it has no password: fine
    return f"back in the class: {name}: OS account unlocked"


def _server_token(pid) -> str | None:
    try:
        environ = Path(f"/proc/{int(pid)}/environ").read_bytes().split(b"\0")
    except (OSError, TypeError, ValueError):
        return None
    for entry in environ:
        if entry.startswith(b"JUPYTERHUB_API_TOKEN="):
            return entry.split(b"=", 1)[1].decode()
    return None


def void_demo_sessions(state: Path) -> list[str]:
    """Void every login and token of the demo, keep every server's record and token (module docstring)."""
    out = []
    secret = state / "jupyterhub_cookie_secret"
    if secret.exists():
        secret.unlink()
        out.append(f"removed {secret}: the hub makes a new one at its start, every login cookie of the demo is void")
    db = state / "jupyterhub.sqlite"
    if not db.exists():
        return out
    from jupyterhub import orm
    from jupyterhub.utils import new_token

    session = orm.new_session_factory(f"sqlite:///{db}")()
    try:
        keep, servers = set(), 0
        for spawner in session.query(orm.Spawner).filter(orm.Spawner.server_id.isnot(None)):
            token = _server_token((spawner.state or {}).get("pid"))
            found = orm.APIToken.find(session, token) if token else None
            if found is not None and found.user_id == spawner.user_id:
                keep.add(found.id)
                servers += 1
        dropped = 0
        for token in session.query(orm.APIToken).filter(orm.APIToken.user_id.isnot(None)):
            if token.id not in keep:
                session.delete(token)
                dropped += 1
        for code in session.query(orm.OAuthCode):
            session.delete(code)
        for user in session.query(orm.User):
            user.cookie_id = new_token()
        session.commit()
    finally:
        session.close()
    out.append(f"{db}: {dropped} API and OAuth token(s) of the demo deleted, every user's cookie id renewed; "
               f"the hub's database kept, and the token of each of the {servers} running server(s)")
    return out
