"""The class server's spawner: limits per student, not per process (issue 16).

``CourseSpawner`` is JupyterHub's ``LocalProcessSpawner`` (the server runs as the
student's OS account, setuid from the root hub) with, around each student's server and
everything it starts (kernels, terminals, their children):

- **one cgroup per student** (:class:`autograder.jail.cgroup.Cgroup`, v1 or v2, chosen at run
  time): total memory ``mem_limit`` over all the student's processes, shared memory and
  tmpfs pages included, no swap (the kernel OOM-kills inside the group, the host is
  untouched); at most ``pids_limit`` tasks; a CPU share (``cpu.shares``/``cpu.weight``) equal
  for every student, so 16 busy loops of one student compete with a classmate's single
  task as one group against one group, not as 16 processes against one;
- **a private /tmp and /dev/shm**: the server starts in its own mount namespace
  (``unshare(CLONE_NEWNS)`` in the child, before it drops to the student's uid) with a
  size-capped tmpfs on each (``tmp_limit``, ``shm_limit``; ``nosuid,nodev``), and on every other
  folder that all accounts may write (``shared_folders``: ``/run/lock`` ..., ``lock_limit``);
  classmates cannot see or fill each other's, and their pages count against ``mem_limit`` too;
- **a home disk cap**: the home is a per-student ext4 image of ``home_limit`` bytes
  (sparse, in ``home_images``), created on the first start from the existing home
  (``mkfs.ext4 -d``), loop-mounted ``nosuid,nodev`` over the home while the server runs and
  unmounted when it stops;
- **its own network namespace** (``netns_subnet``): the server and everything it starts live in
  ``dphub-<student>``, a network namespace with its own loopback and ports, joined to the host by a
  veth pair (a /30 of ``netns_subnet``: the host's end ``.1``, the server's ``.2``); the server
  listens on its own address, where the proxy reaches it, and reaches the hub's API at the
  hub's address (``hub_address``: a /32 of the subnet on the host's ``lo``), its only route.
  A student who binds every port binds her own namespace's ports: classmates' servers, the hub
  and the proxy keep theirs (red team: 28,131 of the host's 28,232 ephemeral ports, then no
  classmate's server could start). Nothing on the host's 127.0.0.1 (the Formgrader's port,
  the proxy's API) and no classmate's server is reachable from it, and it has no route out;
- the per-process rlimits of before: ``RLIMIT_AS = mem_limit`` (an allocation beyond it
  fails with ``MemoryError`` in that process) and ``RLIMIT_NPROC`` = ``pids_limit`` per account.

Stopping a server kills every process left in the student's cgroup (a ``nohup`` loop
does not outlive the server) and removes it. Each mechanism that this machine does not
offer (no cgroup hierarchy, no mount namespaces, no loop devices) is logged once as a
warning with the reason and the server starts with what remains; ``enforced`` lists
what holds for a running server. Where systemd is PID 1, jupyterhub_config.py uses
``systemdspawner.SystemdSpawner`` instead (hub/README.md).
"""

from __future__ import annotations

import asyncio
import ctypes
import ipaddress
import os
import pwd
import resource
import stat
import subprocess
import sys
import threading
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Bool, Integer, Unicode

from autograder.jail.cgroup import Cgroup   # the grader's cgroup code (the course's Python has the project installed)

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
#: a student's network namespace is ``dphub-<name>`` (``ip netns``), its host-side veth ``dph<slot>``
NETNS_PREFIX, VETH_PREFIX = "dphub-", "dph"
#: the port every server listens on inside its own namespace (no port is shared, none is chosen)
SERVER_PORT = 8888
_slot_lock = threading.Lock()
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
#: Folders besides /tmp, /var/tmp and /dev/shm that distributions make writable by every account
#: (``/var/lock`` is a link to ``/run/lock``; Ubuntu's ``/var/crash`` is 1777 too). Each that is there gets
#: a private tmpfs of ``lock_limit`` bytes: red team, 1 GiB into the host's ``/run/lock`` in 3 s from a
#: student's kernel, on the root file system where ``/run`` is no tmpfs (no systemd), left after her server.
SHARED_FOLDERS = ("/run/lock", "/var/lock", "/var/crash")


def shared_folders(candidates=SHARED_FOLDERS) -> list[str]:
    """The real paths of the ``candidates`` that are folders every account may write to (once each)."""
    found = []
    for path in candidates:
        real = os.path.realpath(path)
        try:
            mode = os.stat(real).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) and mode & 0o002 and real not in found:
            found.append(real)
    return found


def _private_tmpfs(mounts: list[tuple[str, int]]) -> None:
    """In the child before exec: a new mount namespace with a size-capped tmpfs on each path."""
    libc = ctypes.CDLL(None, use_errno=True)
    # Its own IPC namespace too: System V shared memory is then the server's, charged to it and gone
    # with it (on the host's namespace 1.5 GiB of segments outlived a stopped server; red team).
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS | CLONE_NEWIPC)")
    # nothing mounted here propagates back to the host (or to other students)
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    for path, size in mounts:
        options = f"size={size},mode=1777".encode()
        if libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
            raise OSError(ctypes.get_errno(), f"mount tmpfs {path}")


def _join_netns(fd: int) -> None:
    """In the child before exec: enter the student's network namespace (``fd`` of /run/netns/NAME)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns(CLONE_NEWNET)")


def hub_address(subnet: str) -> tuple[str | None, str]:
    """The hub's address in ``subnet`` (its first host address, on the host's ``lo``), set up now.

    Returns ``(address, "")``, or ``(None, why not)`` when this machine cannot give servers a
    network namespace of their own (no ``ip``, no CAP_NET_ADMIN: an unprivileged container);
    the hub then listens on 127.0.0.1 and the servers share the host's namespace, as before.
    Idempotent (a restarted hub finds the address there).
    """
    net = ipaddress.ip_network(subnet)
    address = str(net[1])
    probe = f"{NETNS_PREFIX}probe-{os.getpid()}"
    error = _run(["ip", "netns", "add", probe])
    if error:
        return None, f"ip netns add: {error}"
    error = _run(["ip", "-n", probe, "link", "set", "lo", "up"])
    _run(["ip", "netns", "del", probe])
    if error:
        return None, f"ip link set lo up in a namespace: {error}"
    shown = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", "lo"], capture_output=True, text=True).stdout
    if f" {address}/" not in shown:
        error = _run(["ip", "addr", "add", f"{address}/32", "dev", "lo"])
        if error:
            return None, f"ip addr add {address}/32 dev lo: {error}"
    return address, ""


def remove_netns(name: str) -> None:
    """Delete a student's namespace and its veth pair (nothing of theirs must run in it any more)."""
    link = subprocess.run(["ip", "-n", name, "-o", "link", "show", "eth0"], capture_output=True, text=True).stdout
    _run(["ip", "netns", "del", name])
    # the veth pair goes with the namespace; its host end by name, should a process still hold it
    index = link.split("@if", 1)[1].split(":", 1)[0] if "@if" in link else ""
    if index.isdigit():
        host = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        for line in host.splitlines():
            if line.startswith(f"{index}: "):
                _run(["ip", "link", "del", line.split(":")[1].strip().split("@")[0]])


def _mount_point(path: Path) -> bool:
    target = os.path.realpath(path)
    with open("/proc/self/mounts") as handle:
        return any(line.split()[1] == target for line in handle)


def _run(cmd: list[str]) -> str:
    """Run a root tool; ``""`` on success, else its error output."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    return "" if done.returncode == 0 else (done.stderr or done.stdout).strip()[-500:] or f"exit {done.returncode}"


#: The text of hub/logwriter.py, run as ``python -c LOG_WRITER LOG MAX MODE``: at most MAX bytes in LOG and
#: in ``LOG.1``, the newest kept. No process that writes a log holds the file itself: red team, a student's
#: kernel inherited her server's log descriptor and wrote 1 GiB into it in 2.5 s, and requests with 15 KB
#: paths from anyone, no login needed, grew the Formgrader's log by 4 MB/s and a classmate's server's by
#: 2.5 MB/s (the files were rotated only when their process started). As text, because the Formgrader runs
#: it as the course account, which cannot read the checkout (0700).
LOG_WRITER = (Path(__file__).resolve().parent / "logwriter.py").read_text(encoding="utf-8")


def logged_command(command: list[str], log: Path | str, max_bytes: int = 10 * 2**20,
                   python: str = sys.executable) -> list[str]:
    """``command`` with its output going to ``log`` through a :data:`LOG_WRITER` run by ``python``.

    For the hub's services (the Formgrader, the idle culler), which JupyterHub starts with the hub's
    own output; ``exec`` leaves the command itself as the process the hub signals. At most
    ``max_bytes`` in ``log`` and as many in ``<log>.1``. ``python`` must be one the service's account
    can run (the course's: the checkout is 0700).
    """
    script = f'exec "${{@:4}}" > >(exec "$2" -c "$3" "$1" {int(max_bytes)} 600) 2>&1'
    return ["/bin/bash", "-c", script, "dp-course-service", str(log), str(python), LOG_WRITER, *command]


class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner with per-student cgroup, private /tmp and /dev/shm, home disk cap."""

    pids_limit = Integer(512, config=True, help="tasks per student (cgroup pids.max) and RLIMIT_NPROC")
    cpu_weight = Integer(100, config=True, help="CPU share of each student's cgroup (100 = equal shares)")
    tmp_limit = Integer(512 * 2**20, config=True, help="bytes of the private /tmp (0: the host's /tmp)")
    private_var_tmp = Bool(True, config=True, help="a private /var/tmp of tmp_limit bytes too (the host's is "
                           "shared and uncapped); off when the course folders live under /var/tmp")
    shm_limit = Integer(256 * 2**20, config=True, help="bytes of the private /dev/shm (0: the host's)")
    lock_limit = Integer(8 * 2**20, config=True, help="bytes of a private tmpfs on each of shared_folders() "
                         "(/run/lock ...; 0: the host's, shared and, without systemd, on its disk)")
    home_limit = Integer(2 * 2**30, config=True, help="bytes of the home image (0: no disk cap)")
    home_images = Unicode("", config=True, help="folder of the per-student home images (root only)")
    netns_subnet = Unicode("", config=True, help="IPv4 subnet of the servers' own network namespaces (one /30 "
                           "each; the hub listens on its first address, see hub_address); empty: the host's")
    log_dir = Unicode("", config=True, help="folder of one log file per server (<name>.log, root's, 0600); "
                      "empty: servers write to the hub's own output")
    log_max_bytes = Integer(10 * 2**20, config=True, help="a server's log past this size at its start is kept "
                            "as <name>.log.1 (one generation) and begun anew")

    _warned: set[str] = set()
    _namespaces_work: bool | None = None

    def _warn_once(self, key: str, message: str) -> None:
        if key not in CourseSpawner._warned:
            CourseSpawner._warned.add(key)
            self.log.warning("CourseSpawner: %s", message)

    def user_env(self, env: dict) -> dict:
        """The server's environment: a student's login shell is nologin (hub/oslock.py), her terminal's bash."""
        env = super().user_env(env)
        env["SHELL"] = "/bin/bash"
        return env

    # --- what this machine offers (probed once, in a throwaway child)
    def _namespaces_available(self) -> bool:
        if CourseSpawner._namespaces_work is None:
            error = _run(["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs",
                          "-o", "size=1m", "tmpfs", "/tmp"])
            CourseSpawner._namespaces_work = not error
            if error:
                self._warn_once("ns", f"no private /tmp and /dev/shm (mount namespace: {error})")
        return CourseSpawner._namespaces_work

    # --- home image
    def _home(self) -> pwd.struct_passwd:
        return pwd.getpwnam(self.user.name)

    def _mount_home(self) -> str | None:
        """Loop-mount the student's home image over the home; why not, or None."""
        if not (self.home_limit and self.home_images):
            return "home_limit or home_images not set"
        user = self._home()
        home = Path(user.pw_dir)
        if _mount_point(home):
            return None
        images = Path(self.home_images)
        images.mkdir(mode=0o700, parents=True, exist_ok=True)
        image = images / f"{self.user.name}.img"
        if not image.exists():
            partial = image.with_suffix(".new")
            with open(partial, "wb") as handle:
                handle.truncate(self.home_limit)      # sparse: costs what is written
            partial.chmod(0o600)
            # -d: the image starts as a copy of the home as provisioned (~/course, dotfiles)
            error = _run(["mkfs.ext4", "-q", "-F", "-m", "0", "-d", str(home),
                          "-E", f"root_owner={user.pw_uid}:{user.pw_gid}", str(partial)])
            if error:
                partial.unlink(missing_ok=True)
                return f"mkfs.ext4: {error}"
            partial.rename(image)
        error = _run(["mount", "-o", "loop,nosuid,nodev", str(image), str(home)])
        if error:
            return f"mount -o loop: {error}"
        os.chown(home, user.pw_uid, user.pw_gid)
        home.chmod(0o700)
        return None

    def _unmount_home(self) -> None:
        if not (self.home_limit and self.home_images):
            return
        home = Path(self._home().pw_dir)
        if _mount_point(home) and _run(["umount", str(home)]):
            _run(["umount", "--lazy", str(home)])     # still busy: detach now, free when closed

    # --- network namespace
    def _netns_name(self) -> str:
        return f"{NETNS_PREFIX}{self.user.name}"

    def _make_netns(self) -> str | None:
        """The student's own network namespace, joined to the host by a veth pair; why not, or None."""
        net = ipaddress.ip_network(self.netns_subnet)
        hub = net[1]
        name = self._netns_name()
        remove_netns(name)            # a namespace left by a server that died with the machine's hub
        error = _run(["ip", "netns", "add", name])
        if error:
            return f"ip netns add: {error}"
        slots = net.num_addresses // 4 - 1          # slot 0 holds the hub's address
        with _slot_lock:
            links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
            taken = {line.split(":")[1].strip().split("@")[0] for line in links.splitlines()}
            first = pwd.getpwnam(self.user.name).pw_uid % slots    # the same slot each time, mostly
            free = (1 + (first + i) % slots for i in range(slots))
            slot = next((k for k in free if f"{VETH_PREFIX}{k}" not in taken), None)
            if slot is None:
                _run(["ip", "netns", "del", name])
                return f"no free /30 left in {net}"
            host_if, host_ip, own_ip = f"{VETH_PREFIX}{slot}", net[4 * slot + 1], net[4 * slot + 2]
            steps = [["ip", "link", "add", host_if, "type", "veth", "peer", "name", "eth0", "netns", name]]
            steps += [["ip", "addr", "add", f"{host_ip}/30", "dev", host_if],
                      ["ip", "link", "set", host_if, "up"],
                      ["ip", "-n", name, "addr", "add", f"{own_ip}/30", "dev", "eth0"],
                      ["ip", "-n", name, "link", "set", "eth0", "up"],
                      ["ip", "-n", name, "link", "set", "lo", "up"],
                      ["ip", "-n", name, "route", "add", f"{hub}/32", "via", str(host_ip)]]
            for cmd in steps:
                error = _run(cmd)
                if error:
                    remove_netns(name)
                    return f"{' '.join(cmd)}: {error}"
        self.ip, self.port = str(own_ip), SERVER_PORT
        self.netns = name
        return None

    # --- start / stop
    async def start(self):
        loop = asyncio.get_running_loop()
        self.enforced = [f"RLIMIT_AS {self.mem_limit}", f"RLIMIT_NPROC {self.pids_limit}"]
        self.cgroup, how = None, ""
        if self.mem_limit:
            self.cgroup, how = Cgroup.create(int(self.mem_limit), self.pids_limit, prefix=f"dphub-{self.user.name}",
                                             cpu_weight=self.cpu_weight or None)
        if self.cgroup is None:
            self._warn_once("cgroup", f"no per-student cgroup ({how}): memory and CPU limits are per process only")
        else:
            self.enforced.append(how)
        self.tmpfs = []
        if (self.tmp_limit or self.shm_limit) and await loop.run_in_executor(None, self._namespaces_available):
            var_tmp = self.tmp_limit if self.private_var_tmp else 0
            self.tmpfs = [(p, s) for p, s in (("/tmp", self.tmp_limit), ("/var/tmp", var_tmp),
                                              ("/dev/shm", self.shm_limit)) if s]
            self.tmpfs += [(p, self.lock_limit) for p in shared_folders() if self.lock_limit]
            self.enforced += [f"private {p} tmpfs size={s}" for p, s in self.tmpfs]
        self.netns = None
        if self.netns_subnet:
            why_not = await loop.run_in_executor(None, self._make_netns)
            if why_not:
                self._warn_once("netns", f"no network namespace per server ({why_not}): students share the "
                                         "host's ports")
                self.ip, self.port = "127.0.0.1", 0
            else:
                self.enforced.append(f"network namespace {self.netns} ({self.ip}:{self.port})")
        why_not = await loop.run_in_executor(None, self._mount_home)
        if why_not:
            self._warn_once("home", f"no home disk cap ({why_not})")
        else:
            self.enforced.append(f"home image {self.home_limit} bytes")
        self.log.info("CourseSpawner %s: %s", self.user.name, "; ".join(self.enforced))
        log_fd, base_kwargs = self._open_log(), self.popen_kwargs
        if log_fd is not None:
            # The server writes to its own log, not to the hub's output: it outlives a restart of the
            # hub (cleanup_servers = False), whose output then goes nowhere or to an old terminal.
            self.popen_kwargs = dict(base_kwargs, stdout=log_fd, stderr=log_fd)
        try:
            return await super().start()
        except BaseException:
            await loop.run_in_executor(None, self._cleanup)
            raise
        finally:
            self.popen_kwargs = base_kwargs
            if log_fd is not None:
                os.close(log_fd)
            if getattr(self, "_netns_fd", None) is not None:
                os.close(self._netns_fd)
                self._netns_fd = None

    def _open_log(self) -> int | None:
        """What the server writes its output to (the caller closes it); None without ``log_dir``.

        A pipe to a :data:`LOG_WRITER` of ``<log_dir>/<name>.log`` (root's, 0600; at most
        ``log_max_bytes`` there and in ``.1``), never the file: every kernel and terminal of the server
        inherits the descriptor. The writer runs as root in the student's cgroup (its memory and CPU are
        hers, it goes when her group is removed, she cannot signal it) and in a session of its own (it
        outlives a restart of the hub, as the server does).
        """
        if not self.log_dir:
            return None
        folder = Path(self.log_dir)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{self.user.name}.log"
        group = getattr(self, "cgroup", None)
        read, write = os.pipe()
        try:
            subprocess.Popen([sys.executable, "-c", LOG_WRITER, str(path), str(int(self.log_max_bytes)), "600"],
                             stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True,
                             start_new_session=True, preexec_fn=group.join if group is not None else None)
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        return write

    async def stop(self, now=False):
        await super().stop(now=now)
        await asyncio.get_running_loop().run_in_executor(None, self._cleanup)

    # --- across a restart of the hub (cleanup_servers = False): what stopping the server needs
    def get_state(self):
        state = super().get_state()
        group = getattr(self, "cgroup", None)
        if group is not None:
            state["cgroup"] = {"dirs": [str(d) for d in group.dirs], "version": group.version,
                               "where": {k: str(v) for k, v in group.where.items()}}
        if getattr(self, "netns", None):
            state["netns"] = self.netns
        return state

    def load_state(self, state):
        super().load_state(state)
        if "cgroup" in state:
            saved = state["cgroup"]
            self.cgroup = Cgroup([Path(d) for d in saved["dirs"]], saved["version"],
                                 {k: Path(v) for k, v in saved["where"].items()})
        self.netns = state.get("netns")

    def _cleanup(self) -> None:
        group = getattr(self, "cgroup", None)
        if group is not None:
            group.remove()           # kills what the server left behind, then removes the group
            self.cgroup = None
        if getattr(self, "netns", None):
            remove_netns(self.netns)
            self.netns = None
        self._unmount_home()

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)
        limit = int(self.mem_limit) if self.mem_limit else None
        nproc, group, tmpfs = self.pids_limit, getattr(self, "cgroup", None), list(getattr(self, "tmpfs", []))
        netns = getattr(self, "netns", None)
        # opened here (the hub's process), joined in the child; closed by Popen's close_fds after exec
        netns_fd = os.open(f"/run/netns/{netns}", os.O_RDONLY | os.O_CLOEXEC) if netns else None
        self._netns_fd = netns_fd

        def preexec():
            # everything as root, before the uid changes: the student cannot undo any of it
            if netns_fd is not None:
                _join_netns(netns_fd)
            if group is not None:
                group.join()
            if tmpfs:
                _private_tmpfs(tmpfs)
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            os.nice(5)
            become_user()

        return preexec
