"""Operators' console: alerts (with bulk resolve / ignore / reopen) and uploaded OpenAPI specs."""
from django.contrib import admin, messages

from .models import Alert, OpenApiSpec
from .services import UpdateType, alerts_bulk_update


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ("type", "risk_score", "status", "endpoint", "short_description", "created_at")
    list_filter = ("status", "type", "risk_score")
    search_fields = ("description", "endpoint__path", "endpoint__host__name")
    list_select_related = ("endpoint__host",)
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    readonly_fields = ("uuid", "endpoint", "type", "risk_score", "status", "description", "context",
                       "created_at", "updated_at")
    fields = (*readonly_fields, "resolution_message")
    actions = ["resolve_selected", "ignore_selected", "reopen_selected"]

    def has_add_permission(self, request):
        return False  # alerts come from traffic analysis

    @admin.display(description="description")
    def short_description(self, obj):
        return obj.description[:120]

    def _bulk(self, request, queryset, update_type: str, verb: str):
        changed, skipped = alerts_bulk_update(alert_ids=queryset.values_list("uuid", flat=True),
                                              update_type=update_type)
        level = messages.SUCCESS if changed else messages.WARNING
        self.message_user(request, f"{verb} {changed} alert(s); skipped {skipped} whose status does not allow it.",
                          level)

    @admin.action(description="Resolve selected alerts (Open ones)", permissions=["change"])
    def resolve_selected(self, request, queryset):
        self._bulk(request, queryset, UpdateType.RESOLVE, "Resolved")

    @admin.action(description="Ignore selected alerts (Open ones)", permissions=["change"])
    def ignore_selected(self, request, queryset):
        self._bulk(request, queryset, UpdateType.IGNORE, "Ignored")

    @admin.action(description="Reopen selected alerts (Resolved or Ignored ones)", permissions=["change"])
    def reopen_selected(self, request, queryset):
        resolved = queryset.filter(status="Resolved").values_list("uuid", flat=True)
        ignored = queryset.filter(status="Ignored").values_list("uuid", flat=True)
        c1, s1 = alerts_bulk_update(alert_ids=list(resolved), update_type=UpdateType.UNRESOLVE)
        c2, s2 = alerts_bulk_update(alert_ids=list(ignored), update_type=UpdateType.UNIGNORE)
        self.message_user(request, f"Reopened {c1 + c2} alert(s); skipped {s1 + s2}.")


@admin.register(OpenApiSpec)
class OpenApiSpecAdmin(admin.ModelAdmin):
    list_display = ("name", "openapi_version", "extension", "hosts", "updated_at")
    search_fields = ("name",)
    readonly_fields = ("name", "openapi_version", "extension", "hosts", "text", "created_at", "updated_at")
    exclude = ("spec",)

    def has_add_permission(self, request):
        return False  # uploaded through POST /api/v1/spec/new, which validates the document
