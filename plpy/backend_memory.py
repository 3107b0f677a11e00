"""The data limit (RLIMIT_DATA) of one server backend (stdlib only).

The operating system's per-process limit is how PostgreSQL bounds a backend's memory: past
it, malloc fails and the backend reports "out of memory" for that query alone, and every
other session keeps working. RLIMIT_DATA counts a process's private writable memory (its
heap and anonymous mappings), not the shared buffers, so a bound is the same number whatever
shared_buffers is.

The server starts every process under a soft default (the runtime's PROCESS_DATA_SOFT_LIMIT),
so what never logs in, a parallel worker or a pg_cron job, is bounded too. At login
(sql/065_backend_memory.sql) a reader's backend takes its own bound as both limits, which it
can never raise; a trusted role's backend lifts its soft limit to the hard one.
"""

import resource

UNLIMITED = resource.RLIM_INFINITY


def data_in_use(status_path="/proc/self/status"):
    """Bytes of private data this process maps now (VmData), 0 when the kernel does not say."""
    try:
        with open(status_path) as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def bound(extra_bytes, in_use=None):
    """Limit this process to what it uses now plus extra_bytes, soft and hard: for good, since
    an unprivileged process never raises its hard limit. Returns the limit in bytes."""
    if extra_bytes <= 0:
        raise ValueError(f"the memory bound must be more than 0 bytes, got {extra_bytes}")
    limit = (data_in_use() if in_use is None else in_use) + extra_bytes
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != UNLIMITED:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    return limit


def lift():
    """Raise this process's soft limit to its hard one. Returns the limit (-1: none)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
    return -1 if hard == UNLIMITED else hard


def limits():
    """(soft, hard) of this process, -1 for none."""
    return tuple(-1 if v == UNLIMITED else v for v in resource.getrlimit(resource.RLIMIT_DATA))


def postmaster_limits(proc="/proc"):
    """(soft, hard) data limits of this backend's parent, the postmaster: what every process that
    never logs in (a parallel worker, a pg_cron job) runs under; -1 for none, None unknown."""
    import os

    try:
        with open(f"{proc}/{os.getppid()}/limits") as f:
            for line in f:
                if line.startswith("Max data size"):
                    soft, hard = line.split()[3:5]
                    return tuple(-1 if v == "unlimited" else int(v) for v in (soft, hard))
    except OSError:
        pass
    return None


def memory_total(meminfo="/proc/meminfo"):
    """The machine's memory in bytes, 0 when the kernel does not say."""
    try:
        with open(meminfo) as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
