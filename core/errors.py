"""SPEC/DECISIONS error bodies, produced in one place.

* validation: ``400 {"type": "ZOD", "message": "Invalid parameters", "err": {"name": "ZodError", "issues": [...]}}``
* domain errors (unknown ids, conflicts, SPEC's special cases): their own status and JSON body
* ``401 "Client unauthorized"``, ``404 "Not found."``, ``405``, ``413``, ``415``
* anything unexpected: ``500 "Internal server error."``, logged with the request id
"""
from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from .logsafe import withheld
from .zod import ZodIssue, issues_from_serializer

logger = logging.getLogger(__name__)


class ApiError(Exception):
    """An error with a fixed status and JSON body (a string or an object)."""

    status_code = status.HTTP_400_BAD_REQUEST
    body: Any = "Bad request."

    def __init__(self, body: Any = None, *, status_code: int | None = None):
        if body is not None:
            self.body = body
        if status_code is not None:
            self.status_code = status_code
        super().__init__(str(self.body))


class NotFoundError(ApiError):
    status_code = status.HTTP_404_NOT_FOUND
    body = "Not found."


class EndpointNotFound(NotFoundError):
    body = "Endpoint does not exist."


class DataFieldNotFound(NotFoundError):
    body = "Data field does not exist."


class WebhookNotFound(NotFoundError):
    body = "Webhook does not exist."


class AlertNotFound(NotFoundError):
    body = "Alert does not exist."


class ConflictError(ApiError):
    status_code = status.HTTP_409_CONFLICT
    body = "Conflict."


class PayloadTooLarge(ApiError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    body = "Payload too large."


class ServiceBusy(ApiError):
    """Backpressure: the caller should retry after ``retry_after`` seconds."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    body = "Service busy, retry later."

    def __init__(self, body: Any = None, *, retry_after: int = 5):
        super().__init__(body)
        self.retry_after = retry_after


MAX_ISSUES = 100


class ZodError(ApiError):
    """A validation error carrying zod-style issues (the first ``MAX_ISSUES``: a body with 100,000
    invalid items must not answer 100,000 issues)."""

    def __init__(self, issues: list[ZodIssue]):
        issues = list(issues[:MAX_ISSUES])
        self.issues = issues
        super().__init__(zod_body(issues))


def zod_body(issues: list[ZodIssue]) -> dict:
    return {
        "type": "ZOD",
        "message": "Invalid parameters",
        "err": {"name": "ZodError", "issues": issues},
    }


def validate(serializer: serializers.Serializer) -> dict:
    """Run a serializer; raise :class:`ZodError` built from its errors, else return validated data."""
    if not serializer.is_valid():
        raise ZodError(issues_from_serializer(serializer))
    return serializer.validated_data


def _json(body: Any, status_code: int, headers: dict | None = None) -> Response:
    response = Response(body, status=status_code)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def exception_handler(exc: Exception, context: dict) -> Response:
    """DRF's exception handler: every error leaves the API in a SPEC shape."""
    if isinstance(exc, ServiceBusy):
        return _json(exc.body, exc.status_code, {"Retry-After": str(exc.retry_after)})
    if isinstance(exc, ApiError):
        return _json(exc.body, exc.status_code)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        return _json("Client unauthorized", status.HTTP_401_UNAUTHORIZED, {"WWW-Authenticate": "ApiKey"})
    if isinstance(exc, exceptions.ParseError):
        return _json(zod_body([{"code": "custom", "path": [], "message": f"Malformed request body: {exc.detail}"}]), 400)
    if isinstance(exc, exceptions.ValidationError):
        return _json(zod_body(issues_from_detail(exc.detail)), 400)
    if isinstance(exc, (Http404, exceptions.NotFound)):
        return _json("Not found.", status.HTTP_404_NOT_FOUND)
    if isinstance(exc, exceptions.MethodNotAllowed):
        return _json("Method not allowed.", status.HTTP_405_METHOD_NOT_ALLOWED)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return _json(f"Unsupported media type: {exc.detail}", status.HTTP_415_UNSUPPORTED_MEDIA_TYPE)
    if isinstance(exc, exceptions.NotAcceptable):
        return _json("Not acceptable.", status.HTTP_406_NOT_ACCEPTABLE)
    if isinstance(exc, exceptions.PermissionDenied):
        return _json("Forbidden.", status.HTTP_403_FORBIDDEN)
    if isinstance(exc, exceptions.Throttled):
        return _json("Too many requests.", status.HTTP_429_TOO_MANY_REQUESTS, {"Retry-After": str(int(exc.wait or 1))})
    if isinstance(exc, RequestDataTooBig):
        return _json("Payload too large.", status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, exceptions.APIException):
        return _json(str(exc.detail), exc.status_code)
    request = context.get("request")
    logger.error(
        "Unhandled error in %s %s",
        getattr(request, "method", "?"),
        getattr(request, "path", "?"),
        exc_info=withheld(exc),
    )
    return _json("Internal server error.", status.HTTP_500_INTERNAL_SERVER_ERROR)


def issues_from_detail(detail: Any, path: list | None = None) -> list[ZodIssue]:
    """Fallback conversion of bare DRF error details (no serializer at hand)."""
    path = path or []
    if isinstance(detail, dict):
        return [i for key, sub in detail.items() for i in issues_from_detail(sub, [*path, key])]
    if isinstance(detail, list):
        if all(isinstance(d, str) for d in detail):
            return [{"code": "custom", "path": path, "message": str(d)} for d in detail]
        return [i for idx, sub in enumerate(detail) for i in issues_from_detail(sub, [*path, idx])]
    return [{"code": "custom", "path": path, "message": str(detail)}]


def json_not_found(request, exception=None) -> JsonResponse:
    """handler404 and the catch-all for unknown routes outside the keyed API."""
    return JsonResponse("Not found.", status=404, safe=False)


def api_route_not_found(request) -> JsonResponse:
    """The catch-all for unknown ``/api/v1`` and ``/api/v2`` routes.

    DECISIONS §2 orders the checks 401 (key) before 404 (unknown route): without a valid key
    nobody learns which routes exist. A valid key of any scope gets ``404 "Not found."``.
    """
    from rest_framework.exceptions import AuthenticationFailed

    from .authentication import ApiKeyAuthentication

    try:
        known = ApiKeyAuthentication().authenticate(request) is not None
    except AuthenticationFailed:
        known = False
    if not known:
        return JsonResponse("Client unauthorized", status=401, safe=False, headers={"WWW-Authenticate": "ApiKey"})
    return json_not_found(request)


def json_server_error(request) -> JsonResponse:
    return JsonResponse("Internal server error.", status=500, safe=False)


def json_bad_request(request, exception=None) -> JsonResponse:
    return JsonResponse("Bad request.", status=400, safe=False)
