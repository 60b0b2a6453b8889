#!/usr/bin/env bash
# The SQLite job: the ingestion, inventory and demo-seed tests on the database and broker
# `make run` uses when DATABASE_URL / REDIS_URL are unset (an SQLite file, kombu's filesystem
# transport). Tests that need a PostgreSQL-only feature are skipped with their reason.
# Extra arguments go to pytest; without a test path it runs tests/inventory (ingestion with a real
# worker process, the inventory routes, the import_har and seed_demo commands) and the alerts
# ingestion raises (tests/detections/test_alerts_from_traffic.py).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
unset DATABASE_URL REDIS_URL
export DJANGO_SETTINGS_MODULE=config.settings.test_sqlite
# A fresh database and broker folder every time (the settings module names them).
rm -rf var/test-sqlite
paths=()
for arg in "$@"; do case "$arg" in tests*) paths+=("$arg");; esac; done
if [ "${#paths[@]}" -eq 0 ]; then set -- "$@" tests/inventory tests/detections/test_alerts_from_traffic.py; fi
exec python -m pytest --create-db "$@"
