"""glibc's allocator tuned for the web process, so that its memory follows what Python holds.

Measured with ``core/memdebug.py`` on Metlo's workload (bench/README.md "Web memory"): after the
reads Python held 24–39 MB but glibc kept 141 MB from the kernel, 71–87 MB of it free. Answers of
~1 MB (gen-test-endpoints, details) are built by 8 threads, each in its own malloc arena; once such
a buffer is freed glibc raises its mmap threshold to that size, so the next ones come from the
arenas' heaps too, and a heap returns memory to the kernel only from its top. Three settings, all
applied at start-up by ``config/wsgi.py`` (so ``gunicorn config.wsgi`` gets them however it is
started: Procfile, README's minimal set, the benchmarks):

- ``M_ARENA_MAX`` 2 (``WEB_MALLOC_ARENA_MAX``; glibc's ``MALLOC_ARENA_MAX`` wins when set): two
  heaps for 8 threads instead of 9; the threads contend on them only for allocations over 512 bytes.
- ``M_MMAP_THRESHOLD`` 128 KiB, fixed (``WEB_MALLOC_MMAP_THRESHOLD``): a big buffer is always its
  own mapping and goes back to the kernel when freed.
- ``malloc_trim(0)`` at most every ``WEB_MALLOC_TRIM_SECONDS`` (1 s) by a daemon thread, only after
  requests were served: free pages inside the heaps go back to the kernel. 0 turns it off.

The Celery worker applies the same settings (``config/celery.py``: ``tune()`` in the parent before it
forks its children, ``served()`` after each task).

Nothing happens off glibc (``mallopt`` missing) or when a value is 0.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import threading
import time

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8

_libc = None
_served = 0  # requests served since the last trim (a plain counter: a lost increment is harmless)
_trimmer: threading.Thread | None = None
_trimmer_lock = threading.Lock()


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _glibc():
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.mallopt.argtypes, libc.malloc_trim.argtypes = [ctypes.c_int, ctypes.c_int], [ctypes.c_size_t]
            _libc = libc
        except (OSError, AttributeError):
            _libc = False
    return _libc


def tune() -> None:
    """Apply the arena and mmap settings (call before the request threads allocate)."""
    libc = _glibc()
    if not libc:
        return
    arenas = _env_int("WEB_MALLOC_ARENA_MAX", 2)
    if arenas > 0 and "MALLOC_ARENA_MAX" not in os.environ:
        libc.mallopt(M_ARENA_MAX, arenas)
    threshold = _env_int("WEB_MALLOC_MMAP_THRESHOLD", 128 * 1024)
    if threshold > 0:
        libc.mallopt(M_MMAP_THRESHOLD, threshold)


def _trim_loop(interval: float) -> None:
    global _served
    libc = _glibc()
    while True:
        time.sleep(interval)
        if _served:
            _served = 0
            libc.malloc_trim(0)


def served() -> None:
    """Count a request (``config/wsgi.py``), starting the trimming thread in this process on the first."""
    global _served, _trimmer
    _served += 1
    if _trimmer is not None:
        return
    with _trimmer_lock:
        if _trimmer is None:
            try:
                interval = float(os.environ.get("WEB_MALLOC_TRIM_SECONDS") or 1)
            except ValueError:
                interval = 1.0
            thread = threading.Thread(target=_trim_loop, args=(interval,), name="malloc-trim", daemon=True)
            if interval > 0 and _glibc():
                thread.start()
            _trimmer = thread
