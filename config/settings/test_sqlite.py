"""Test settings of the SQLite job: the database and broker ``make run`` uses by default.

The main suite runs on PostgreSQL and Redis (``config.settings.test``). This job runs the
ingestion, inventory and demo-seed tests on an SQLite file with the filesystem Celery broker,
so the path a bare ``make run`` takes is tested too (``make test-sqlite``); the worker processes
tests start get ``make run``'s own settings on the same files (``tests/support/processes.py``).
Tests that need a PostgreSQL-only feature are marked ``not_on_sqlite("why")`` and skipped here
with that reason (``tests/conftest.py``).

Everything lives under ``var/test-sqlite/`` of the checkout, which ``scripts/test_sqlite.sh``
empties first: two checkouts can run the job side by side.
"""
from .base import BASE_DIR, filesystem_broker_options
from .test import *  # noqa: F403

VAR_DIR = BASE_DIR / "var" / "test-sqlite"
VAR_DIR.mkdir(parents=True, exist_ok=True)
# A file, not :memory:, so that every connection and the worker processes see the same database,
# as with make run.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(VAR_DIR / "apiscope.sqlite3"),
        "TEST": {"NAME": str(VAR_DIR / "test_apiscope.sqlite3")},
        # The options of config.settings.base for an SQLite DATABASE_URL (make run).
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
    },
}
# make run's broker when REDIS_URL is unset: kombu's filesystem transport.
REDIS_URL = ""
CELERY_BROKER_URL = "filesystem://"
CELERY_BROKER_TRANSPORT = None
CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(VAR_DIR / "broker")
for _folder in ("queue", "processed", "control"):
    (VAR_DIR / "broker" / _folder).mkdir(parents=True, exist_ok=True)
