"""Operators' console: alerts (with bulk resolve / ignore / reopen) and OpenAPI specs (uploaded and
generated from traffic, each downloadable)."""
from django.contrib import admin, messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

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
    list_display = ("name", "is_auto_generated", "openapi_version", "extension", "hosts", "updated_at", "download")
    list_filter = ("is_auto_generated",)
    search_fields = ("name",)
    readonly_fields = ("name", "is_auto_generated", "openapi_version", "extension", "hosts", "download", "text",
                       "created_at", "updated_at")
    exclude = ("spec", "source_host")
    actions = ["regenerate_selected"]

    def has_add_permission(self, request):
        return False  # uploaded through POST /api/v1/spec/new, which validates the document

    def has_delete_permission(self, request, obj=None):
        # A generated spec goes with its host (and would be rebuilt from its traffic).
        return super().has_delete_permission(request, obj) and not (obj is not None and obj.is_auto_generated)

    def get_urls(self):
        download = self.admin_site.admin_view(self.download_view)
        return [path("<int:spec_id>/download/", download, name="detections_openapispec_download"),
                *super().get_urls()]

    @admin.display(description="download")
    def download(self, obj):
        if obj is None or obj.pk is None:
            return "-"
        url = reverse("admin:detections_openapispec_download", args=[obj.pk])
        return format_html('<a href="{}">{}.{}</a>', url, obj.name, obj.extension)

    def download_view(self, request, spec_id: int):
        """The document as a file: the upload as it was, or the generated JSON."""
        spec = get_object_or_404(OpenApiSpec, pk=spec_id)
        if not self.has_view_permission(request, spec):
            return HttpResponse(status=403)
        kind = "application/json" if spec.extension == OpenApiSpec.Extension.JSON else "application/yaml"
        response = HttpResponse(spec.text, content_type=f"{kind}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{spec.name}.{spec.extension}"'
        return response

    @admin.action(description="Rebuild selected generated specs from traffic now")
    def regenerate_selected(self, request, queryset):
        from .openapi.generate.service import generated_spec_refresh

        hosts = list(queryset.filter(is_auto_generated=True).values_list("source_host_id", flat=True))
        for host_id in hosts:
            generated_spec_refresh(host_id=host_id, force=True)
        self.message_user(request, f"Rebuilt {len(hosts)} generated spec(s); uploaded ones are left alone.")
