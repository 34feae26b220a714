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
| ``DP_HUB_MEM_LIMIT`` | 2G | per-process address-space cap of each student's server and kernels |

Layout per nbgrader's "Using nbgrader with JupyterHub" (one class, several graders):
the Formgrader runs as the hub service ``dp-course`` (name = course id) under the
grader account; the JupyterHub group ``formgrade-dp-course`` (the roster's
instructors) gets ``access:services!service=dp-course``; students get no scope on it.
"""

import csv
import os
import pwd
import resource
import socket
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner

c = get_config()  # noqa: F821  (injected by JupyterHub)

HUB = Path(__file__).resolve().parent
REPO = HUB.parent
COURSE_ID = "dp-course"
GRADER = f"grader-{COURSE_ID}"
SRV = Path(os.environ.get("DP_HUB_SRV", "/srv/dp-course"))
# students' servers and the Formgrader run from the course's Python that provisioning built
# outside the checkout (the hub itself runs as root from the checkout's .venv)
VENV_BIN = Path(os.environ.get("DP_HUB_VENV", SRV / "venv")) / "bin"
STATE = Path(os.environ.get("DP_HUB_STATE", SRV / "hub"))
ROSTER = Path(os.environ.get("DP_HUB_ROSTER", HUB / "roster.csv"))
IP = os.environ.get("DP_HUB_IP", "127.0.0.1")
PORT = int(os.environ.get("DP_HUB_PORT", "8000"))
MEM_LIMIT = os.environ.get("DP_HUB_MEM_LIMIT", "2G")
CULL_TIMEOUT = int(os.environ.get("DP_HUB_CULL_TIMEOUT", "3600"))
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

# --- network: the public proxy on IP:PORT; hub API and proxy API on free loopback ports
c.JupyterHub.bind_url = f"http://{IP}:{PORT}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [str(HUB / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True      # stopping the hub stops the students' servers

# --- authentication
if os.environ.get("DP_HUB_AUTH", "pam") == "lti13":
    exec((HUB / "lti13_config.py").read_text(encoding="utf-8"))   # noqa: S102  (our own file)
else:
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.check_account = True
    c.Authenticator.allowed_users = set(instructors + students)
    c.Authenticator.admin_users = set()   # instructors need no hub admin rights (least privilege)

# --- groups and roles (nbgrader docs, demo_one_class_multiple_graders)
c.JupyterHub.load_groups = {
    f"formgrade-{COURSE_ID}": {"users": instructors},
    f"nbgrader-{COURSE_ID}": {"users": students},
}
c.JupyterHub.load_roles = [
    {
        "name": f"formgrade-{COURSE_ID}",
        "groups": [f"formgrade-{COURSE_ID}"],
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

# --- services: the Formgrader (as the grader account) and the idle culler
c.JupyterHub.services = [
    {
        "name": COURSE_ID,
        "url": f"http://127.0.0.1:{free_port()}",
        "command": [str(VENV_BIN / "jupyterhub-singleuser"), f"--ServerApp.root_dir={SRV / 'course'}"],
        "user": GRADER,
        "cwd": str(SRV / "course"),
        "environment": {
            "PATH": PATH,
            "NBGRADER_EXCHANGE": str(SRV / "exchange"),
            "JUPYTER_CONFIG_PATH": str(SRV / "jupyter" / "grader"),
            "DP_PYTHON": str(VENV_BIN / "python"),      # SRV/grade.sh
            "JUPYTERHUB_DEFAULT_URL": "/formgrader",
            "MPLBACKEND": "Agg",
        },
        "oauth_no_confirm": True,
    },
    {
        "name": "idle-culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={CULL_TIMEOUT}",
                    "--cull-every=300"],
    },
]

if os.environ.get("DP_HUB_LOAD_TOKEN"):     # hub/load.py only: a service that starts and uses servers
    c.JupyterHub.services.append({"name": "load-test", "api_token": os.environ["DP_HUB_LOAD_TOKEN"]})
    c.JupyterHub.load_roles.append({"name": "load-test", "services": ["load-test"],
                                    "scopes": ["admin:users", "admin:servers", "access:servers"]})


# --- the students' (and instructors' own) servers
def _bytes(spec: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    return int(float(spec[:-1]) * units[spec[-1].upper()]) if spec[-1].upper() in units else int(spec)


class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner plus kernel-enforced rlimits (there are no cgroups without systemd).

    Enforced per process of the user's server (the server and each kernel inherit it):
    RLIMIT_AS = ``mem_limit`` (an allocation beyond it fails with MemoryError) and
    RLIMIT_NPROC = 512 per account (no fork bomb). Not enforced: a per-user *total*
    memory or a CPU share (``cpu_limit`` is only exported as CPU_LIMIT); processes run
    at nice 5 so the hub and proxy stay responsive. SystemdSpawner (hub/README.md)
    enforces both with cgroups where systemd is PID 1.
    """

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)
        limit = int(self.mem_limit) if self.mem_limit else None

        def preexec():
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_NPROC, (512, 512))
            os.nice(5)
            become_user()

        return preexec


c.JupyterHub.spawner_class = CourseSpawner
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
}
c.Spawner.env_keep = ["LANG", "LC_ALL"]
# stopping a server: SIGINT, then SIGTERM after 3 s (a culled or hub-stopped server goes quickly)
c.LocalProcessSpawner.interrupt_timeout = 3
c.LocalProcessSpawner.term_timeout = 3
