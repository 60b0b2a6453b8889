"""Key scopes (DECISIONS §2): what each route needs, what each scope grants, and the one permission.

Every handler of an API view declares the least scope that serves it, next to its schema::

    @requires_scope(Scope.READ)
    @extend_schema(...)
    def get(self, request): ...

What a key of each scope may then call (:func:`scope_allows`):

* ``ingest`` — routes that need ``ingest`` and nothing else: ``GET /verify``, ``GET /agent-config``,
  ``POST /log-request/single``, ``POST /log-request/batch``, ``POST /api/v2/log-request/batch``;
* ``read`` — every ``GET`` (and ``HEAD``) of the API, ``/verify`` and ``/agent-config`` included, but
  none of the ingestion POSTs; secrets in the answers are masked (``core.masking``);
* ``admin`` — everything.

:class:`ScopePermission` (the default permission class) enforces it after authentication and
before the handler runs, so the checks answer in DECISIONS' order: ``401`` (no or unknown key),
``404`` (unknown route: the catch-all in ``config/urls.py`` has no permission), ``405`` (a method
the route does not have: allowed through so DRF answers it), ``403 "Forbidden."`` (scope), then
whatever the handler decides (``400`` validation, ``404`` unknown id). A handler without a
declaration is admin-only (fail closed); ``tests/core/test_scopes.py`` walks the URL conf so that
no route ships without one. ``OPTIONS`` is allowed to a key that may call some method of the route.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from rest_framework.permissions import BasePermission

from .models import Scope

logger = logging.getLogger(__name__)

READ_METHODS = frozenset({"GET", "HEAD"})
HANDLER_METHODS = ("get", "post", "put", "patch", "delete")
_ATTRIBUTE = "required_scope"


def requires_scope(scope: Scope) -> Callable:
    """Declare the least scope a view handler needs (read by :class:`ScopePermission` and the schema)."""
    if scope not in Scope.values:
        raise ValueError(f"Unknown scope {scope!r}.")

    def decorate(handler: Callable) -> Callable:
        setattr(handler, _ATTRIBUTE, Scope(scope))
        return handler

    return decorate


def required_scope(view, method: str) -> Scope | None:
    """The scope the view's handler of ``method`` declares; ``None`` when the handler declares
    none or the view has no such handler. ``view`` is a view instance or class."""
    handler = getattr(view, method.lower(), None)
    if handler is None and method.upper() == "HEAD":
        handler = getattr(view, "get", None)
    return getattr(handler, _ATTRIBUTE, None)


def scope_allows(scope: str, needed: Scope, method: str) -> bool:
    """Whether a key of ``scope`` may call a handler that needs ``needed`` with ``method``."""
    if scope == Scope.ADMIN:
        return True
    if scope == Scope.INGEST:
        return needed == Scope.INGEST
    if scope == Scope.READ:
        return method.upper() in READ_METHODS and needed in (Scope.INGEST, Scope.READ)
    return False


def allowed_scopes(needed: Scope, method: str) -> list[str]:
    """The scopes that may call such a handler, least first (as the OpenAPI schema lists them)."""
    return [scope for scope in Scope.values if scope_allows(scope, needed, method)]


def implemented_methods(view) -> list[str]:
    """The HTTP methods (upper case) a view class or instance has a handler for, OPTIONS aside."""
    return [method.upper() for method in HANDLER_METHODS if hasattr(view, method)]


def sees_secrets(request) -> bool:
    """Whether the request's key may see secrets in clear (admin); ``read`` keys get them masked."""
    return getattr(request.auth, "scope", None) == Scope.ADMIN


class ScopePermission(BasePermission):
    """An authenticated key whose scope allows this handler (see the module docstring).

    Without a key DRF turns the refusal into ``401``; with one, into ``403 "Forbidden."``
    (``core.errors.exception_handler``). Logs the key's id and scope, never the key.
    """

    def has_permission(self, request, view) -> bool:
        key = request.auth
        if key is None:
            return False
        method = request.method.upper()
        if method == "OPTIONS":
            needed = [(m, required_scope(view, m) or Scope.ADMIN) for m in implemented_methods(view)]
            allowed = any(scope_allows(key.scope, scope, m) for m, scope in needed)
        elif not hasattr(view, method.lower()):
            return True  # not a method of this route: DRF answers 405
        else:
            allowed = scope_allows(key.scope, required_scope(view, method) or Scope.ADMIN, method)
        if not allowed:
            logger.info("API key #%s (scope %s) refused: %s %s", key.id, key.scope, method, request.path)
        return allowed
