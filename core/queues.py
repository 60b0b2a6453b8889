"""Celery queues: which declared queues hold work that no running worker consumes.

A task sent to a queue no worker reads waits there forever, silently (issue #14: deliveries
routed to the ``webhooks`` queue while only a worker of the default queue ran). Every queue the
product sends to is declared in ``CELERY_TASK_QUEUES`` and a worker started without ``-Q``
consumes them all; this module catches the layouts that still leave one unread (a ``-Q`` or
``-X`` worker without its counterpart):

* beat runs :func:`queues_check` every ``QUEUES_CHECK_INTERVAL`` seconds (``config.celery``) and
  logs one WARNING per such queue, naming it and the fix; beat is the one process of the minimal
  set that consumes no queue, so it reports even when the default queue is the unread one;
* the admin's "Celery queues" page shows :func:`queues_status` (each declared queue, its waiting
  messages, the workers consuming it).

How, and what it costs: the waiting messages come from the broker with a passive queue
declaration (``LLEN`` per priority level on Redis, a directory listing on the filesystem broker);
the consumers from one ``active_queues`` broadcast that every running worker answers from its
main process, collected for ``timeout`` seconds. The check only broadcasts when some queue holds
waiting work, so on an idle system it costs a few ``LLEN`` calls. A queue is reported only when
messages wait in it AND no worker answered listing it, so a consumed queue's backlog never is.

Limits: a worker that cannot answer control messages counts as absent (``--pool solo`` while it
runs a long task; the Procfile's prefork and threads pools answer while busy). Messages a worker
has already taken (prefetched, or held until their countdown) are not "waiting".
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from kombu.exceptions import ChannelError

logger = logging.getLogger(__name__)

# Seconds the check collects the workers' answers to its broadcast: every running worker answers
# within milliseconds; the broadcast cannot know how many will, so it always waits this long.
REPLY_TIMEOUT = 1.0


@dataclass(frozen=True)
class QueueState:
    """One queue: messages waiting in the broker, and the workers consuming it (node names).

    ``consumers`` is ``None`` when the workers were not asked (nothing waited anywhere)."""

    name: str
    waiting: int
    consumers: tuple[str, ...] | None

    @property
    def unconsumed(self) -> bool:
        """Work waits here and no running worker reads this queue: it will wait forever."""
        return self.waiting > 0 and self.consumers is not None and not self.consumers


def queue_names() -> list[str]:
    """The declared queues (``CELERY_TASK_QUEUES``), default queue first, read at call time."""
    return [queue.name for queue in settings.CELERY_TASK_QUEUES]


def _waiting(channel, name: str) -> int:
    try:
        return channel.queue_declare(queue=name, passive=True).message_count
    except ChannelError:  # never used, or emptied (Redis drops an empty list): nothing waits
        return 0


def _consumers(app, connection, timeout: float) -> dict[str, list[str]]:
    """Queue name → node names of the running workers consuming it (those that answered)."""
    answers = app.control.inspect(timeout=timeout, connection=connection).active_queues() or {}
    consumers: dict[str, list[str]] = {}
    for node, queues in sorted(answers.items()):
        for queue in queues or ():
            consumers.setdefault(queue["name"], []).append(node)
    return consumers


def queues_status(*, names: Iterable[str] | None = None, timeout: float = REPLY_TIMEOUT,
                  ask_workers: bool | None = None) -> list[QueueState]:
    """The state of ``names`` (default: the declared queues), in that order.

    ``ask_workers``: ``True`` always broadcasts, ``False`` never, ``None`` only when some queue
    has waiting messages. Takes at most about ``timeout`` seconds when it broadcasts, a few broker
    round trips otherwise. Raises the broker's connection error (after one retry) when the broker
    does not answer; changes nothing.
    """
    from config.celery import app

    names = list(dict.fromkeys(names if names is not None else queue_names()))
    with app.connection_for_read() as connection:
        connection.ensure_connection(max_retries=1)  # fail fast: kombu's default retries forever
        waiting = {name: _waiting(connection.default_channel, name) for name in names}
        ask = any(waiting.values()) if ask_workers is None else ask_workers
        consumers = _consumers(app, connection, timeout) if ask else None
    return [QueueState(name, waiting[name], None if consumers is None else tuple(consumers.get(name, ())))
            for name in names]


def queues_unconsumed(**options) -> list[QueueState]:
    """The queues holding waiting work that no running worker consumes, with their lengths: what
    the console shows as a problem. ``options`` as for :func:`queues_status`."""
    return [state for state in queues_status(**options) if state.unconsumed]


def queues_check(**options) -> list[QueueState]:
    """Log a WARNING for each queue with waiting work and no consumer (name, length, the fix) and
    return those queues. Never raises: a broker that does not answer is logged as a WARNING too
    (and the result is empty). ``options`` as for :func:`queues_status`."""
    try:
        unconsumed = queues_unconsumed(**options)
    except Exception as exc:  # noqa: BLE001 - a check must not take its caller (beat) down
        logger.warning("queue check: the broker did not answer (%s); will try again", type(exc).__name__)
        return []
    for state in unconsumed:
        logger.warning(
            "%d task(s) wait in Celery queue '%s' and no running worker consumes it: they will not run. "
            "Start `celery -A config worker` without -Q (it consumes every queue), or a worker with "
            "-Q %s (see README, Processes)", state.waiting, state.name, state.name)
    return unconsumed


def queues_check_forever(*, interval: float, stop: threading.Event | None = None) -> None:
    """Run :func:`queues_check` every ``interval`` seconds until ``stop`` is set (beat's thread,
    started by ``config.celery``); the first check comes one interval after the start, once the
    workers started beside beat have had time to come up."""
    from inventory.ingest.health import beat_seen

    stop = stop or threading.Event()
    beat_seen()  # the console's beat liveness (inventory.ingest.health)
    while not stop.wait(interval):
        beat_seen()
        queues_check()
