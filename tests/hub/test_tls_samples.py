"""TLS in front of the class server: the nginx sample is valid nginx, and plain HTTP beyond loopback warns (issue 38)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hub.test_config import _load

HUB = Path(__file__).resolve().parents[2] / "hub"


def _nginx(tmp: Path) -> str:
    """An nginx binary: the machine's, else Debian's package unpacked here (nothing installed, no service)."""
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("nginx is not installed and Debian's package cannot be fetched here (not root or no apt)")
    where = tmp / "deb"
    where.mkdir()
    got = subprocess.run(["apt-get", "download", "nginx"], cwd=where, capture_output=True, text=True)
    if got.returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, check=False)
        got = subprocess.run(["apt-get", "download", "nginx"], cwd=where, capture_output=True, text=True)
    assert got.returncode == 0, f"apt-get download nginx: {got.stderr[-500:]}"
    deb = next(where.glob("nginx_*.deb"))
    subprocess.run(["dpkg", "-x", str(deb), str(where / "root")], check=True)
    return str(where / "root" / "usr" / "sbin" / "nginx")


def _certificate(folder: Path, name: str, hosts: list[str]) -> None:
    """A self-signed certificate for ``hosts`` (the venv's ``cryptography``: no openssl CLI needed)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
            .sign(key, hashes.SHA256()))
    (folder / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / f"{name}.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                           serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))


def test_the_nginx_sample_passes_nginx_t(tmp_path):
    nginx = _nginx(tmp_path)
    certs = tmp_path / "certs"
    certs.mkdir()
    _certificate(certs, "hub", ["hub.example.edu", "*.hub.example.edu"])
    _certificate(certs, "users", ["*.dpcourse-users.example.net"])
    snippet = tmp_path / "dp-course-proxy.conf"
    shutil.copy(HUB / "tls" / "dp-course-proxy.conf", snippet)
    site = (HUB / "tls" / "nginx.conf").read_text(encoding="utf-8")
    site = site.replace("/etc/ssl/dp-course", str(certs)).replace("/etc/nginx/snippets/dp-course-proxy.conf", str(snippet))
    site = site.replace("listen 80;", "listen 127.0.0.1:18080;").replace("listen [::]:80;", "")
    site = site.replace("listen 443 ssl http2;", "listen 127.0.0.1:18443 ssl http2;").replace("listen [::]:443 ssl http2;", "")
    (tmp_path / "site.conf").write_text(site, encoding="utf-8")
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log stderr;\nevents {{}}\nhttp {{\n  access_log off;\n"
        + "".join(f"  {kind}_temp_path {tmp_path}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        + f"  include {tmp_path}/site.conf;\n}}\n", encoding="utf-8")
    done = subprocess.run([nginx, "-t", "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "test is successful" in done.stderr, done.stderr
    # The check can fail: a sample with a typo is refused.
    (tmp_path / "site.conf").write_text(site + "\nbogus_directive on;\n", encoding="utf-8")
    bad = subprocess.run([nginx, "-t", "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                         capture_output=True, text=True)
    assert bad.returncode != 0


def test_plain_http_beyond_loopback_warns_in_chinese_and_english(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DP_HUB_IP", "0.0.0.0")
    _load(tmp_path, monkeypatch)
    err = capsys.readouterr().err
    assert "明文 HTTP" in err and "plain HTTP on 0.0.0.0:" in err and "hub/tls/" in err
    monkeypatch.setenv("DP_HUB_IP", "127.0.0.1")
    _load(tmp_path, monkeypatch)
    assert "plain HTTP" not in capsys.readouterr().err
