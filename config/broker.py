"""The Redis broker transport, with one fix: a closed connection is a connection error.

When Redis goes away, the worker's consumer closes its broker connection and, in the same
moment, may still acknowledge a message or hand unacknowledged ones back. kombu 5.7's Redis
channel then builds a new client from a connection whose ``client`` is already ``None`` and
raises ``AttributeError``, which Celery treats as an unrecoverable error: the worker exits
instead of reconnecting. Raising redis' ``ConnectionError`` there instead lets kombu and Celery
take their usual path (ignore it while closing, log a failed acknowledgement, reconnect).
The lost acknowledgements are harmless: every task's work is claimed in the database, and the
sweeps re-send what was not done (``tests/hardening/test_faults.py`` restarts Redis under load).

Selected with ``CELERY_BROKER_TRANSPORT`` when ``REDIS_URL`` is set (``config.settings.base``).
"""
from __future__ import annotations

from kombu.transport import redis as kombu_redis
from redis import exceptions as redis_exceptions


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict:
        if self.connection.client is None:
            raise redis_exceptions.ConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
