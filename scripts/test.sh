#!/usr/bin/env bash
# Run the whole test suite on the real PostgreSQL and Redis (started if needed).
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
source scripts/browser.sh
source scripts/_venv.sh
extra=()
# CI starts from a fresh database every time; locally --reuse-db keeps it fast.
if [ "${CI:-}" = "true" ]; then extra+=(--create-db); fi
exec python -m pytest "${extra[@]}" "$@"
