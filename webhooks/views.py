"""Webhook management routes (SPEC "Webhooks", DECISIONS §7); every route takes the API key."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import validate
from core.paging import list_response
from core.openapi import SUCCESS, TOTAL_COUNT_NOTE, UNAUTHORIZED, VALIDATION, json_string, operation
from core.scopes import Scope

from .services import management
from .serializers import WebhookInputSerializer, WebhookSerializer

URL_MASK_NOTE = ("For keys other than `admin`, credentials inside `url` are `[REDACTED]` (user and password, "
                 "credential query parameters, token-like path segments).")
WEBHOOK_NOT_FOUND = json_string("Webhook does not exist.", description="Unknown or malformed webhook id.")


class WebhookCreateView(APIView):
    """``POST /api/v1/webhook``."""

    @operation(Scope.ADMIN, "webhook_create", summary="Create a webhook",
               description=(
                   "Alerts whose type is in alertTypes (empty: all) on a host in hosts (empty: all) are POSTed to "
                   "url. A url resolving to a loopback, private, link-local or metadata address is refused unless "
                   "the server runs with WEBHOOK_ALLOW_PRIVATE_TARGETS."
               ),
               request=WebhookInputSerializer,
               responses={201: WebhookSerializer, 400: VALIDATION, 401: UNAUTHORIZED}, tags=["webhooks"])
    def post(self, request):
        serializer = WebhookInputSerializer(data=request.data)
        validate(serializer)
        hook = management.webhook_create(**serializer.service_kwargs())
        return Response(WebhookSerializer(hook, context={"request": request}).data, status=201)


class WebhooksView(APIView):
    """``GET /api/v1/webhooks``."""

    @operation(Scope.READ, "webhooks_list", summary="List webhooks",
               description=f"Newest first, each with its last 10 delivery attempts. {TOTAL_COUNT_NOTE} "
                           f"{URL_MASK_NOTE}",
               responses={200: WebhookSerializer(many=True), 401: UNAUTHORIZED}, tags=["webhooks"])
    def get(self, request):
        hooks = management.webhooks_list()
        return list_response(WebhookSerializer(hooks, many=True, context={"request": request}).data, len(hooks))


class WebhookView(APIView):
    """``GET`` / ``PUT`` / ``DELETE /api/v1/webhook/{webhookId}``."""

    @operation(Scope.READ, "webhook_read", summary="Read a webhook", description=URL_MASK_NOTE,
               responses={200: WebhookSerializer, 401: UNAUTHORIZED, 404: WEBHOOK_NOT_FOUND}, tags=["webhooks"])
    def get(self, request, webhook_id: str):
        hook = management.webhook_get(webhook_id=webhook_id)
        return Response(WebhookSerializer(hook, context={"request": request}).data)

    @operation(Scope.ADMIN, "webhook_update", summary="Update a webhook",
               description="Any subset of url, alertTypes, hosts, maxRetries. Pending deliveries follow the change.",
               request=WebhookInputSerializer(partial=True),
               responses={200: WebhookSerializer, 400: VALIDATION, 401: UNAUTHORIZED, 404: WEBHOOK_NOT_FOUND},
               tags=["webhooks"])
    def put(self, request, webhook_id: str):
        management.webhook_get(webhook_id=webhook_id)  # 404 before validation errors
        serializer = WebhookInputSerializer(data=request.data, partial=True)
        validate(serializer)
        hook = management.webhook_update(webhook_id=webhook_id, **serializer.service_kwargs())
        return Response(WebhookSerializer(hook, context={"request": request}).data)

    @operation(Scope.ADMIN, "webhook_delete", summary="Delete a webhook",
               description="Also drops its pending deliveries and its history.",
               responses={200: SUCCESS, 401: UNAUTHORIZED, 404: WEBHOOK_NOT_FOUND}, tags=["webhooks"])
    def delete(self, request, webhook_id: str):
        management.webhook_delete(webhook_id=webhook_id)
        return Response("Success")
