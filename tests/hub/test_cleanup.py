"""Hub tests leave the machine as they found it (issue 26).

A hub test session that was killed (SIGKILL: no finalizer ran) leaves its class behind: an OS
account, its home under a mounted image, a server still running in its cgroup and network
namespace, another process of the account, the class folder. The next session's ``sweep``
(``tests/support/hubserver.py``, run before it provisions) must remove all of it, and only a dead session's.
The same ``teardown`` ends every session (Ctrl-C and failures included).

Needs root; skipped with the reason otherwise (CI runs as root).
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.hubserver import LEDGER, skip_reason, sweep

pytestmark = [pytest.mark.xdist_group("hub")]


def test_sweep_removes_a_killed_sessions_class():
    reason = skip_reason("useradd", "userdel", "ip", "mkfs.ext4")
    if reason:
        pytest.skip(reason)
    from spawner import NETNS_PREFIX      # hub/ (on the tests' pythonpath)

    from autograder.jail.cgroup import Cgroup

    account = "dpx-leftover"
    srv = Path(tempfile.mkdtemp(prefix="dp-hub-", dir="/var/tmp"))
    roster = srv.parent / f"{srv.name}-roster.csv"
    roster.write_text(f"id,name,role\n{account},Left Over,student\n", encoding="utf-8")
    dead = subprocess.Popen(["true"])
    dead.wait()
    (srv / LEDGER).write_text(json.dumps({"pid": dead.pid, "accounts": [account], "hub_address_was_there": True}))
    netns = f"{NETNS_PREFIX}{account}"
    group = None
    try:
        subprocess.run(["useradd", "--create-home", account], check=True, capture_output=True)
        home = Path(pwd.getpwnam(account).pw_dir)
        image = srv / "homes" / f"{account}.img"
        image.parent.mkdir()
        subprocess.run(["truncate", "-s", "32M", str(image)], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
        subprocess.run(["mount", "-o", "loop", str(image), str(home)], check=True)
        subprocess.run(["ip", "netns", "add", netns], check=True)
        group, how = Cgroup.create(64 * 2**20, 16, prefix=f"dphub-{account}")
        assert group is not None, how
        # "her server": in its cgroup and namespace, as her; and a process of hers outside it
        server = subprocess.Popen(["ip", "netns", "exec", netns, "runuser", "-u", account, "--", "sleep", "600"],
                                  preexec_fn=group.join)
        stray = subprocess.Popen(["runuser", "-u", account, "--", "sleep", "600"])
        time.sleep(0.5)
        assert group.pids() and os.path.ismount(home)

        swept = sweep()

        print(swept)
        assert server.wait(timeout=10) != 0 and stray.wait(timeout=10) != 0
        assert not Path(group.dirs[0]).exists(), "the server's cgroup is still there"
        netns_left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert netns not in netns_left, netns_left
        mounts = Path("/proc/self/mounts").read_text()
        assert f" {home} " not in mounts, "the home image is still mounted"
        with pytest.raises(KeyError):
            pwd.getpwnam(account)
        assert not home.exists() and not srv.exists() and not roster.exists()
    finally:   # whatever the sweep missed
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
        if group is not None:
            group.remove()
        subprocess.run(["umount", "--lazy", str(Path("/home") / account)], capture_output=True)
        subprocess.run(["userdel", "--remove", "--force", account], capture_output=True)
        subprocess.run(["rm", "-rf", str(srv), str(roster)])


def test_a_live_sessions_class_is_not_swept():
    if os.geteuid() != 0:
        pytest.skip("needs root")
    srv = Path(tempfile.mkdtemp(prefix="dp-hub-", dir="/var/tmp"))
    try:
        (srv / LEDGER).write_text(json.dumps({"pid": os.getpid(), "accounts": [], "hub_address_was_there": True}))
        sweep()
        assert (srv / LEDGER).exists()
    finally:
        subprocess.run(["rm", "-rf", str(srv)])
