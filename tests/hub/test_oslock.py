"""hub/oslock.py's changes to system files, on copies (issue 37): each marked, made once, undone exactly.

The real files are changed by provisioning on the class server (tests/hub/test_accounts.py checks the
effect there); here every path of ``oslock.PATHS`` points into a temporary folder, so that what is
written can be compared byte for byte: Debian's ``/etc/pam.d/su`` and ``/etc/at.deny`` (their owner
and mode too) come back exactly after ``unlock``, a second ``lock`` changes nothing, a service that is
not installed is named and nothing is written for it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import oslock

PAM_SU = """#
# The PAM configuration file for the Shadow `su' service
#

# This allows root to su without passwords (normal operation)
auth       sufficient pam_rootok.so

# Uncomment this to force users to be a member of group wheel
# auth       required   pam_wheel.so

session       required   pam_env.so readenv=1
@include common-auth
@include common-account
@include common-session
"""


@pytest.fixture
def etc(tmp_path, monkeypatch):
    """oslock.PATHS in a temporary folder: sshd, crontab and at 'installed' (files), Debian's su and at.deny."""
    paths = {key: str(tmp_path / key.replace("/", "_")) for key in oslock.PATHS}
    paths["sshd_dropin"] = str(tmp_path / "sshd_config.d" / "dp-course.conf")
    for tool in ("sshd", "crontab", "at"):
        Path(paths[tool]).write_text("#!/bin/sh\nexit 0\n")       # `sshd -t` passes
        Path(paths[tool]).chmod(0o755)
    Path(paths["sshd_config"]).write_text(f"Include {tmp_path}/sshd_config.d/*.conf\nPort 22\n")
    Path(paths["pam_su"]).write_text(PAM_SU)
    Path(paths["at.deny"]).write_text("alias\nbackup\nbin\n")
    Path(paths["at.deny"]).chmod(0o640)
    for spool in ("cron_spool", "at_spool"):
        Path(paths[spool]).mkdir()
    monkeypatch.setattr(oslock, "PATHS", paths)
    return paths


def _snapshot(paths: dict) -> dict:
    out = {}
    for key in ("sshd_dropin", "cron.deny", "at.deny", "pam_su"):
        path = Path(paths[key])
        out[key] = (path.read_text(), stat.S_IMODE(path.stat().st_mode), path.stat().st_uid) if path.exists() else None
    return out


def _lock_files(state: dict, students: list[str]) -> list[str]:
    return (oslock._lock_ssh(state) + oslock._lock_jobs("cron", "crontab", students, state)
            + oslock._lock_jobs("at", "at", students, state) + oslock._lock_su(state))


def test_each_change_is_marked_made_once_and_undone_exactly(etc, tmp_path):
    if not any(os.path.exists(f"{d}/pam_succeed_if.so") for d in oslock.PAM_MODULE_DIRS):
        pytest.skip("pam_succeed_if.so is not installed here (oslock leaves su alone then)")
    before = _snapshot(etc)
    state = {"created": []}
    said = _lock_files(state, ["alice", "bob"])
    assert any("DenyGroups dp-course-students" in line for line in said), said
    assert f"DenyGroups {oslock.GROUP}" in Path(etc["sshd_dropin"]).read_text()
    assert Path(etc["cron.deny"]).read_text() == f"{oslock.MARK}\nalice\nbob\n{oslock.END}\n"
    assert Path(etc["at.deny"]).read_text() == f"alias\nbackup\nbin\n{oslock.MARK}\nalice\nbob\n{oslock.END}\n"
    assert stat.S_IMODE(Path(etc["at.deny"]).stat().st_mode) == 0o640
    su = Path(etc["pam_su"]).read_text().splitlines()
    rootok = su.index("auth       sufficient pam_rootok.so")
    assert su[rootok + 1] == oslock.MARK and "pam_succeed_if.so" in su[rootok + 2] \
        and su[rootok + 2].endswith(f"user notingroup {oslock.GROUP}"), su    # right after root's own su
    locked = _snapshot(etc)
    assert _lock_files(state, ["alice", "bob"]) == [] and _snapshot(etc) == locked      # a second run: nothing
    (tmp_path / "ledger").mkdir()
    oslock._save(tmp_path / "ledger", state)
    oslock.unlock(tmp_path / "ledger")
    assert _snapshot(etc) == before, "unlock did not give the files back as they were"


def test_an_absent_service_is_named_and_left_alone(etc):
    for tool in ("sshd", "crontab", "at"):
        os.unlink(etc[tool])
    before = _snapshot(etc)
    said = _lock_files({"created": []}, ["alice"])
    assert "ssh: sshd is not installed: nothing to deny" in said
    assert any(line.startswith("cron:") and "is not installed" in line for line in said), said
    assert any(line.startswith("at:") and "is not installed" in line for line in said), said
    assert {k: v for k, v in _snapshot(etc).items() if k != "pam_su"} == {k: v for k, v in before.items() if k != "pam_su"}


def test_warnings_name_what_provisioning_cannot_fix(etc):
    """sshd_config without the Include, an allow file that lets a student in, a crontab she already has."""
    Path(etc["sshd_config"]).write_text("Port 22\n")
    Path(etc["cron.allow"]).write_text("alice\n")
    (Path(etc["cron_spool"]) / "bob").write_text("* * * * * id\n")
    said = "\n".join(_lock_files({"created": []}, ["alice", "bob"]))
    assert "has no `Include" in said and "does not read" in said
    assert "cron.allow lists alice" in said
    assert "bob already have jobs" in said
