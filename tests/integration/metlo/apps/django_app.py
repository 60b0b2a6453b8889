"""Single-file Django project instrumented with the Metlo agent (either version).

Run with: gunicorn django_app:application
"""
import json

from django.conf import settings

import agent_settings as cfg

metlo_config = {"API_KEY": cfg.API_KEY, "METLO_HOST": cfg.COLLECTOR_URL}
if cfg.KIND == "v2":
    metlo_config.update(cfg.v2_options())

settings.configure(
    DEBUG=False,
    SECRET_KEY="metlo-harness-not-secret",
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=["metlo.django.MetloDjango"],
    INSTALLED_APPS=[],
    DATABASES={},
    METLO_CONFIG=metlo_config,
    WSGI_APPLICATION=__name__ + ".application",
)

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpResponseNotAllowed, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402


def get_user(request, user_id):
    return JsonResponse({"user": {"id": user_id, "name": "Alice", "email": "alice@example.com",
                                  "tags": ["admin", "beta"]}})


def login(request):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        data = {}
    return JsonResponse({"ok": True, "token": "tok_" + str(data.get("username", "")),
                         "contact": "support@example.com"})


def search(request):
    return JsonResponse({"q": request.GET.get("q"), "results": []})


urlpatterns = [
    path("users/<int:user_id>", get_user),
    path("login", login),
    path("search", search),
]

application = get_wsgi_application()
