"""Hub-only accounts: the class's students reach this machine through the hub and nothing else.

A student's OS account has a password (the hub logs her in with PAM), so on a machine that also
runs sshd, cron or at she could start processes outside every limit the spawner sets: no cgroup,
no network namespace, no private /tmp, and they outlive the class (red team, issue 37: her hub
password opened an ssh session, `crontab` and `at` took her jobs). ``lock`` (run by
``hub/provision.py``) closes each such door where the service is installed, says which it
closed and which service is absent, and records what it changed in ``SRV/os-lock.json``;
``unlock`` (``provision.py --stop``) undoes exactly that. Every line it adds to a file of the
system is inside a block marked with the course's name, so removal touches nothing else:

- ssh: ``/etc/ssh/sshd_config.d/dp-course.conf`` with ``DenyGroups dp-course-students`` (sshd
  refuses the group before any authentication: no shell, no ``-N -L`` port forwarding either);
  sshd is told to reload (SIGHUP) if it runs. Warns when sshd_config does not include that folder.
- cron and at: the students' ids in ``/etc/cron.deny`` and ``/etc/at.deny`` (neither reads
  groups); warns about an ``.allow`` file that lists one of them and about jobs they already have.
- su: ``pam_succeed_if`` in ``/etc/pam.d/su`` refuses su to a member of the group, whatever
  the password (after ``pam_rootok``: root keeps su). A locked password would do it too, but
  the hub logs students in with that password through PAM.
- the login shell: ``/usr/sbin/nologin``. The hub's terminal does not use it (the students'
  ``jupyter_server_config.json`` starts ``/bin/bash``, hub/spawner.py sets ``SHELL``), and
  nothing else needs one.

Instructors are left alone: they run the class and may be the machine's own staff accounts.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

COURSE_ID = "dp-course"
GROUP = f"{COURSE_ID}-students"
MARK = f"# {COURSE_ID}: added by hub/provision.py (hub-only accounts); removed by provision.py --stop"
END = f"# {COURSE_ID}: end"
LEDGER = "os-lock.json"
NOLOGIN = next((p for p in ("/usr/sbin/nologin", "/sbin/nologin") if os.path.exists(p)), "/bin/false")
#: where the services are; tests point these elsewhere only to check messages, never the real paths
PATHS = {"sshd": "/usr/sbin/sshd", "sshd_config": "/etc/ssh/sshd_config",
         "sshd_dropin": f"/etc/ssh/sshd_config.d/{COURSE_ID}.conf", "sshd_pid": "/run/sshd.pid",
         "crontab": "/usr/bin/crontab", "cron.deny": "/etc/cron.deny", "cron.allow": "/etc/cron.allow",
         "cron_spool": "/var/spool/cron/crontabs", "at": "/usr/bin/at", "at.deny": "/etc/at.deny",
         "at.allow": "/etc/at.allow", "at_spool": "/var/spool/cron/atjobs", "pam_su": "/etc/pam.d/su"}
PAM_MODULE_DIRS = ("/lib/x86_64-linux-gnu/security", "/usr/lib/x86_64-linux-gnu/security", "/lib/security",
                   "/usr/lib/security", "/lib64/security", "/usr/lib64/security", "/lib/aarch64-linux-gnu/security")


def _write(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its owner and mode (at.deny is root:daemon 0640)."""
    st = path.stat() if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, st.st_mode & 0o7777 if st else 0o644)
    if st:
        os.chown(tmp, st.st_uid, st.st_gid)
    os.replace(tmp, path)


def _without_block(text: str) -> str:
    """``text`` without the course's marked block(s)."""
    return re.sub(rf"(?ms)^{re.escape(MARK)}\n.*?^{re.escape(END)}\n?", "", text)


def _set_block(path: Path, body: list[str], *, after: re.Pattern | None = None) -> bool:
    """The course's block in ``path`` holds ``body`` (inserted after the first line matching ``after``,
    else appended); whether the file changed."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    rest = _without_block(old)
    block = "\n".join([MARK, *body, END]) + "\n"
    if rest and not rest.endswith("\n"):
        rest += "\n"
    lines = rest.splitlines(keepends=True)
    at = next((i + 1 for i, line in enumerate(lines) if after and after.search(line)), len(lines))
    new = "".join(lines[:at]) + block + "".join(lines[at:])
    if new == old:
        return False
    _write(path, new)
    return True


def _remove_block(path: Path, created: bool) -> bool:
    if not path.exists():
        return False
    old = path.read_text(encoding="utf-8")
    new = _without_block(old)
    if new == old:
        return False
    if created and not new.strip():
        path.unlink()
    else:
        _write(path, new)
    return True


def _load(srv: Path) -> dict:
    ledger = srv / LEDGER
    return json.loads(ledger.read_text()) if ledger.exists() else {}


def _save(srv: Path, state: dict) -> None:
    ledger = srv / LEDGER
    ledger.write_text(json.dumps(state, indent=1, sort_keys=True))
    ledger.chmod(0o600)


def _sshd_reload() -> str:
    """SIGHUP to the running sshd (it re-reads its configuration); what happened."""
    try:
        pid = int(Path(PATHS["sshd_pid"]).read_text().split()[0])
        if os.path.basename(os.readlink(f"/proc/{pid}/exe")) != "sshd":
            return "not running"
        os.kill(pid, signal.SIGHUP)
        return f"reloaded (pid {pid})"
    except (OSError, ValueError, IndexError):
        return "not running"


def _lock_ssh(state: dict) -> list[str]:
    if not os.path.exists(PATHS["sshd"]):
        return ["ssh: sshd is not installed: nothing to deny"]
    out = []
    dropin = Path(PATHS["sshd_dropin"])
    config = Path(PATHS["sshd_config"]).read_text(encoding="utf-8") if os.path.exists(PATHS["sshd_config"]) else ""
    included = re.search(rf"(?m)^\s*Include\s+\S*{re.escape(str(dropin.parent))}/\*\.conf\b", config)
    if not included:
        out.append(f"warning: ssh: {PATHS['sshd_config']} has no `Include {dropin.parent}/*.conf` line: sshd "
                   f"does not read {dropin}. Add that line at the top of sshd_config (Debian's default), or "
                   f"`DenyGroups {GROUP}` there yourself")
    elif re.search(r"(?mi)^\s*Match\s", config[:included.start()]):
        out.append(f"warning: ssh: the Include of {dropin.parent} comes after a Match block in "
                   f"{PATHS['sshd_config']}: the DenyGroups applies only inside it. Move the Include to the top")
    text = f"{MARK}\nDenyGroups {GROUP}\n{END}\n"
    if dropin.exists() and dropin.read_text(encoding="utf-8") == text:
        return out
    if dropin.exists() and MARK not in dropin.read_text(encoding="utf-8"):
        return [*out, f"warning: ssh: {dropin} exists and is not the course's: left alone, nothing denied"]
    # sshd -t before and after: a configuration that fails without the drop-in (or cannot be checked here,
    # e.g. no /run/sshd while sshd is stopped) says nothing about the drop-in's one line
    before = subprocess.run([PATHS["sshd"], "-t"], capture_output=True, text=True)
    dropin.parent.mkdir(parents=True, exist_ok=True)
    _write(dropin, text)
    state.setdefault("created", []).append(str(dropin))
    checked = subprocess.run([PATHS["sshd"], "-t"], capture_output=True, text=True)
    if checked.returncode and not before.returncode:
        dropin.unlink()
        state["created"].remove(str(dropin))
        return [*out, f"warning: ssh: sshd -t refused the configuration with {dropin} "
                      f"({checked.stderr.strip()[-300:]}): removed it, nothing denied"]
    if checked.returncode:
        out.append(f"note: ssh: `sshd -t` fails here with or without {dropin} ({checked.stderr.strip()[-200:]})")
    return [*out, f"ssh: {dropin}: DenyGroups {GROUP}; sshd {_sshd_reload()}"]


def _lock_jobs(kind: str, tool: str, students: list[str], state: dict) -> list[str]:
    """cron or at: the students in ``/etc/<kind>.deny`` (neither reads groups)."""
    if not os.path.exists(PATHS[tool]):
        return [f"{kind}: {PATHS[tool]} is not installed: nothing to deny"]
    out = []
    deny, allow = Path(PATHS[f"{kind}.deny"]), Path(PATHS[f"{kind}.allow"])
    if allow.exists():
        listed = sorted(set(allow.read_text(encoding="utf-8").split()) & set(students))
        if listed:          # the allow file wins over the deny file: not ours to edit
            out.append(f"warning: {kind}: {allow} lists {', '.join(listed)}, which it allows whatever {deny} says: "
                       "remove them from it")
    existed = deny.exists()
    if _set_block(deny, sorted(students)):
        if not existed:
            state.setdefault("created", []).append(str(deny))
        out.append(f"{kind}: {deny}: denied {', '.join(sorted(students))}")
    spool = Path(PATHS["cron_spool" if kind == "cron" else "at_spool"])
    uids = {pwd.getpwnam(s).pw_uid: s for s in students if _exists(s)}
    try:
        jobs = sorted({uids[p.stat().st_uid] if kind == "at" else p.name for p in spool.iterdir()
                       if (p.stat().st_uid in uids if kind == "at" else p.name in students)})
    except OSError:
        jobs = []
    if jobs:
        how = "crontab -r -u ID" if kind == "cron" else "atq, atrm"
        out.append(f"warning: {kind}: {', '.join(jobs)} already have jobs in {spool}, which the deny file does not "
                   f"stop: remove them ({how})")
    return out


def _lock_su(state: dict) -> list[str]:
    pam = Path(PATHS["pam_su"])
    if not pam.exists():
        return [f"su: {pam} does not exist: nothing to deny"]
    if not any(os.path.exists(f"{d}/pam_succeed_if.so") for d in PAM_MODULE_DIRS):
        return [f"warning: su: pam_succeed_if.so not found: {pam} left alone (a missing module would break su)"]
    rule = f"auth       requisite  pam_succeed_if.so quiet_success user notingroup {GROUP}"
    if _set_block(pam, [rule], after=re.compile(r"^\s*auth\s+\S+\s+pam_rootok\.so")):
        return [f"su: {pam}: su to a member of {GROUP} refused"]
    return []


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def lock(srv: Path, students: list[str]) -> list[str]:
    """Make the accounts ``students`` hub-only (above); what changed, which service is absent, warnings."""
    state = _load(srv)
    state.setdefault("created", [])
    out = []
    try:
        group = grp.getgrnam(GROUP)
    except KeyError:
        subprocess.run(["groupadd", GROUP], check=True, capture_output=True)
        state["group_created"] = True
        group = grp.getgrnam(GROUP)
        out.append(f"accounts: created the group {GROUP}")
    added = [s for s in students if s not in group.gr_mem]
    for student in added:
        subprocess.run(["gpasswd", "--add", student, GROUP], check=True, capture_output=True)
    state["members"] = sorted(set(state.get("members", [])) | set(added))
    if added:
        out.append(f"accounts: {', '.join(added)} in {GROUP}")
    shells = state.setdefault("shells", {})
    for student in students:
        shell = pwd.getpwnam(student).pw_shell
        if shell != NOLOGIN:
            shells.setdefault(student, shell)
            subprocess.run(["usermod", "--shell", NOLOGIN, student], check=True, capture_output=True)
            out.append(f"accounts: {student}'s login shell {shell} -> {NOLOGIN} (the hub's terminal runs bash itself)")
    _save(srv, state)       # before the files: an interrupted run still knows what to undo
    out += _lock_ssh(state)
    out += _lock_jobs("cron", "crontab", students, state)
    out += _lock_jobs("at", "at", students, state)
    out += _lock_su(state)
    state["created"] = sorted(set(state["created"]))
    _save(srv, state)
    return out


def unlock(srv: Path) -> list[str]:
    """Undo what ``lock`` changed (its ledger in ``srv``); what was undone."""
    state = _load(srv)
    if not state:
        return []
    out = []
    created = set(state.get("created", []))
    for key in ("sshd_dropin", "cron.deny", "at.deny", "pam_su"):
        path = Path(PATHS[key])
        if key == "sshd_dropin":
            if path.exists() and MARK in path.read_text(encoding="utf-8"):
                path.unlink()
                out.append(f"ssh: removed {path}; sshd {_sshd_reload()}")
        elif _remove_block(path, str(path) in created):
            out.append(f"removed the {COURSE_ID} lines of {path}")
    for student, shell in state.get("shells", {}).items():
        if _exists(student) and pwd.getpwnam(student).pw_shell == NOLOGIN:
            subprocess.run(["usermod", "--shell", shell, student], check=True, capture_output=True)
            out.append(f"accounts: {student}'s login shell {shell} again")
    try:
        grp.getgrnam(GROUP)
        if state.get("group_created"):
            subprocess.run(["groupdel", GROUP], check=True, capture_output=True)
            out.append(f"accounts: removed the group {GROUP}")
        else:
            for member in state.get("members", []):
                subprocess.run(["gpasswd", "--delete", member, GROUP], capture_output=True)
    except KeyError:
        pass
    (srv / LEDGER).unlink(missing_ok=True)
    if out:
        out.append("note: the students' accounts can log in over ssh, su, cron and at again wherever those allow "
                   "them: lock (usermod -L) or delete (userdel) them if the class is over")
    return out


def restrict_checkout(repo: Path) -> list[str]:
    """Make the checkout unreadable for every other account (no one needs it: ``SRV/venv`` runs the servers)."""
    changes = []
    for secret in ("source", "tests", ".git", "hub/state"):
        path = repo / secret
        if path.exists() and path.stat().st_mode & 0o077:
            path.chmod(0o700 if path.is_dir() else 0o600)
            changes.append(f"{path}: 0700")
    if stat.S_IMODE(repo.stat().st_mode) & 0o077:
        repo.chmod(0o700)
        changes.append(f"{repo}: 0700")
    return changes


def has_demo_password(name: str) -> bool:
    """Whether ``name``'s password is still ``demo-<name>`` (compared with /etc/shadow)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt   # removed in Python 3.13; the course pins 3.11

    with open("/etc/shadow", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split(":")
            if fields[0] == name:
                hashed = fields[1]
                return hashed[:1] not in ("!", "*", "") and crypt.crypt(f"demo-{name}", hashed) == hashed
    return False


def password_set(name: str) -> bool:
    with open("/etc/shadow", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split(":")
            if fields[0] == name:
                return fields[1][:1] not in ("!", "*", "")
    return False


def set_password(name: str, password: str) -> None:
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)

