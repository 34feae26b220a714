"""hub/backup.py's retention and modes, checked without a class server (issue 38)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hub"))
import backup  # noqa: E402  (hub/backup.py)


def _made(dest: Path, names: list[str]) -> None:
    for name in names:
        (dest / name).mkdir()
        (dest / name / "course.tar").write_bytes(b"x")


def test_prune_keeps_the_newest_and_touches_nothing_else(tmp_path):
    times = [f"2026112{d}T0300{s:02d}.000000Z" for d in range(1, 6) for s in (0, 1)]
    _made(tmp_path, times)
    (tmp_path / "notes.txt").write_text("the lecturer's")
    (tmp_path / "20260101-manual").mkdir()
    gone = backup.prune(tmp_path, 3)
    assert sorted(p.name for p in gone) == sorted(times)[:-3]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["20260101-manual", "notes.txt", *sorted(times)[-3:]])
    assert backup.prune(tmp_path, 0) == [] and len(list(tmp_path.iterdir())) == 5


def test_a_backup_is_private_and_pruned(tmp_path, monkeypatch):
    """backup() with the class's parts stood in for: the folder 0700, every archive 0600, old ones gone."""
    def fake(srv, roster, out):
        out.mkdir(parents=True, mode=0o700)
        for name in ("gradebook.db", "course.tar", "exchange.tar", "home-alice.tar"):
            (out / name).write_bytes(b"secret")

    monkeypatch.setattr(backup, "_backup_into", fake)
    before = os.umask(0o022)
    os.umask(before)
    _made(tmp_path, ["20250101T000000.000000Z", "20250102T000000.000000Z"])
    out = backup.backup(tmp_path / "srv", [], tmp_path, keep=2)
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {0o600}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["20250102T000000.000000Z", out.name])
    assert os.umask(before) == before, "backup() left the process umask changed"


def test_keep_must_not_be_negative(capsys):
    with pytest.raises(SystemExit):
        backup.main(["backup", "/nonexistent", "--keep", "-1"])
    assert "--keep" in capsys.readouterr().err


def test_a_sparse_file_stays_sparse_in_the_archive(tmp_path):
    """A 0-block file of 256 MiB (a student's truncate) takes a few KiB in her archive, not 256 MiB of zeros."""
    home = tmp_path / "home"
    home.mkdir()
    with open(home / "notes.bin", "wb") as handle:
        handle.truncate(256 * 2**20)
    (home / "work.txt").write_text("hers")
    archive = tmp_path / "home-alice.tar"
    backup._tar(["-cpf", str(archive), "-C", str(home), "."])
    assert archive.stat().st_size < 2**20, f"{archive.stat().st_size} bytes"
    back = tmp_path / "back"
    back.mkdir()
    backup._tar(["-xpf", str(archive), "-C", str(back)])
    assert (back / "notes.bin").stat().st_size == 256 * 2**20 and (back / "work.txt").read_text() == "hers"


def test_a_failed_backup_leaves_nothing_and_prunes_nothing(tmp_path, monkeypatch):
    """The disk full at a student's home: no partial folder that --keep would count as a backup, the old ones stay."""
    def full(srv, roster, out):
        out.mkdir(parents=True, mode=0o700)
        (out / "course.tar").write_bytes(b"part")
        raise RuntimeError("tar: home-alice.tar: Cannot write: No space left on device")

    monkeypatch.setattr(backup, "_backup_into", full)
    _made(tmp_path, ["20250101T000000.000000Z"])
    with pytest.raises(RuntimeError, match="No space"):
        backup.backup(tmp_path / "srv", [], tmp_path, keep=1)
    assert [p.name for p in tmp_path.iterdir()] == ["20250101T000000.000000Z"]
