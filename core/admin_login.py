"""Admin login throttling (django-axes): the client address logins are counted against, and the
lockout page. Settings: the "Admin login throttling" block of config/settings/base.py.
"""
from __future__ import annotations

import ipaddress

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse


def client_ip(request: HttpRequest) -> str | None:
    """The address failed admin logins are counted against (django-axes' ``AXES_CLIENT_IP_CALLABLE``).

    ``REMOTE_ADDR``, the connecting peer, unless ``ADMIN_LOGIN_TRUSTED_PROXIES`` is n > 0: then
    the n-th ``X-Forwarded-For`` entry from the right, the address the outermost trusted proxy
    saw. Entries left of it are the client's own say and are never used. A header with fewer
    entries, or an entry that is not an IP address, gives ``REMOTE_ADDR`` again.
    """
    remote = request.META.get("REMOTE_ADDR") or None
    hops = settings.ADMIN_LOGIN_TRUSTED_PROXIES
    if hops <= 0:
        return remote
    entries = [entry.strip() for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    if len(entries) < hops:
        return remote
    try:
        return str(ipaddress.ip_address(entries[-hops]))
    except ValueError:
        return remote


def lockout_response(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    """The answer to a locked-out login (``AXES_LOCKOUT_CALLABLE``): ``429`` with an admin-styled
    page saying for how long and how an operator lifts the lock, and ``Retry-After``."""
    minutes = settings.ADMIN_LOGIN_COOLOFF_MINUTES
    context = {
        **admin.site.each_context(request),
        "title": "Too many failed logins",
        "failure_limit": settings.ADMIN_LOGIN_FAILURE_LIMIT,
        "cooloff_minutes": minutes,
    }
    response = TemplateResponse(request, "core/admin_lockout.html", context, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response.render()
