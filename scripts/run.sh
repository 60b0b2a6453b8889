#!/usr/bin/env bash
# Set up and run the service: web (gunicorn on 127.0.0.1:8000), Celery worker and beat.
# With no DATABASE_URL / REDIS_URL it uses an embedded SQLite file and a
# filesystem broker under var/, so it needs nothing but Python.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-config.settings.local}"
mkdir -p var
python manage.py migrate --noinput
python manage.py collectstatic --noinput --verbosity 0
# Demo traffic on a fresh install, so the inventory has something to show (SEED_DEMO=0 to skip).
if [ "${SEED_DEMO:-1}" = "1" ]; then
  python manage.py seed_demo --if-empty --no-progress
fi
first_key="$(python manage.py createapikey first-key --if-none 2>/dev/null)"
if [ -n "$first_key" ]; then
  echo "==> first API key (shown once, store it now): $first_key"
fi
echo "==> serving on http://${WEB_BIND:-127.0.0.1:8000}/api/v1 (docs: /api/v1/docs, admin: /admin/)"
exec honcho start --no-prefix -f Procfile 2>&1
