"""WSGI entry point (gunicorn config.wsgi)."""
import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
_site = get_wsgi_application()

# The API's requests go through the middleware an API answer needs (request id, security headers,
# Content-Length, X-Frame-Options), not the ones of the admin's pages (static files, sessions, CSRF,
# users, messages, login throttling): on a cached list answer those cost a sixth of the request.
API_PREFIX = "/api/"
API_MIDDLEWARE = (
    "core.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
)


def _api_handler():
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler

    full = settings.MIDDLEWARE
    settings.MIDDLEWARE = [m for m in full if m in API_MIDDLEWARE]
    try:
        return WSGIHandler()  # builds its middleware chain from the setting, once
    finally:
        settings.MIDDLEWARE = full


_api = _api_handler()


def application(environ, start_response):
    """``/api/…`` to the API's handler, everything else (admin, static files) to the full one."""
    handler = _api if environ.get("PATH_INFO", "").startswith(API_PREFIX) else _site
    return handler(environ, start_response)


def _warm_and_freeze() -> None:
    """Load the URL conf (and with it every view) now, then move everything loaded so far out of
    the garbage collector's reach: a full collection over Django's ~100,000 start-up objects
    stops every request thread for about 60 ms, and they are never garbage."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the views
    gc.freeze()


_warm_and_freeze()
