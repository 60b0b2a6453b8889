"""The Celery application: worker and beat run trace analysis, webhook delivery and pruning.

A worker started without ``-Q`` consumes every queue declared in ``CELERY_TASK_QUEUES``
(``config.settings.base``); beat warns about queues holding work that no worker consumes.
"""
import gc
import os
import threading

from celery import Celery, signals

from core import malloc

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("apiscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _ensure_filesystem_broker_dirs() -> None:
    """The embedded filesystem broker needs its folders before the first message."""
    from django.conf import settings

    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
            if options.get(key):
                os.makedirs(options[key], exist_ok=True)


@app.on_after_configure.connect
def _on_configure(sender, **kwargs) -> None:  # noqa: ARG001
    _ensure_filesystem_broker_dirs()


@signals.task_prerun.connect
@signals.task_postrun.connect
def _connections_check(sender=None, **kwargs) -> None:  # noqa: ARG001
    """Connections outlive tasks (``CELERY_DB_REUSE_MAX``): close the broken or expired ones, as
    Django does around each request, so a task never starts on a connection the server dropped.
    Not for a task run eagerly (``apply()``): that one runs inside its caller's connection."""
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


# What tasks import only when they first need it, imported by the parent instead: each prefork child
# would otherwise hold its own copy (the OpenAPI validator, pydantic and jsonschema-rs: ~19 MB, loaded
# by every child that rebuilds a generated spec; bench/README.md "Worker memory").
_IMPORTED_BY_TASKS = ("openapi_spec_validator", "openapi_spec_validator.shortcuts",
                      "openapi_spec_validator.validation.exceptions", "statistics")


@signals.worker_init.connect
def _freeze_before_fork(**kwargs) -> None:  # noqa: ARG001
    """Tasks and Django are loaded: keep the garbage collector off these objects for good.

    A full collection over them costs ~60 ms per pass, and (in the prefork pool) touching
    them would copy the parent's pages into every child; frozen, the children share them.
    """
    import importlib

    malloc.tune()  # glibc's arenas and mmap threshold as in the web (core/malloc.py); children inherit them
    app.loader.import_default_modules()
    for name in _IMPORTED_BY_TASKS:
        importlib.import_module(name)
    from inventory.patterns.words import dictionary_load

    dictionary_load()  # learning's word list (~10 MB): shared by the children, not one copy each
    gc.freeze()


@signals.worker_before_create_process.connect
def _freeze_before_each_fork(**kwargs) -> None:  # noqa: ARG001
    """Just before the prefork pool forks a child: freeze what the parent made after ``worker_init``
    too (the pool, the consumer, the broker connection, the task registry). Left unfrozen, each child's
    first full collections wrote to those objects' pages and copied ~30 MB of them per child, idle
    (bench/README.md "Worker memory")."""
    gc.freeze()


@signals.task_postrun.connect
def _malloc_trim(sender=None, **kwargs) -> None:  # noqa: ARG001
    """After tasks, free pages go back to the kernel at most every second (``core.malloc.served``)."""
    malloc.served()


@signals.beat_init.connect
@signals.beat_embedded_init.connect
def _queues_check_start(**kwargs) -> None:  # noqa: ARG001
    """Beat watches for queues whose work no running worker consumes (``core.queues``) every
    ``QUEUES_CHECK_INTERVAL`` seconds, in a daemon thread: a slow or absent broker delays the
    check, never the schedule."""
    from django.conf import settings

    from core.queues import queues_check_forever

    if settings.QUEUES_CHECK_INTERVAL > 0:
        threading.Thread(target=queues_check_forever, kwargs={"interval": settings.QUEUES_CHECK_INTERVAL},
                         name="queues-check", daemon=True).start()
