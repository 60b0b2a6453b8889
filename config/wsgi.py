"""WSGI entry point (gunicorn config.wsgi)."""
import gc
import os

from django.core.wsgi import get_wsgi_application

from core import malloc

malloc.tune()  # before anything big is allocated: glibc's arenas and mmap threshold (core/malloc.py)
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


class _Released:
    """An API answer that lets go of its body once sent. A DRF view, its request and its response
    form a reference cycle (``view.request``, ``request.parser_context["view"]``, ``view.response``)
    that only the cyclic garbage collector frees, and a long request (gen-test-endpoints' 1 MB
    answers) gets them promoted to the oldest generation first: 43 sent 1.2 MB answers were
    found waiting there at once (50 MB; bench/README.md "Web memory")."""

    __slots__ = ("response",)

    def __init__(self, response):
        self.response = response

    def __iter__(self):
        return iter(self.response)

    def close(self) -> None:
        try:
            self.response.close()
        finally:
            self.response.content = b""
            if hasattr(self.response, "data"):  # a DRF Response's data, rendered and sent by now
                self.response.data = None


def application(environ, start_response):
    """``/api/…`` to the API's handler, everything else (admin, static files) to the full one."""
    malloc.served()
    if not environ.get("PATH_INFO", "").startswith(API_PREFIX):
        return _site(environ, start_response)
    response = _api(environ, start_response)
    return response if getattr(response, "streaming", True) else _Released(response)


def _warm_and_freeze() -> None:
    """Load the URL conf (and with it every view) now, then move everything loaded so far out of
    the garbage collector's reach: a full collection over Django's ~100,000 start-up objects
    stops every request thread for about 60 ms, and they are never garbage."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the views
    gc.freeze()
    from core.memdebug import install

    install()  # off unless APISCOPE_MEMDEBUG is set (debugging memory only)


_warm_and_freeze()
