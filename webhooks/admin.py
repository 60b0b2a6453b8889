"""Operators' console: webhooks with their recent attempts, and the delivery queue (read-only)."""
from django.contrib import admin

from console.masking import SecretsMaskedAdmin
from core.masking import url_masked

from .models import Webhook, WebhookDelivery, WebhookRun


class WebhookRunInline(admin.TabularInline):
    model = WebhookRun
    fields = ("created_at", "attempt", "ok", "status_code", "duration_ms", "msg")
    readonly_fields = fields
    ordering = ("-created_at", "-id")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Webhook)
class WebhookAdmin(SecretsMaskedAdmin, admin.ModelAdmin):
    masked_fields = {"url": url_masked}  # chat webhooks carry their token in the URL
    list_display = ("uuid", "url", "alert_types", "hosts", "max_retries", "created_at")
    search_fields = ("url",)
    readonly_fields = ("uuid", "created_at", "updated_at")
    inlines = [WebhookRunInline]

    def has_add_permission(self, request):
        return False  # created through POST /api/v1/webhook, which runs the SSRF check

    def has_change_permission(self, request, obj=None):
        return False  # likewise PUT /api/v1/webhook/{id}


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("uuid", "webhook", "status", "attempts", "reclaims", "next_attempt_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("uuid", "webhook__url")
    list_select_related = ("webhook",)
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
    exclude = ("payload",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
