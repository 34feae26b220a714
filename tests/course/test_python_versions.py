"""Which (Python, platform) pairs the student's pins install on (issue 33): README says 3.11–3.13.

For each supported Python (3.11, 3.12, 3.13) and each student platform (Windows x86_64, macOS on
Apple silicon and on Intel, Linux x86_64 with glibc 2.35 as on Ubuntu 22.04) pip downloads the
pinned wheels of ``requirements-student.txt`` for that target (``pip download --only-binary=:all:
--python-version X --platform P --no-deps``): a pin without a wheel there fails here, not on a
student's laptop. Python 3.10 fails (numpy 2.4.6 and nbgrader 0.9.6 need 3.11): the test shows
the launcher's minimum is the pins' own.

pip evaluates environment markers for the machine it runs on, never for ``--platform``, so
``--no-deps`` is the honest form for the pins. Their dependencies are checked for Windows, where
they differ most (``pywinpty``, ``colorama``, ``tzdata``...), by :func:`closure`: it reads each
downloaded wheel's ``Requires-Dist`` with the target's markers and downloads what they ask for
until nothing is missing, and fails when a dependency has no wheel for the target or two
requirements disagree. Packages published only as source (``fontmeta``, pure Python: pip builds it
on the student's machine) are listed in :data:`SOURCE_ONLY` and not followed.

Cost (this machine, pip's cache warm, 2026-11-29): 2-7 s per pair for the pins (17 wheels, ~90 MB;
about 45 s for the twelve pairs; ten of them here, the closure below covers the other two), 12-18 s per Python for the Windows closure (115 wheels), run
for the oldest and the newest supported Python only; mostly waiting on the index (28 s of CPU
for all of it). Needs the package index and nothing else.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements-student.txt"
PYTHONS = ("3.11", "3.12", "3.13")
#: pip takes platform tags literally except macOS ones (which it expands to older versions):
#: a Linux machine with glibc 2.35 accepts every manylinux tag up to 2.35.
LINUX = [f"manylinux_2_{minor}_x86_64" for minor in range(35, 16, -1)] + ["manylinux2014_x86_64",
                                                                         "manylinux2010_x86_64",
                                                                         "manylinux1_x86_64"]
PLATFORMS = {"win_amd64": ["win_amd64"], "macos-arm64": ["macosx_14_0_arm64"],
             "macos-x86_64": ["macosx_13_0_x86_64"], "linux-x86_64": LINUX}
#: Dependencies published only as source distributions (pure Python): pip builds them on the
#: student's machine; not followed by the closure.
SOURCE_ONLY = {"fontmeta"}
WINDOWS_MARKERS = {"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows",
                   "platform_machine": "AMD64", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "platform_release": "10",
                   "platform_version": "10.0.19045"}


def pip_download(python: str, platforms: list[str], requirements: list[str], dest: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
               "--only-binary=:all:", "--no-deps", "--python-version", python, "--dest", str(dest)]
    for platform in platforms:
        command += ["--platform", platform]
    return subprocess.run(command + requirements, capture_output=True, text=True, timeout=600)


def _pins() -> list[str]:
    return [line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines()
            if line.split("#")[0].strip()]


#: The pairs that :func:`test_every_dependency_has_a_wheel_on_windows` already covers: its first
#: round is this same download of every pin (``--no-deps``), and it fails when a pin got no wheel.
CLOSURE_PAIRS = {("3.11", "win_amd64"), ("3.13", "win_amd64")}


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize(("python", "platform"), [(python, platform) for platform in sorted(PLATFORMS)
                                                  for python in PYTHONS
                                                  if (python, platform) not in CLOSURE_PAIRS])
def test_the_pins_have_wheels_for_each_supported_python_and_platform(python, platform, tmp_path):
    done = pip_download(python, PLATFORMS[platform], _pins(), tmp_path)
    assert done.returncode == 0, f"Python {python} on {platform}:\n{done.stderr[-2000:]}"
    got = {canonicalize_name(parse_wheel_filename(p.name)[0]) for p in tmp_path.glob("*.whl")}
    assert got == {canonicalize_name(Requirement(pin).name) for pin in _pins()}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_python_3_10_cannot_install_the_pins(tmp_path):
    """The launcher's minimum is the pins' own: on 3.10, numpy 2.4.6 has no wheel (and nbgrader refuses)."""
    done = pip_download("3.10", ["win_amd64"], ["numpy==2.4.6"], tmp_path)
    assert done.returncode != 0 and "numpy==2.4.6" in done.stderr


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))
        metadata = Parser().parsestr(archive.read(name).decode("utf-8"))
    return metadata.get_all("Requires-Dist") or []


def closure(python: str, platforms: list[str], markers: dict[str, str], dest: Path) -> dict[str, str]:
    """Name -> version of every wheel the pins need on the target (markers evaluated for it).

    Fails (AssertionError) when a requirement has no wheel there, or when a version picked earlier
    does not satisfy a requirement found later (a real resolver might backtrack; this says so).
    """
    env = dict(markers, python_version=python, python_full_version=f"{python}.0")
    wanted: dict[str, SpecifierSet] = {}
    extras: dict[str, set[str]] = {}
    picked: dict[str, tuple[str, Path]] = {}
    todo = [Requirement(pin) for pin in _pins()]
    while todo:
        batch = {}
        for req in todo:
            name = canonicalize_name(req.name)
            wanted[name] = wanted.get(name, SpecifierSet()) & req.specifier
            extras.setdefault(name, set()).update(req.extras)
            if name in SOURCE_ONLY:
                continue
            if name in picked:
                assert wanted[name].contains(picked[name][0], prereleases=True), \
                    f"{name} {picked[name][0]} was picked, a later requirement wants {wanted[name]}"
                if req.extras:
                    batch[name] = picked[name][1]          # follow the new extras of a wheel we have
                continue
            batch[name] = None
        fetch = [f"{name}{wanted[name]}" for name, wheel in batch.items() if wheel is None]
        if fetch:
            done = pip_download(python, platforms, fetch, dest)
            assert done.returncode == 0, f"Python {python}, {platforms[0]}: no wheel for one of {fetch}:\n" \
                                         + done.stderr[-1500:]
        for wheel in dest.glob("*.whl"):
            name, version, _, _ = parse_wheel_filename(wheel.name)
            if name in batch and batch[name] is None and wanted[name].contains(str(version), prereleases=True):
                picked[name] = (str(version), wheel)
                batch[name] = wheel
        missing = [name for name, wheel in batch.items() if wheel is None]
        assert not missing, f"pip downloaded no matching wheel for {missing}"
        todo = []
        for name, wheel in batch.items():
            for line in _requires(wheel):
                req = Requirement(line)
                if req.marker is None or any(req.marker.evaluate(dict(env, extra=extra))
                                             for extra in ("", *extras.get(name, ()))):
                    todo.append(req)
    return {name: version for name, (version, _) in picked.items()}


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("python", [PYTHONS[0], PYTHONS[-1]])
def test_every_dependency_has_a_wheel_on_windows(python, tmp_path):
    """...and, for these two Pythons, the pins themselves on Windows (``CLOSURE_PAIRS``)."""
    assert (python, "win_amd64") in CLOSURE_PAIRS
    found = closure(python, PLATFORMS["win_amd64"], WINDOWS_MARKERS, tmp_path)
    assert {canonicalize_name(Requirement(pin).name) for pin in _pins()} <= set(found) | SOURCE_ONLY
    # Windows' own dependencies were followed (terminado and jupyter_server need pywinpty there)
    assert "pywinpty" in found and "pexpect" not in found, sorted(found)
    print(f"Python {python} on Windows: {len(found)} wheels")
