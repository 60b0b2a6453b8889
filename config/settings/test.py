"""Test settings: always the real PostgreSQL and Redis of this machine.

``DATABASE_URL`` / ``REDIS_URL`` may point elsewhere (another database name
or Redis db number lets two suites run side by side); SQLite is never used.
"""
from .base import *  # noqa: F403
from .base import env, secret_key_check

DATABASES = {
    "default": env.db_url("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/apiscope"),
}
if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    raise RuntimeError("The test suite runs on PostgreSQL only; set DATABASE_URL to a postgres:// URL.")
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BROKER_TRANSPORT = "config.broker:Transport"

DEBUG = False
# A key of the test suite's own: test settings run with DEBUG off, where the development key is refused.
SECRET_KEY = env.str("SECRET_KEY", default="test-only-secret-key-never-deployed-0123456789abcdefghijkl")
secret_key_check(debug=DEBUG, secret_key=SECRET_KEY)
# Every single-trace post sends its drain at once (no window), as test processes come and go
# between tests; tests/inventory/test_single_coalescing.py sets a window where it is under test.
INGEST_DRAIN_WINDOW = env.float("INGEST_DRAIN_WINDOW", default=0.0)
# Analyses in tests are small: shorter time limits, so the lease of a worker killed by a test ends
# (and its rows are dealt with) within the test's patience (inventory/ingest/pipeline.py).
INGEST_ANALYSIS_TIME_LIMIT = env.int("INGEST_ANALYSIS_TIME_LIMIT", default=40)
INGEST_ANALYSIS_SOFT_TIME_LIMIT = env.int("INGEST_ANALYSIS_SOFT_TIME_LIMIT", default=35)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=True)
# Test targets listen on 127.0.0.1; tests of the guard override this.
TESTING_ALLOWED_TARGETS = env.list("TESTING_ALLOWED_TARGETS", default=["127.0.0.1", "::1"])
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Static files are not collected for tests; a browser test's server serves them from the apps'
# folders (WhiteNoise reading the finders) with TEST_SERVE_STATIC=true (tests/console/test_browser.py).
if env.bool("TEST_SERVE_STATIC", default=False):
    WHITENOISE_USE_FINDERS = True
else:
    MIDDLEWARE = [m for m in MIDDLEWARE if "whitenoise" not in m]  # noqa: F405
# Whole-answer caching of the list routes and API-key lookups are off in tests (tests write rows
# behind the writers' backs, roll back without bumping the inventory version, and count queries);
# the tests of the caches turn them on (tests/inventory/test_read_caches.py).
INVENTORY_PAGE_CACHE_SECONDS = env.float("INVENTORY_PAGE_CACHE_SECONDS", default=0)
# Totals too: on a loaded machine a count takes over INVENTORY_COUNT_CACHE_MIN_MS, was kept, and the
# next test (rolled back, same version) read the previous test's total. test_list_totals_and_paging
# turns it on.
INVENTORY_COUNT_CACHE_SECONDS = env.int("INVENTORY_COUNT_CACHE_SECONDS", default=0)
API_KEY_CACHE_SECONDS = min(env.float("API_KEY_CACHE_SECONDS", default=0), 1.0)
