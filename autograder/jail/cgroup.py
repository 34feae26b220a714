"""Cgroups of the sandboxes (v2, or v1 memory + pids + cpu + cpuacct), also used by the class server.

:class:`Cgroup` caps one sandbox (or, in ``hub/spawner.py``, one student's server); :class:`CpuShare`
is the group the sandboxes of one submission share. Only the standard library: the hub imports it.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

def _mounts() -> list[tuple[str, str, set[str]]]:
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[2], parts[1], set(parts[3].split(","))))
    return found


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path in the hierarchy of ``controller`` ("" = cgroup v2); for a grading
    worker in its own group (:func:`worker_group`), its grader's: the worker's sandboxes' groups are
    made beside the worker's, never inside it (v1 would count them in the worker's memory)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                head, _, last = path.rstrip("/").rpartition("/")
                if last.startswith(GROUP_PREFIX) and last.endswith(WORKER_SUFFIX):
                    return head or "/"
                return path
    except (OSError, ValueError):
        pass
    return "/"


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


#: CPU weight of every sandbox (v1 ``cpu.shares``, v2 ``cpu.weight``; the kernels' defaults): all
#: sandboxes are siblings with equal weights, so a submission that runs 62 busy children gets one
#: sandbox's share of the CPU, not 62 processes' worth, and a classmate graded beside it keeps its own.
CPU_SHARES, CPU_WEIGHT = 1024, 100
#: CPU bandwidth of one submission (its :class:`CpuShare`, or its one sandbox's group): one core.
#: Weights share the CPU only among runnable groups; on a quiet machine a hog with 62 spinning
#: children would otherwise take every core the trusted workers and classmates leave idle for a
#: moment, and the honest submissions' own pipeline (worker, then sandbox) waits behind it.
CPU_PERIOD_US = 100_000
#: Name of every group this module makes: ``autograder-<pid of the grading process>-<ns>``; the pid
#: tells :func:`sweep_stale` whether its owner is gone.
GROUP_PREFIX = "autograder-"
#: End of the name of a trusted grading worker's group (:func:`worker_group`).
WORKER_SUFFIX = "-worker"
#: Tasks (processes and threads) of one grading worker: the interpreter, its libraries' threads
#: (OpenBLAS starts one per core) and its sandboxes' first processes until they join their groups.
WORKER_PIDS = 1024


class Cgroup:
    """A cgroup (v2, or v1 memory + pids + cpu + cpuacct) holding one sandbox.

    Memory without swap and pids are capped, the CPU is shared fairly between sandboxes (equal
    weights), and the CPU time of everything in the group is read back (:meth:`cpu_seconds`: the
    submission's time limits count its own CPU, not the time its neighbours take from it).
    v1 memory cgroups charge shmem/tmpfs pages to the group of the task that touches them and,
    on kernels >= 4.6 without ``cgroup.memory=nokmem``, kernel memory (inodes, dentries) to
    ``memory.usage_in_bytes`` too, so one limit covers heap, SysV shm, memfd, the tmpfs and
    its inodes. v1 groups are made inside the grader's own group (its limits keep applying);
    v2 ones under the root of the hierarchy (a v2 group with processes cannot delegate
    controllers to children). Without the cpu controller the group is made anyway (no fair
    share; :attr:`how` says so); without cpuacct, time limits fall back to wall-clock time.
    """

    def __init__(self, dirs: list[Path], version: int, where: dict[str, Path] | None = None):
        self.dirs, self.version = dirs, version
        #: controller -> its folder of this group (v2: the one folder).
        self.where = where or {"memory": dirs[0]}

    @classmethod
    def create(cls, memory_bytes: int, pids: int, share: "CpuShare | None" = None, *,
               prefix: str = GROUP_PREFIX.rstrip("-"), cpu_weight: int = CPU_WEIGHT,
               name: str | None = None) -> tuple["Cgroup | None", str]:
        """The cgroup, or ``None`` and why not (never raises).

        ``share``: the submission's :class:`CpuShare`; the group's CPU weight is then taken from
        the submission's (its two sandboxes split one sandbox's share, never take two).
        ``prefix`` names the group (``<prefix>-<pid>-<ns>``; the class server uses one per
        student); ``cpu_weight`` (1-10000, 100 = one ordinary group's share: v1 ``cpu.shares``
        = weight x 1024 / 100, v2 ``cpu.weight``) is the share of all its processes together.
        ``name``: the group's whole name instead (:func:`worker_group`).
        """
        name = name or f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
        cpu_weight = cpu_weight or CPU_WEIGHT
        mounts = _mounts()
        v1 = {c: m for kind, m, opts in mounts if kind == "cgroup" and "rw" in opts
              for c in ("memory", "pids", "cpu", "cpuacct") if c in opts}
        v2 = [m for kind, m, opts in mounts if kind == "cgroup2" and "rw" in opts]
        errors = []
        if "memory" in v1 and "pids" in v1:
            where = {c: Path(v1[c] + _own_cgroup(c).rstrip("/")) / name for c in v1}
            if share is not None and share.version == 1:
                for c in where:
                    if v1[c] == share.mount:  # the cpu hierarchy (and what is mounted with it)
                        where[c] = share.dirs[0] / name
            dirs = list(dict.fromkeys(where[c] for c in ("memory", "pids", "cpu", "cpuacct") if c in where))
            group = cls(dirs, 1, where)
            try:
                for d in dirs:
                    d.mkdir()
                mem = where["memory"]
                _write(mem / "memory.limit_in_bytes", str(memory_bytes))
                if (mem / "memory.memsw.limit_in_bytes").exists():  # no swap either
                    _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
                else:
                    _write(mem / "memory.swappiness", "0")
                _write(where["pids"] / "pids.max", str(pids))
                cpu = "no cpu controller: no fair share"
                if "cpu" in where:
                    _write(where["cpu"] / "cpu.shares", str(max(2, cpu_weight * CPU_SHARES // CPU_WEIGHT)))
                    cpu = "cpu.shares"
                    if share is None:
                        _one_core(where["cpu"], 1)
                return group, f"cgroup v1 (memory.limit_in_bytes, memory.memsw.limit_in_bytes, pids.max, {cpu})"
            except OSError as exc:
                group.remove()
                errors.append(f"cgroup v1: {exc.strerror or exc}")
        for mount in v2:
            root = Path(mount)
            try:
                available = set((root / "cgroup.controllers").read_text().split())
                if not {"memory", "pids"} <= available:
                    errors.append("cgroup v2 without the memory and pids controllers")
                    continue
                parent = root / prefix.split("-")[0]
                parent.mkdir(exist_ok=True)
                wanted = "+memory +pids" + (" +cpu" if "cpu" in available else "")
                for folder in (root, parent):
                    try:
                        _write(folder / "cgroup.subtree_control", wanted)
                    except OSError:  # e.g. cpu refused (real-time tasks in the root): without it
                        _write(folder / "cgroup.subtree_control", "+memory +pids")
            except OSError as exc:
                errors.append(f"cgroup v2: {exc.strerror or exc}")
                continue
            d = (share.dirs[0] if share is not None and share.version == 2 else parent) / name
            group = cls([d], 2, {c: d for c in ("memory", "pids", "cpu", "cpuacct")})
            try:
                d.mkdir()
                _write(d / "memory.max", str(memory_bytes))
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", "0")
                _write(d / "pids.max", str(pids))
                cpu = "no cpu controller: no fair share"
                try:
                    _write(d / "cpu.weight", str(cpu_weight))
                    cpu = "cpu.weight"
                    if share is None:
                        _one_core(d, 2)
                except OSError:
                    pass
                return group, f"cgroup v2 (memory.max, memory.swap.max = 0, pids.max, {cpu})"
            except OSError as exc:
                group.remove()
                errors.append(f"cgroup v2: {exc.strerror or exc}")
        return None, "; ".join(errors) or "no cgroup hierarchy with memory and pids controllers"

    def join(self) -> None:
        """Move the calling process in (run in the child before exec: nothing runs outside)."""
        for d in self.dirs:
            _write(d / "cgroup.procs", str(os.getpid()))

    def pids(self) -> list[int]:
        return _group_pids(self.dirs)

    def _stat(self, names: tuple[str, ...], key: str | None = None, controller: str = "memory") -> int | None:
        folder = self.where.get(controller)
        if folder is None:
            return None
        for n in names:
            try:  # os.open/os.read, not Path.read_text: read at every exchange with the sandbox (3x cheaper)
                fd = os.open(f"{folder}/{n}", os.O_RDONLY)
                try:
                    text = os.read(fd, 1 << 16).decode("ascii", "replace")
                finally:
                    os.close(fd)
            except OSError:
                continue
            if key is None:
                return int(text.split()[0])
            for line in text.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
        return None

    def usage(self) -> int | None:
        """Memory charged to the group now, in bytes (``None`` when the kernel does not say)."""
        return self._stat(("memory.usage_in_bytes", "memory.current"))

    def set_memory(self, memory_bytes: int) -> None:
        """Change the group's memory cap (no swap either); ``OSError`` when the kernel refuses."""
        mem = self.where["memory"]
        if self.version == 2:
            _write(mem / "memory.max", str(memory_bytes))
            return
        files = ["memory.limit_in_bytes"]
        if (mem / "memory.memsw.limit_in_bytes").exists():
            files.append("memory.memsw.limit_in_bytes")  # never below memory.limit_in_bytes
        try:
            for f in files:  # lowering: the memory first
                _write(mem / f, str(memory_bytes))
        except OSError:
            for f in reversed(files):  # raising: memory + swap first
                _write(mem / f, str(memory_bytes))

    def peak(self) -> int | None:
        """Highest memory charged to the group, in bytes (``None`` when the kernel does not say)."""
        return self._stat(("memory.max_usage_in_bytes", "memory.peak"))

    def oom_kills(self) -> int:
        return self._stat(("memory.events",) if self.version == 2 else ("memory.oom_control",), "oom_kill") or 0

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) used so far by every process ever in the group; ``None`` if unknown."""
        if self.version == 2:
            usec = self._stat(("cpu.stat",), "usage_usec", "cpu")
            return None if usec is None else usec / 1e6
        ns = self._stat(("cpuacct.usage",), None, "cpuacct")
        return None if ns is None else ns / 1e9

    def remove(self) -> None:
        """Kill every process in the group, then remove it."""
        _remove_group(self.dirs)


def worker_group(memory_bytes: int) -> tuple["Cgroup | None", str]:
    """The group of one trusted grading worker, or ``None`` and why not (never raises).

    As a sandbox's (:meth:`Cgroup.create`): ``memory_bytes`` without swap, :data:`WORKER_PIDS`
    tasks, one ordinary group's CPU weight and at most one core, so that a parser surprise or a
    check gone wrong costs one row, not the machine, and one busy worker cannot starve the
    others. Named ``autograder-<grader pid>-<ns>-worker``: swept with the sandboxes' groups when
    the grader was killed; made in the grader's own group (v1) or under ``<root>/autograder/``
    (v2), where the worker's sandboxes' groups are made too, beside it (:func:`_own_cgroup`).
    """
    name = f"{GROUP_PREFIX}{os.getpid()}-{time.monotonic_ns()}{WORKER_SUFFIX}"
    return Cgroup.create(memory_bytes, WORKER_PIDS, name=name)


class CpuShare:
    """One submission's CPU share: a cgroup (cpu controller) holding its sandboxes' groups.

    The visible tests' and the hidden tests' sandboxes of a submission live beside each other;
    as siblings they would get two shares, so a hog would take two classmates' worth of CPU.
    Nested in this group they split one (:data:`CPU_SHARES` / :data:`CPU_WEIGHT`).
    """

    def __init__(self, folder: Path, version: int, mount: str):
        self.dirs, self.version, self.mount = [folder], version, mount

    @classmethod
    def create(cls) -> "CpuShare | None":
        """The group, or ``None`` where the cpu controller cannot be used (sandboxes are then siblings)."""
        name = f"{GROUP_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
        for kind, mount, opts in _mounts():
            if "rw" not in opts or not (kind == "cgroup2" or "cpu" in opts):
                continue
            share = None
            try:
                if kind == "cgroup":
                    folder = Path(mount + _own_cgroup("cpu").rstrip("/")) / name
                    folder.mkdir()
                    share = cls(folder, 1, mount)
                    _write(folder / "cpu.shares", str(CPU_SHARES))
                    _one_core(folder, 1)
                    _LIVE_SHARES.add(share)
                    return share
                root = Path(mount)
                if "cpu" not in (root / "cgroup.controllers").read_text().split():
                    continue
                (root / "autograder").mkdir(exist_ok=True)
                for parent in (root, root / "autograder"):
                    _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
                folder = root / "autograder" / name
                folder.mkdir()
                share = cls(folder, 2, mount)
                _write(folder / "cpu.weight", str(CPU_WEIGHT))
                _one_core(folder, 2)
                _write(folder / "cgroup.subtree_control", "+memory +pids +cpu")
                _LIVE_SHARES.add(share)
                return share
            except OSError:
                if share is not None:
                    share.remove()
                return None
        return None

    def remove(self) -> None:
        _remove_group(self.dirs)
        _LIVE_SHARES.discard(self)


def _one_core(folder: Path, version: int) -> None:
    """Cap the group at one core (:data:`CPU_PERIOD_US` of CPU per period); kernels without CFS
    bandwidth control keep the weight alone."""
    try:
        if version == 1:
            _write(folder / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(folder / "cpu.cfs_quota_us", str(CPU_PERIOD_US))
        else:
            _write(folder / "cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}")
    except OSError:
        pass


#: CpuShares of this process not yet removed (:func:`stop_all`).
_LIVE_SHARES: set = set()


def _group_pids(dirs) -> list[int]:
    found = set()
    for d in dirs:
        try:
            found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        except (OSError, ValueError):
            pass
    return sorted(found)


def _remove_group(dirs: list[Path]) -> None:
    for d in dirs:  # a submission's CpuShare holds its sandboxes' groups: those first
        try:
            inner = [d / e.name for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
        except OSError:
            inner = []
        for sub in inner:
            _remove_group([sub])
    kill_file = dirs[0] / "cgroup.kill"
    for attempt in range(200):
        pids = _group_pids(dirs)
        if not pids:
            break
        if kill_file.exists():
            try:
                _write(kill_file, "1")
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005 if attempt < 20 else 0.05)
    for d in dirs:
        for attempt in range(100):
            try:
                d.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)
