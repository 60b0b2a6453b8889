"""WSGI entry point (gunicorn config.wsgi)."""
import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()


def _warm_and_freeze() -> None:
    """Load the URL conf (and with it every view) now, then move everything loaded so far out of
    the garbage collector's reach: a full collection over Django's ~100,000 start-up objects
    stops every request thread for about 60 ms, and they are never garbage."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the views
    gc.freeze()


_warm_and_freeze()
