"""Who holds a lease: a name per process, and whether a holder on this machine has ended. Plain
Python (no SQLAlchemy), so a run names its worker before its store is set up."""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import uuid

__all__ = ["owner_gone", "this_machine", "worker_name"]


def worker_name() -> str:
    """Unique per process: this machine (:func:`this_machine`), the pid and a random part (a pid
    can be reused)."""
    return f"{this_machine()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@functools.cache
def this_machine() -> str:
    """The host name and a digest of the kernel's boot id and this process's PID namespace: two
    machines or containers that share a host name differ in one of them, and a pid names a
    process only within both (where /proc is missing, the host name alone)."""
    def read(path: str) -> str:
        try:
            with open(path) as handle:
                return handle.read().strip()
        except OSError:
            return ""

    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    tag = hashlib.blake2b(f"{read('/proc/sys/kernel/random/boot_id')}/{namespace}".encode(), digest_size=4)
    return f"{socket.gethostname()}~{tag.hexdigest()}"


def owner_gone(owner: str) -> bool:
    """Whether the lease holder ``owner`` (``[prefix:]machine:pid:random``) was a process on this
    machine that has ended (or is a zombie nobody reaped). Any other holder may still be at work:
    another machine's (a host name alone does not tell), a live process's, or this very
    process's (several engines may share it)."""
    parts = owner.split(":")
    if len(parts) < 3 or parts[-3] != this_machine() or not parts[-2].isdigit():
        return False
    pid = int(parts[-2])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    try:  # killed but not yet waited for by its parent: gone all the same
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False
