"""Operators' console for the inventory: endpoints, hosts and (read-only) traces.

Changes go through the same services as the REST routes (deleting, marking
authenticated, recomputing risk after field edits).
"""
from django.contrib import admin
from django.db import transaction
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html

from classification.admin import DataClassListFilter, DataFieldForm
from classification.models import DataField
from classification.services import endpoints_refresh_risk
from detections.models import Alert

from .api import services
from .api.filters import with_effective_auth
from .models import ApiTrace, Endpoint, Host, IngestBatch


def _deletion_summary(objs, endpoints):
    """``get_deleted_objects``' answer: the objects themselves and counts of what goes with them."""
    ids = endpoints.values("uuid")
    counts = {
        "endpoints": endpoints.count(),
        "data fields": DataField.objects.filter(endpoint__in=ids).count(),
        "alerts": Alert.objects.filter(endpoint__in=ids).count(),
        "traces": ApiTrace.objects.filter(endpoint__in=ids).count(),
    }
    return [str(o) for o in objs], {name: n for name, n in counts.items() if n}, set(), []


class AuthenticatedFilter(admin.SimpleListFilter):
    """The effective value: the operator's setting when given, else detection."""

    title = "authenticated"
    parameter_name = "authenticated"

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No"), ("override", "Set by an operator")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return with_effective_auth(queryset).filter(effective_auth=self.value() == "yes")
        if self.value() == "override":
            return queryset.filter(is_authenticated_user_set__isnull=False)
        return queryset


class DataFieldInline(admin.TabularInline):
    model = DataField
    form = DataFieldForm
    extra = 0
    fields = ("data_section", "data_path", "status_code", "data_classes", "false_positives", "entity", "last_seen")
    readonly_fields = ("data_section", "data_path", "status_code", "last_seen")
    ordering = ("data_section", "data_path")
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # fields come from traffic


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ("method", "path", "host", "risk_score", "authenticated", "classes", "last_active")
    list_display_links = ("method", "path")
    list_select_related = ("host",)
    list_filter = (
        ("host", admin.RelatedOnlyFieldListFilter), "method", "risk_score", AuthenticatedFilter, DataClassListFilter,
        "is_graphql", "full_trace_capture_enabled",
    )
    search_fields = ("path", "host__name", "owner", "openapi_spec_name")
    ordering = ("-risk_rank", "-last_active")
    inlines = [DataFieldInline]
    # The operators' endpoint page (console/endpoint.py): usage, alerts, fields, tests, traces, spec.
    change_form_template = "console/endpoint_change.html"
    actions = ["mark_authenticated", "mark_unauthenticated", "clear_authenticated_override", "delete_selected"]
    readonly_fields = (
        "uuid", "host", "method", "path", "path_regex", "num_segments", "num_literal_segments", "risk_score",
        "data_classes", "is_authenticated_detected", "unauthenticated_success_seen", "is_graphql", "graphql_schema",
        "first_detected", "last_active", "created_at", "updated_at", "traces_link",
    )
    fieldsets = (
        (None, {"fields": ("uuid", "host", "method", "path", "risk_score", "data_classes", "traces_link")}),
        ("Operator settings", {"fields": ("is_authenticated_user_set", "full_trace_capture_enabled", "owner",
                                          "openapi_spec_name", "resource_permissions")}),
        ("Detection", {"fields": ("is_authenticated_detected", "unauthenticated_success_seen", "is_graphql",
                                  "graphql_schema", "first_detected", "last_active", "created_at", "updated_at")}),
        ("Matching", {"classes": ("collapse",), "fields": ("path_regex", "num_segments", "num_literal_segments")}),
    )

    def has_add_permission(self, request):
        return False  # endpoints come from traffic (or update-paths)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        from console.endpoint import endpoint_page_context

        context = {**endpoint_page_context(request, object_id), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, context)

    @admin.display(description="authenticated", boolean=True)
    def authenticated(self, obj):
        return obj.is_authenticated

    @admin.display(description="data classes")
    def classes(self, obj):
        return ", ".join(obj.data_classes)

    @admin.display(description="traces")
    def traces_link(self, obj):
        url = reverse("admin:inventory_apitrace_changelist") + f"?endpoint__uuid__exact={obj.uuid}"
        return format_html('<a href="{}">Recent traces</a>', url)

    def save_related(self, request, form, formsets, change):
        with transaction.atomic():
            super().save_related(request, form, formsets, change)
            endpoints_refresh_risk(endpoint_ids=[form.instance.uuid])

    def get_deleted_objects(self, objs, request):
        """A summary for the confirmation page; traces are deleted with their endpoint even though
        nobody may delete them one by one (and listing a hundred per endpoint helps no one)."""
        return _deletion_summary(objs, Endpoint.objects.filter(uuid__in=[o.pk for o in objs]))

    def delete_model(self, request, obj):
        services.endpoints_delete(endpoint_ids=[obj.uuid])

    def delete_queryset(self, request, queryset):
        services.endpoints_delete(endpoint_ids=list(queryset.values_list("uuid", flat=True)))

    @admin.action(description="Mark selected endpoints authenticated", permissions=["change"])
    def mark_authenticated(self, request, queryset):
        count = services.endpoints_set_authenticated(endpoint_ids=queryset.values_list("uuid", flat=True),
                                                     authenticated=True)
        self.message_user(request, f"Marked {count} endpoint(s) authenticated.")

    @admin.action(description="Mark selected endpoints unauthenticated", permissions=["change"])
    def mark_unauthenticated(self, request, queryset):
        count = services.endpoints_set_authenticated(endpoint_ids=queryset.values_list("uuid", flat=True),
                                                     authenticated=False)
        self.message_user(request, f"Marked {count} endpoint(s) unauthenticated.")

    @admin.action(description="Clear the operator's authentication setting (use detection)", permissions=["change"])
    def clear_authenticated_override(self, request, queryset):
        count = services.endpoints_set_authenticated(endpoint_ids=queryset.values_list("uuid", flat=True),
                                                     authenticated=None)
        self.message_user(request, f"Cleared the setting of {count} endpoint(s).")


@admin.register(Host)
class HostAdmin(admin.ModelAdmin):
    list_display = ("name", "is_public", "public_override", "is_public_detected", "num_endpoints")
    list_editable = ("public_override",)
    list_filter = ("is_public", "public_override")
    search_fields = ("name",)
    readonly_fields = ("is_public", "is_public_detected", "address_seen", "created_at", "updated_at")
    fields = ("name", "public_override", "is_public", "is_public_detected", "address_seen", "created_at",
              "updated_at")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(num_endpoints=Count("endpoints"))

    def get_readonly_fields(self, request, obj=None):
        return (*self.readonly_fields, "name") if obj is not None else self.readonly_fields

    def has_add_permission(self, request):
        return False  # hosts come from traffic

    @admin.display(description="endpoints", ordering="num_endpoints")
    def num_endpoints(self, obj):
        return obj.num_endpoints

    def get_deleted_objects(self, objs, request):
        return _deletion_summary(objs, Endpoint.objects.filter(host__in=[o.pk for o in objs]))

    def delete_model(self, request, obj):
        services.hosts_delete(names=[obj.name])

    def delete_queryset(self, request, queryset):
        services.hosts_delete(names=list(queryset.values_list("name", flat=True)))


@admin.register(ApiTrace)
class ApiTraceAdmin(admin.ModelAdmin):
    """Read-only: traces are evidence, already redacted at ingestion."""

    list_display = ("created_at", "method", "host", "path", "response_status", "redacted", "endpoint_link")
    list_filter = ("method", "redacted")
    search_fields = ("path", "host")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    show_full_result_count = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("endpoint")

    @admin.display(description="endpoint")
    def endpoint_link(self, obj):
        url = reverse("admin:inventory_endpoint_change", args=[obj.endpoint_id])
        return format_html('<a href="{}">{}</a>', url, obj.endpoint.path)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class IngestBatchStatusFilter(admin.SimpleListFilter):
    """FAILED and QUARANTINED rows first: those are the ones kept for an operator to look at."""

    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return IngestBatch.Status.choices

    def queryset(self, request, queryset):
        return queryset.filter(status=self.value()) if self.value() else queryset


@admin.register(IngestBatch)
class IngestBatchAdmin(admin.ModelAdmin):
    """Accepted traces waiting for analysis, or kept after it failed (FAILED) or killed its worker
    (QUARANTINED). Read-only; the page shows what each trace was (method, host, path, sizes), never its
    headers or bodies: a row not analysed holds them as received (only its credential channel is
    redacted). "Analyse again" sends quarantined rows back to the workers, each analysed alone (a row that
    kills its worker again is quarantined again)."""

    list_display = ("id", "status", "kind", "num_traces", "source_name", "received_at", "attempts", "lost_claims",
                    "heavy", "error")
    list_filter = (IngestBatchStatusFilter, "kind", "heavy")
    ordering = ("-received_at",)
    show_full_result_count = False
    fields = ("id", "status", "kind", "num_traces", "source_name", "received_at", "processed_at", "attempts",
              "lost_claims", "claim_traces", "heavy", "alone", "error", "traces_summary")
    readonly_fields = fields
    actions = ["analyse_again"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("traces")

    @admin.display(description="source")
    def source_name(self, obj):
        key, _, agent = obj.source.partition("\x1f")
        return f"{key} / {agent}" if agent else key or "—"

    @admin.display(description="traces (no headers or bodies shown)")
    def traces_summary(self, obj):
        from core.masking import url_masked

        traces = IngestBatch.objects.filter(pk=obj.pk).values_list("traces", flat=True).first() or []
        lines = []
        for trace in traces[:20]:
            request = trace.get("request") or {} if isinstance(trace, dict) else {}
            response = trace.get("response") or {} if isinstance(trace, dict) else {}
            url = request.get("url") or {}
            lines.append(
                f"{str(request.get('method', ''))[:16]} {str(url.get('host', ''))[:255]} "
                f"{url_masked(str(url.get('path', ''))[:300])} → {response.get('status', '')}; "
                f"{len(request.get('headers') or [])} request headers, request body {len(str(request.get('body') or ''))} "
                f"characters, response body {len(str(response.get('body') or ''))} characters"
            )
        if len(traces) > 20:
            lines.append(f"… and {len(traces) - 20} more")
        return format_html("<pre class=\"console-trace\">{}</pre>", "\n".join(lines) or "(emptied)")

    @admin.action(description="Analyse again (each alone)", permissions=["change"])
    def analyse_again(self, request, queryset):
        from .ingest.accept import batch_enqueue

        # FAILED rows were emptied of their traces when they failed: only quarantined ones can go again.
        ids = list(queryset.filter(status=IngestBatch.Status.QUARANTINED).values_list("id", flat=True))
        with transaction.atomic():
            IngestBatch.objects.filter(id__in=ids).update(
                status=IngestBatch.Status.PENDING, attempts=0, lost_claims=0, claim_traces=0, claimed_until=None,
                alone=True, error="", processed_at=None)
            for batch_id in ids:
                transaction.on_commit(lambda batch_id=batch_id: batch_enqueue(batch_id))
        self.message_user(request, f"{len(ids)} quarantined row(s) sent to the workers again, each analysed alone.")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        # The list needs it for the action; the form itself is read-only (every field).
        return super().has_change_permission(request, obj)
