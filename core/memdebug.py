"""Debug-only memory report of a web process: off unless ``APISCOPE_MEMDEBUG`` names a file.

With ``APISCOPE_MEMDEBUG=/tmp/mem.txt`` the process starts ``tracemalloc`` at start-up, and each
``SIGUSR2`` sent to a gunicorn *worker* (not the master: SIGUSR2 re-executes the master) appends to
that file the RSS, glibc's ``malloc_info`` totals (memory glibc holds but Python freed) and the 30
biggest Python allocation sites. tracemalloc slows every allocation and its own tables take memory
(glibc's figures include them): ``APISCOPE_MEMDEBUG_TRACE=0`` reports the totals without it. Never
set either in production.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import signal
import time

ENV = "APISCOPE_MEMDEBUG"


def _malloc_totals() -> str:
    """glibc's own totals: ``system`` bytes held from the kernel, ``free`` bytes of those not in use."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.open_memstream.restype = ctypes.c_void_p
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        libc.free.argtypes = [ctypes.c_void_p]
        size = ctypes.c_size_t()
        buf = ctypes.c_void_p()
        stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        xml = ctypes.string_at(buf, size.value).decode()
        libc.free(buf)
    except (OSError, AttributeError):
        return "malloc_info unavailable"
    arenas = xml.count("<heap nr=")
    tail = xml[xml.rfind("</heap>"):]
    total = {kind: sum(int(v) for v in re.findall(rf'<total type="{kind}" count="\d+" size="(\d+)"/>', tail))
             for kind in ("fast", "rest", "mmap")}
    system = re.search(r'<system type="current" size="(\d+)"/>', tail)
    return (f"arenas {arenas}; glibc holds {int(system.group(1)) >> 20 if system else '?'} MB from the kernel, "
            f"free in it {(total['fast'] + total['rest']) >> 20} MB; mmapped {total['mmap'] >> 20} MB")


def _pymalloc_mb() -> str:
    """Bytes in pymalloc's arenas (small Python objects), from ``sys._debugmallocstats`` (it writes to fd 2)."""
    import sys
    import tempfile

    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    found = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    return f"pymalloc arenas {found.group(1) if found else '?'} (1 MiB each)"


def _report(signum, frame) -> None:  # noqa: ARG001 - signal handler
    import tracemalloc

    with open(f"/proc/{os.getpid()}/status") as fh:
        rss = next(line.split()[1] for line in fh if line.startswith("VmRSS:"))
    current, peak = tracemalloc.get_traced_memory()
    lines = [f"== {time.strftime('%H:%M:%S')} pid {os.getpid()} RSS {int(rss) >> 10} MB; Python traced "
             f"{current >> 20} MB (peak {peak >> 20} MB); {_malloc_totals()}; {_pymalloc_mb()}"]
    if tracemalloc.is_tracing():
        for stat in tracemalloc.take_snapshot().statistics("lineno")[:30]:
            lines.append(f"{stat.size >> 10:>8} KiB {stat.count:>8} {stat.traceback[0]}")
    with open(os.environ[ENV], "a") as fh:
        fh.write("\n".join(lines) + "\n")
    tracemalloc.reset_peak()


def install() -> None:
    """Start tracing and hook SIGUSR2 when ``APISCOPE_MEMDEBUG`` is set (called by ``config/wsgi.py``)."""
    if not os.environ.get(ENV):
        return
    import tracemalloc

    if os.environ.get("APISCOPE_MEMDEBUG_TRACE", "1") != "0":  # 0: RSS and allocator totals only
        tracemalloc.start()
    signal.signal(signal.SIGUSR2, _report)
