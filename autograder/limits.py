"""Resource limits for processes that run student code (kernels, rechecks)."""

from __future__ import annotations

import os
import resource

#: Environment variable read by the kernel launcher: address-space cap in MiB.
MEMORY_ENV = "AUTOGRADER_MEMORY_MB"
#: Environment variable read by the recheck: CPU-seconds cap (a backstop for orphans).
CPU_ENV = "AUTOGRADER_CPU_SECONDS"
#: Environment variable read by the kernel launcher: file where it writes its pid.
PIDFILE_ENV = "AUTOGRADER_KERNEL_PIDFILE"
#: Thread-pool variables pinned to 1: workers already use every core.
SINGLE_THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def apply_memory_limit(memory_mb: int | None) -> None:
    """Cap this process's address space (``RLIMIT_AS``) at ``memory_mb`` MiB.

    A student allocation beyond the cap raises ``MemoryError`` inside the
    kernel instead of taking the grading machine down.
    """
    if not memory_mb:
        return
    limit = int(memory_mb) * 1024 * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def apply_limits_from_env() -> None:
    """Apply the limits requested through :data:`MEMORY_ENV` and :data:`CPU_ENV`."""
    value = os.environ.get(MEMORY_ENV)
    if value:
        apply_memory_limit(int(value))
    seconds = os.environ.get(CPU_ENV)
    if seconds:
        limit = int(seconds)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
