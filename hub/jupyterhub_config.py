"""JupyterHub configuration of the one-machine class server (``make hub``).

Read by ``jupyterhub -f hub/jupyterhub_config.py``; everything comes from the
roster (``hub/roster.csv``) and from environment variables with demo defaults:

| variable | default | what |
|---|---|---|
| ``DP_HUB_IP`` / ``DP_HUB_PORT`` | 127.0.0.1 / 8000 | where the proxy listens (0.0.0.0 behind TLS for a class) |
| ``DP_HUB_SRV`` | /srv/dp-course | course root, exchange, bundle (``hub/provision.py``) |
| ``DP_HUB_VENV`` | ``$DP_HUB_SRV/venv`` | the course's Python that runs the servers (``provision.py --venv``) |
| ``DP_HUB_STATE`` | ``$DP_HUB_SRV/hub`` | hub database, cookie secret, proxy pid file |
| ``DP_HUB_ROSTER`` | hub/roster.csv | who may log in, who is an instructor |
| ``DP_HUB_AUTH`` | pam | ``pam`` (OS accounts) or ``lti13`` (see hub/lti13_config.py) |
| ``DP_HUB_CULL_TIMEOUT`` | 3600 | seconds of inactivity before a server is stopped |
| ``DP_HUB_LOCALE`` | zh_CN | JupyterLab's language (``en`` for English) |
| ``DP_HUB_URL`` | ``http://hub.localhost:PORT`` | public URL of the hub; every user's server and the Formgrader get a subdomain of it |
| ``DP_HUB_USER_DOMAIN`` | ``users.localhost`` when ``DP_HUB_URL`` is on ``*.localhost``, else none | students' servers at ``<name>.DP_HUB_USER_DOMAIN``: a registrable domain other than the hub's (none: ``<name>.<hub host>``, with a warning) |
| ``DP_HUB_MEM_LIMIT`` | 2G | memory of all a student's processes together (cgroup), and address space of each |
| ``DP_HUB_TMP_LIMIT`` / ``DP_HUB_SHM_LIMIT`` | 512M / 256M | size of each student's private ``/tmp`` and ``/dev/shm`` |
| ``DP_HUB_LOCK_LIMIT`` | 8M | size of each student's private ``/run/lock`` (and any other folder all accounts may write: hub/spawner.py) |
| ``DP_HUB_HOME_LIMIT`` | 2G | disk space of each student's home (an ext4 image in ``$DP_HUB_SRV/homes``) |
| ``DP_HUB_NETNS_SUBNET`` | 169.254.64.0/18 | the students' servers' own network namespaces (a /30 each; the hub's API on its first address); empty: servers share the host's ports |
| ``DP_HUB_LOGS`` | ``$DP_HUB_SRV/logs`` | ``jupyterhub.log`` (rotated: 5 × 10 MB), ``servers/<name>.log`` per student's server, ``formgrader.log``, ``idle-culler.log`` |
| ``DP_HUB_EXCHANGE_LIMIT`` | 2G | size of the exchange's own file system (``hub/provision.py``: ``$DP_HUB_SRV/exchange.img``) |
| ``DP_HUB_LOGIN_SOURCE_BURST`` / ``_REFILL`` | 20 / 30 | failed logins a source address may make at once, then one per that many seconds (hub/pam_nodelay.py) |
| ``DP_HUB_LOGIN_ACCOUNT_BURST`` / ``_REFILL`` | 10 / 60 | the same per student account (instructors: no per-account cap) |
| ``DP_HUB_TOKENS_PER_USER`` | 200 | API tokens a person may hold before the hub refuses to make another (a request to the hub: at most 1 MiB, a new token's at most 16 KiB) |

Layout per nbgrader's "Using nbgrader with JupyterHub" (one class, several graders):
the Formgrader runs as the hub service ``dp-course`` (name = course id) under the
grader account; the JupyterHub group ``formgrade-dp-course`` (the roster's
instructors) gets ``access:services!service=dp-course``; students get no scope on it.
"""

import csv
import importlib.util
import os
import json
import shutil
import signal
import socket
import sys
from pathlib import Path
from urllib.parse import urlparse

c = get_config()  # noqa: F821  (injected by JupyterHub)

# `sudo make hub &`, nohup, a cron @reboot line: a shell without job control starts a background job
# with SIGINT ignored, which every child inherits through exec. The Formgrader and the idle culler
# then ignored the hub's stop (JupyterHub sends SIGINT first, then waits): a stop took 70 s. Restore
# Python's handler here, in the hub's process before it starts anything, so the hub and its children
# stop the same in the foreground, in the background and under hub/service.py's unit.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

HUB = Path(__file__).resolve().parent
REPO = HUB.parent
COURSE_ID = "dp-course"
GRADER = f"grader-{COURSE_ID}"
SRV = Path(os.environ.get("DP_HUB_SRV", "/srv/dp-course"))
# students' servers and the Formgrader run from the course's Python that provisioning built
# outside the checkout (the hub itself runs as root from the checkout's .venv): the version that
# provisioning recorded as current (hub/upgrade.py), read again at every server start (_lab_settings)
sys.path.insert(0, str(HUB))
import upgrade  # noqa: E402  (hub/upgrade.py)

VENV_DEFAULT = Path(os.environ.get("DP_HUB_VENV", SRV / "venv"))
VENV_BIN = upgrade.current(SRV, VENV_DEFAULT) / "bin"
STATE = Path(os.environ.get("DP_HUB_STATE", SRV / "hub"))
ROSTER = Path(os.environ.get("DP_HUB_ROSTER", HUB / "roster.csv"))
IP = os.environ.get("DP_HUB_IP", "127.0.0.1")
PORT = int(os.environ.get("DP_HUB_PORT", "8000"))
MEM_LIMIT = os.environ.get("DP_HUB_MEM_LIMIT", "2G")
TMP_LIMIT = os.environ.get("DP_HUB_TMP_LIMIT", "512M")
SHM_LIMIT = os.environ.get("DP_HUB_SHM_LIMIT", "256M")
LOCK_LIMIT = os.environ.get("DP_HUB_LOCK_LIMIT", "8M")
HOME_LIMIT = os.environ.get("DP_HUB_HOME_LIMIT", "2G")
# link-local: never routed off the machine, and unlikely to be a campus network's
NETNS_SUBNET = os.environ.get("DP_HUB_NETNS_SUBNET", "169.254.64.0/18")
# one origin per person: the hub on HOST, alice's server on alice.HOST, the Formgrader on
# dp-course--service.HOST (JupyterHub's subdomain_hook "idna"). Chromium resolves *.localhost to
# loopback; a class server needs wildcard DNS (*.HOST) and a wildcard TLS certificate.
PUBLIC_URL = os.environ.get("DP_HUB_URL", f"http://hub.localhost:{PORT}")
# Passwords cross the network in clear when the proxy itself listens beyond this machine: TLS
# belongs in a reverse proxy in front (hub/tls/), with the hub on loopback behind it.
if IP not in ("127.0.0.1", "::1", "localhost") and not IP.startswith("127."):
    print(f"警告：中心服务在 {IP}:{PORT} 上以明文 HTTP 提供，网络上的任何人都能读到密码和作业。"
          f"请在前面放一个 TLS 反向代理（hub/tls/ 中的 nginx 或 Caddy 示例），并保持 DP_HUB_IP=127.0.0.1。\n"
          f"WARNING: the hub serves plain HTTP on {IP}:{PORT}: anyone on the network can read passwords and "
          f"work. Put a TLS reverse proxy in front (hub/tls/: nginx or Caddy) and keep DP_HUB_IP=127.0.0.1.",
          file=sys.stderr)
CULL_TIMEOUT = int(os.environ.get("DP_HUB_CULL_TIMEOUT", "3600"))
LOCALE = os.environ.get("DP_HUB_LOCALE", "zh_CN")
LOGS = Path(os.environ.get("DP_HUB_LOGS", SRV / "logs"))
PATH = f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"   # nbgrader runs `alembic` from the venv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


with open(ROSTER, newline="", encoding="utf-8") as handle:
    roster = [{k: v.strip() for k, v in row.items()} for row in csv.DictReader(handle)]
instructors = [r["id"] for r in roster if r["role"] == "instructor"]
students = [r["id"] for r in roster if r["role"] == "student"]

STATE.mkdir(parents=True, exist_ok=True)
STATE.chmod(0o700)


def hub_port() -> int:
    """The hub API's port, the same at every start: the servers that outlive a restart call it."""
    saved = STATE / "hub-port"
    if saved.exists() and saved.read_text().strip().isdigit():
        return int(saved.read_text())
    port = free_port()
    saved.write_text(str(port))
    return port


# --- network: the public proxy on IP:PORT (host-routed subdomains); hub API and proxy API on
# free loopback ports
c.JupyterHub.bind_url = f"http://{IP}:{PORT}"
c.JupyterHub.subdomain_host = PUBLIC_URL
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{hub_port()}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [str(HUB / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
# A restart of the hub (an upgrade, a crash, Ctrl-C and `sudo make hub` again) keeps the students'
# servers and kernels running: the restarted hub finds them (hub/spawner.py keeps what it needs in the
# hub's database), and the new proxy gets their routes back. Stopping the class: the hub's admin page,
# the idle culler, or `hub/provision.py --stop` with the hub stopped (hub/README.md, "Restarts").
c.JupyterHub.cleanup_servers = False
# The periodic service health check only logs; during shutdown (Ctrl-C, SIGTERM) it can run after
# the services were stopped and end the hub with a traceback (JupyterHub 6.1: Server.from_orm(None)).
c.JupyterHub.service_check_interval = 0
# A student owns their server's origin (alice.HOST): her own process answers there, so a link to it
# can run her script in an instructor's browser. Such a script can set cookies for the parent domain
# (Domain=HOST), which the hub and the Formgrader would take for their own: the instructor logged in
# to the hub as alice, the Formgrader refusing them (red team). __Host- cookies cannot be set from
# another origin or with a Domain; the browser sends them only from a secure context (https, or
# http://*.localhost as in the demo), so every cookie of the hub, the servers and the Formgrader is
# Secure (the servers and services would set theirs without it on http, which the browser refuses).
_public_host = urlparse(PUBLIC_URL).hostname or ""
HOST_COOKIES = urlparse(PUBLIC_URL).scheme == "https" or _public_host == "localhost" or _public_host.endswith(".localhost")
# ... and cookies for the parent domain are only half of it: 200 junk cookies set there push the
# instructor's own cookies out of the browser's jar (Chromium keeps ~180 per registrable domain), after
# which her tossed session id and login took (red team, issue 26). So the students' servers live on a
# registrable domain of their own, as GitHub serves its users' content from githubusercontent.com: the
# hub and the Formgrader on HOST, alice on alice.USER_DOMAIN; nothing her page sets reaches HOST.
_localhost = _public_host == "localhost" or _public_host.endswith(".localhost")
USER_DOMAIN = os.environ.get("DP_HUB_USER_DOMAIN", "users.localhost" if _localhost else "").strip(".")
if USER_DOMAIN and (USER_DOMAIN == _public_host or _public_host.endswith("." + USER_DOMAIN)
                    or USER_DOMAIN.endswith("." + _public_host)):
    sys.exit(f"DP_HUB_USER_DOMAIN={USER_DOMAIN} must not contain or lie under the hub's host {_public_host}: "
             "use a registrable domain of its own (hub/README.md)")
if USER_DOMAIN:
    from jupyterhub.utils import subdomain_hook_idna

    def _hosts(name: str, domain: str, kind: str) -> str:
        """alice.USER_DOMAIN for a user's server; the services (the Formgrader) stay under the hub's host."""
        return subdomain_hook_idna(name, USER_DOMAIN if kind == "user" else domain, kind)

    c.JupyterHub.subdomain_hook = _hosts
else:
    print(f"warning: DP_HUB_USER_DOMAIN is not set: students' servers are subdomains of {_public_host}, and a "
          "student's page can push the instructor's cookies out of the browser (hub/README.md)", file=sys.stderr)
if HOST_COOKIES:
    c.JupyterHub.cookie_host_prefix_enabled = True
    c.JupyterHub.tornado_settings = {"cookie_options": {"secure": True}}
else:
    print(f"warning: DP_HUB_URL={PUBLIC_URL} is not https: a student's server can set cookies for the hub and "
          "the Formgrader in visitors' browsers (serve the hub over TLS)", file=sys.stderr)

# --- authentication
if os.environ.get("DP_HUB_AUTH", "pam") == "lti13":
    exec((HUB / "lti13_config.py").read_text(encoding="utf-8"))   # noqa: S102  (our own file)
else:
    # PAM's failure delay as an asynchronous wait, not a PAM thread held (hub/pam_nodelay.py; red team:
    # a student's failed logins kept the instructor's login waiting 79 s), and a cap on failed logins
    # per source address and per account (issue 37); the instructors have no per-account cap, so that
    # no student can lock them out (the per-source cap applies to everyone)
    sys.path.insert(0, str(HUB))
    from pam_nodelay import CoursePAMAuthenticator    # noqa: E402

    c.JupyterHub.authenticator_class = CoursePAMAuthenticator
    c.PAMAuthenticator.check_account = True   # (CoursePAMAuthenticator reads PAMAuthenticator's config)
    c.CoursePAMAuthenticator.exempt_accounts = set(instructors)
    # who may log in: the roster provisioning last applied, read at each login (hub/roster_ops.py)
    c.CoursePAMAuthenticator.roster_file = str(SRV / "roster.json")
    for _trait, _variable in (("source_burst", "DP_HUB_LOGIN_SOURCE_BURST"), ("source_refill", "DP_HUB_LOGIN_SOURCE_REFILL"),
                              ("account_burst", "DP_HUB_LOGIN_ACCOUNT_BURST"),
                              ("account_refill", "DP_HUB_LOGIN_ACCOUNT_REFILL")):
        if os.environ.get(_variable):
            setattr(c.CoursePAMAuthenticator, _trait, float(os.environ[_variable]) if "REFILL" in _variable
                    else int(os.environ[_variable]))
    c.Authenticator.allowed_users = set(instructors + students)
    c.Authenticator.admin_users = set()   # instructors need no hub admin rights (least privilege)

# --- what a person's requests may store in the hub. JupyterHub keeps a token's note whatever its size and
# reads bodies up to tornado's 100 MB (red team, session 13: 1 MiB notes from a student's kernel grew the hub's
# database by 417 MB in 30 s; a 90 MiB one took the hub from 260 to 842 MB and held a classmate's request
# 3.6 s; listing her tokens, 397 MiB, 1.38 GB and 6 s). The hub's own requests need far less than these caps.
import tornado.httpserver  # noqa: E402
from jupyterhub.apihandlers.users import UserTokenListAPIHandler  # noqa: E402
from tornado import web  # noqa: E402

BODY_MAX = 2**20                 # every request to the hub (its HTTP server: JupyterHub makes one)
TOKEN_REQUEST_MAX = 16 * 2**10   # a new token's note, scopes, expiry
TOKENS_PER_USER = int(os.environ.get("DP_HUB_TOKENS_PER_USER", "200"))
# A connection that sends nothing goes after a minute (tornado's default: an hour), and one address holds at
# most CONNECTIONS_PER_PEER at once: a kernel's 20,000 idle connections to the hub's API took every descriptor
# of the hub, sqlite could open no file and every classmate got 403 (red team, session 15; hub/limits.py).
CONNECTIONS_PER_PEER = 32
tornado.httpserver.HTTPServer.configure(None, max_body_size=BODY_MAX, idle_connection_timeout=60)
import limits  # noqa: E402  (hub/limits.py)
from jupyterhub.oauth.provider import JupyterHubRequestValidator  # noqa: E402

limits.cap_connections(tornado.httpserver.HTTPServer, CONNECTIONS_PER_PEER)
limits.raise_nofile(65536)
# OAuth tokens of one person for one client (her server, the Formgrader): the newest OAUTH_TOKENS_PER_CLIENT
OAUTH_TOKENS_PER_CLIENT = 20
limits.cap_oauth_tokens(JupyterHubRequestValidator, OAUTH_TOKENS_PER_CLIENT)
if not getattr(UserTokenListAPIHandler, "dp_course_capped", False):
    _make_token = UserTokenListAPIHandler.post

    async def _capped_token(self, user_name):
        size = len(self.request.body or b"")
        if size > TOKEN_REQUEST_MAX:
            raise web.HTTPError(400, f"请求太大（{size} 字节，上限 {TOKEN_REQUEST_MAX}）。 / "
                                     f"Request too large ({size} bytes, at most {TOKEN_REQUEST_MAX}).")
        user = self.find_user(user_name)
        held = len(user.orm_user.api_tokens) if user is not None else 0
        if held >= TOKENS_PER_USER:
            raise web.HTTPError(400, f"令牌太多（已有 {held} 个，上限 {TOKENS_PER_USER} 个）：请先在 /hub/token 删除不用的令牌。 / "
                                     f"Too many tokens ({held}, at most {TOKENS_PER_USER}): delete unused ones at /hub/token first.")
        return await _make_token(self, user_name)

    UserTokenListAPIHandler.post = _capped_token
    UserTokenListAPIHandler.dp_course_capped = True

# --- groups and roles (nbgrader docs, demo_one_class_multiple_graders)
c.JupyterHub.load_groups = {
    f"formgrade-{COURSE_ID}": {"users": instructors},
    f"nbgrader-{COURSE_ID}": {"users": students},
}
c.JupyterHub.load_roles = [
    {
        "name": f"formgrade-{COURSE_ID}",
        "groups": [f"formgrade-{COURSE_ID}"],
        # the Formgrader only. Not the students' servers (access:servers): whatever a student's
        # server serves would run in the instructor's browser with the instructor logged in to it
        # (the Formgrader and grade.sh need no access to them)
        "scopes": [f"access:services!service={COURSE_ID}", "list:services",
                   f"read:services!service={COURSE_ID}"],
    },
    {
        # the users' own servers act with their owner's rights (nbgrader's course list asks the hub API)
        "name": "server",
        "scopes": ["inherit"],
    },
    {
        "name": "idle-culler",
        "services": ["idle-culler"],
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    },
]

# --- logs: files under LOGS, whether the hub runs in a terminal, in the background or as a service
# (hub/README.md, "Logs"). The hub's own log rotates itself; each server and service writes to its own
# file, which outlives a restart of the hub.
# They name who logged in when and from where, and a failed login's "user name" (a password typed into the
# name field): root's and the course account's only (red team, session 15: 0644 in a 0755 folder, read from a
# student's kernel). The folder 0710 with the course account's group (it writes formgrader/), every file 0600.
LOGS.mkdir(mode=0o700, parents=True, exist_ok=True)
LOGS.chmod(0o700)
try:
    import grp as _grp

    os.chown(LOGS, 0, _grp.getgrnam(GRADER).gr_gid)
    LOGS.chmod(0o710)
except (KeyError, PermissionError):     # not provisioned yet, or not root (the config tests)
    pass
for _log in LOGS.rglob("*.log*"):
    _log.chmod(0o600)
c.JupyterHub.logging_config = {
    "formatters": {"file": {"format": "%(asctime)s %(levelname)s %(name)s %(module)s:%(lineno)d %(message)s"}},
    "handlers": {"file": {"()": limits.PrivateRotatingFileHandler, "filename": str(LOGS / "jupyterhub.log"),
                          "maxBytes": 10 * 2**20, "backupCount": 5, "encoding": "utf-8", "formatter": "file"}},
    "loggers": {"JupyterHub": {"handlers": ["console", "file"]}},
}
# The Formgrader runs as the course account: its log folder is that account's.
(LOGS / "formgrader").mkdir(mode=0o750, exist_ok=True)
try:
    import pwd as _pwd

    _grader = _pwd.getpwnam(GRADER)
    os.chown(LOGS / "formgrader", _grader.pw_uid, _grader.pw_gid)
except (KeyError, PermissionError):     # not provisioned yet, or not root (the config tests)
    pass


sys.path.insert(0, str(HUB))
from spawner import logged_command as _logged  # noqa: E402  (hub/spawner.py)


# --- services: the Formgrader (as the grader account) and the idle culler
c.JupyterHub.services = [
    {
        "name": COURSE_ID,
        "url": f"http://127.0.0.1:{free_port()}",
        "command": _logged([str(VENV_BIN / "jupyterhub-singleuser"), f"--ServerApp.root_dir={SRV / 'course'}"],
                           LOGS / "formgrader" / "formgrader.log", python=str(VENV_BIN / "python")),
        "user": GRADER,
        "cwd": str(SRV / "course"),
        "environment": {
            "PATH": PATH,
            "NBGRADER_EXCHANGE": str(SRV / "exchange"),
            "JUPYTER_CONFIG_PATH": str(SRV / "jupyter" / "grader"),
            "DP_PYTHON": str(VENV_BIN / "python"),      # SRV/grade.sh
            "JUPYTERHUB_DEFAULT_URL": "/formgrader",
            "MPLBACKEND": "Agg",
            # its cookies __Host- and Secure too (above)
            **({"JUPYTERHUB_COOKIE_HOST_PREFIX_ENABLED": "1", "JUPYTERHUB_COOKIE_OPTIONS": '{"secure": true}'}
               if HOST_COOKIES else {}),
        },
        "oauth_no_confirm": True,
    },
    {
        "name": "idle-culler",
        "command": _logged([sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={CULL_TIMEOUT}",
                            "--cull-every=300"], LOGS / "idle-culler.log"),
    },
]

# provisioning (root) removes a student from the running hub through its API (hub/roster_ops.py): a
# token only root can read, kept in the hub's 0700 state folder
_provision_token = STATE / "provision-api-token"
if not _provision_token.exists():
    import secrets

    _provision_token.touch(mode=0o600)
    _provision_token.write_text(secrets.token_hex(32))
_provision_token.chmod(0o600)
c.JupyterHub.services.append({"name": "provision", "api_token": _provision_token.read_text().strip()})
c.JupyterHub.load_roles.append({"name": "provision", "services": ["provision"],
                                "scopes": ["admin:users", "admin:servers"]})

if os.environ.get("DP_HUB_LOAD_TOKEN"):     # hub/load.py only: a service that starts and uses servers
    c.JupyterHub.services.append({"name": "load-test", "api_token": os.environ["DP_HUB_LOAD_TOKEN"]})
    c.JupyterHub.load_roles.append({"name": "load-test", "services": ["load-test"],
                                    "scopes": ["admin:users", "admin:servers", "access:servers"]})


# --- the students' (and instructors' own) servers: hub/spawner.py (limits per student)
sys.path.insert(0, str(HUB))
from provision import size_bytes as _bytes      # noqa: E402  (hub/provision.py)

if Path("/run/systemd/system").is_dir() and importlib.util.find_spec("systemdspawner"):
    # systemd is PID 1 (a VM, TLJH's setup): a transient unit per server, as The Littlest
    # JupyterHub does; its cgroup enforces mem_limit and cpu_limit (not tested here: no systemd)
    c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
    c.SystemdSpawner.dynamic_users = False          # the roster's OS accounts
    c.SystemdSpawner.isolate_tmp = True             # PrivateTmp (not size-capped: the unit's MemoryMax counts it)
    c.SystemdSpawner.isolate_devices = True
    c.SystemdSpawner.disable_user_sudo = True
    c.SystemdSpawner.unit_extra_properties = {"TasksMax": "512", "MemorySwapMax": "0", "CPUWeight": "100"}
else:
    # containers, CI, this kind of machine: the same limits through cgroups directly
    from spawner import CourseSpawner, hub_address  # hub/spawner.py

    c.JupyterHub.spawner_class = CourseSpawner
    # Each server in its own network namespace: a student who binds every port binds only hers (red
    # team: one student's 28,131 ports stopped every classmate's server start). The hub's API then
    # listens on an address of the subnet, the one address the servers have a route to.
    _hub_ip, _why = hub_address(NETNS_SUBNET) if NETNS_SUBNET else (None, "DP_HUB_NETNS_SUBNET is empty")
    if _hub_ip:
        c.JupyterHub.hub_bind_url = f"http://{_hub_ip}:{hub_port()}"
        c.CourseSpawner.netns_subnet = NETNS_SUBNET
    else:
        print(f"warning: students' servers share the host's network namespace ({_why}): one student can "
              "bind every port of the machine", file=sys.stderr)
    # a private /tmp (/var/tmp) hides the host's: the course folders and the course's Python must
    # not live there
    def _hidden_by(folder: str) -> bool:
        return any(p.resolve().is_relative_to(folder) for p in (SRV, VENV_BIN.parent))

    if _hidden_by("/tmp"):
        print(f"warning: DP_HUB_SRV={SRV} or DP_HUB_VENV={VENV_BIN.parent} is under /tmp: students' servers "
              "keep the host's /tmp", file=sys.stderr)
    c.CourseSpawner.tmp_limit = 0 if _hidden_by("/tmp") else _bytes(TMP_LIMIT)
    c.CourseSpawner.private_var_tmp = not _hidden_by("/var/tmp")
    c.CourseSpawner.shm_limit = _bytes(SHM_LIMIT)
    c.CourseSpawner.lock_limit = _bytes(LOCK_LIMIT)
    c.CourseSpawner.home_limit = _bytes(HOME_LIMIT)
    c.CourseSpawner.home_images = str(SRV / "homes")
    c.CourseSpawner.log_dir = str(LOGS / "servers")
(STATE / "hub-api-url").write_text(c.JupyterHub.hub_bind_url)    # for hub/roster_ops.py
c.Spawner.cmd = [str(VENV_BIN / "jupyterhub-singleuser")]
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = "/lab/tree/course"
c.Spawner.mem_limit = _bytes(MEM_LIMIT)
c.Spawner.cpu_limit = 1.0
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    "PATH": PATH,
    "NBGRADER_EXCHANGE": str(SRV / "exchange"),
    # student configuration first: Assignment List and Validate only (no Formgrader, no
    # create-assignment toolbar, no course list)
    "JUPYTER_CONFIG_PATH": str(SRV / "jupyter" / "student"),
    # the course's own lab extension (Submit and Validate save the open notebooks first), as
    # `make lab` and the launcher load it; found in <JUPYTER_PATH>/labextensions
    "JUPYTER_PATH": str(SRV / "jupyter-data"),
}
c.Spawner.env_keep = ["LANG", "LC_ALL"]


# --- what JupyterLab shows: the course's language (the zh_CN language pack) for everyone, and for
# instructors a "Formgrader" menu that opens the Formgrader's own origin in a new browser tab.
# JupyterLab reads such defaults from settings/overrides.json of its application folder. One
# folder per role (generated: the Formgrader's URL depends on DP_HUB_URL), given by JUPYTERLAB_DIR;
# it links the venv's built JupyterLab. (jupyterhub-singleuser does not pass --LabApp.* options or
# jupyter_lab_config files on to JupyterLab, so LabApp.app_settings_dir cannot be used.)
def _formgrader_url() -> str:
    public = urlparse(PUBLIC_URL)
    port = f":{public.port}" if public.port else ""
    return f"{public.scheme}://{COURSE_ID}--service.{public.hostname}{port}/services/{COURSE_ID}/formgrader"


LAB_SETTINGS = SRV / "lab-settings"
# The servers run from the course's Python (VENV_BIN), not the hub's: the checkout (and its .venv)
# is 0700, so links into it would leave every person's JupyterLab without its application.
_lab_app = next((p for p in (VENV_BIN.parent / "share" / "jupyter" / "lab", Path(sys.prefix) / "share" / "jupyter" / "lab")
                 if p.is_dir()))
# as .lab-settings/overrides.json for `make lab`: the course's language, autosave every 30 s, and no
# "receive Jupyter news?" toast over the figures (nor its requests to jupyter.org)
_language = {"@jupyterlab/translation-extension:plugin": {"locale": LOCALE},
             "@jupyterlab/docmanager-extension:plugin": {"autosaveInterval": 30},
             "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
_overrides = {
    "student": _language,
    "instructor": {**_language, "@jupyterlab/mainmenu-extension:plugin": {"menus": [{
        "id": "jp-mainmenu-formgrader", "label": "Formgrader", "rank": 1000,
        "items": [{"command": "help:open",
                   "args": {"url": _formgrader_url(), "text": "Formgrader", "newBrowserTab": True}}]}]}},
}


def _lab_dir(role: str, lab_app: Path, name: str) -> Path:
    """``LAB_SETTINGS/<name>``: the role's overrides, and links to the JupyterLab application ``lab_app``."""
    folder = LAB_SETTINGS / name
    (folder / "settings").mkdir(parents=True, exist_ok=True)
    (folder / "settings" / "overrides.json").write_text(json.dumps(_overrides[role], indent=1), encoding="utf-8")
    for part in lab_app.iterdir():
        if part.name == "settings":
            continue
        if (folder / part.name).is_symlink() and os.readlink(folder / part.name) != str(part):
            (folder / part.name).unlink()       # an earlier run's link may point at another Python
        if not (folder / part.name).exists():
            (folder / part.name).symlink_to(part)
    for path in (LAB_SETTINGS, folder, folder / "settings"):
        path.chmod(0o755)
    return folder


for _role in _overrides:
    _lab_dir(_role, _lab_app, _role)


# The checkout is 0700: the extension is copied where every person's server can read it.
_extensions = SRV / "jupyter-data" / "labextensions"
shutil.copytree(REPO / "course" / "labextensions", _extensions, dirs_exist_ok=True)
for _path in (_extensions.parent, *_extensions.rglob("*"), _extensions):
    _path.chmod(0o755 if _path.is_dir() else 0o644)


def _lab_settings(spawner) -> None:
    role = "instructor" if spawner.user.name in instructors else "student"
    # the course's Python current now: after an upgrade (or a rollback) since the hub started, this start
    # runs the new version, with its own JupyterLab application; running servers keep theirs (hub/upgrade.py)
    venv = upgrade.current(SRV, VENV_DEFAULT)
    lab_dir = LAB_SETTINGS / role if venv == VENV_BIN.parent else \
        _lab_dir(role, venv / "share" / "jupyter" / "lab", f"{role}-{venv.name}")
    spawner.cmd = [str(venv / "bin" / "jupyterhub-singleuser")]
    spawner.environment = {**spawner.environment, "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
                           "JUPYTERLAB_DIR": str(lab_dir)}


c.Spawner.pre_spawn_hook = _lab_settings
# stopping a server: SIGINT, then SIGTERM after 3 s (a culled or hub-stopped server goes quickly)
c.LocalProcessSpawner.interrupt_timeout = 3
c.LocalProcessSpawner.term_timeout = 3
