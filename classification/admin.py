"""Operators' console for data classes (custom classes, disabling built-ins) and data fields.

Every change that can move a riskScore (a field's classes, a class's severity,
deleting a field or a custom class) goes through ``classification.services`` so
endpoints stay in sync with their fields.
"""
from django import forms
from django.contrib import admin, messages
from django.db import transaction

from inventory.api.filters import json_any_q

from . import services
from .models import DataClass, DataField


def _string_list(value, label: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise forms.ValidationError(f"{label} must be a JSON list of strings.")
    return list(dict.fromkeys(value))


class DataFieldForm(forms.ModelForm):
    """Classes must be a JSON list of known class names."""

    class Meta:
        model = DataField
        fields = "__all__"

    def clean_data_classes(self):
        names = _string_list(self.cleaned_data.get("data_classes"), "Data classes")
        unknown = sorted(set(names) - set(DataClass.objects.filter(name__in=names).values_list("name", flat=True)))
        if unknown:
            raise forms.ValidationError(f"Unknown data class(es): {', '.join(unknown)}")
        return names

    def clean_false_positives(self):
        return _string_list(self.cleaned_data.get("false_positives"), "False positives")


class DataClassListFilter(admin.SimpleListFilter):
    """Filter rows whose ``data_classes`` JSON list carries the chosen class (fields and endpoints)."""

    title = "data class"
    parameter_name = "data_class"

    def lookups(self, request, model_admin):
        return [(name, name) for name in DataClass.objects.order_by("name").values_list("name", flat=True)]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(json_any_q(queryset.model, "data_classes", [self.value()]))
        return queryset


@admin.register(DataClass)
class DataClassAdmin(admin.ModelAdmin):
    list_display = ("name", "short_name", "severity", "builtin", "enabled")
    list_filter = ("builtin", "enabled", "severity")
    search_fields = ("name", "short_name")
    ordering = ("-builtin", "id")
    actions = ["enable_selected", "disable_selected"]
    fields = ("name", "short_name", "severity", "enabled", "value_regex", "key_regex", "builtin", "created_at",
              "updated_at")

    def get_readonly_fields(self, request, obj=None):
        readonly = ["builtin", "created_at", "updated_at"]
        if obj is not None and obj.builtin:
            # Built-ins are detected by code (validators), not by these fields.
            readonly += ["name", "value_regex", "key_regex"]
        return readonly

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.builtin:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request, obj, form, change):
        severity_changed = change and "severity" in form.changed_data
        super().save_model(request, obj, form, change)
        if severity_changed:
            count = services.endpoints_refresh_risk_for_classes(class_names=[obj.name])
            self.message_user(request, f"Risk score recomputed: {count} endpoint(s) changed.")

    def delete_model(self, request, obj):
        services.data_class_delete(data_class=obj)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for data_class in queryset.filter(builtin=False):
                services.data_class_delete(data_class=data_class)
        if queryset.filter(builtin=True).exists():
            self.message_user(request, "Built-in data classes cannot be deleted; disable them instead.",
                              messages.WARNING)

    @admin.action(description="Enable selected data classes", permissions=["change"])
    def enable_selected(self, request, queryset):
        self.message_user(request, f"Enabled {queryset.update(enabled=True)} data class(es).")

    @admin.action(description="Disable selected data classes (stop detecting them)", permissions=["change"])
    def disable_selected(self, request, queryset):
        self.message_user(request, f"Disabled {queryset.update(enabled=False)} data class(es).")


@admin.register(DataField)
class DataFieldAdmin(admin.ModelAdmin):
    form = DataFieldForm
    list_display = ("data_path", "data_section", "status_code", "endpoint_label", "classes", "entity", "last_seen")
    list_filter = ("data_section", "data_type", DataClassListFilter)
    search_fields = ("data_path", "endpoint__path", "endpoint__host__name", "entity")
    list_select_related = ("endpoint__host",)
    raw_id_fields = ("endpoint",)
    readonly_fields = ("uuid", "created_at", "updated_at", "last_seen")

    @admin.display(description="endpoint", ordering="endpoint__path")
    def endpoint_label(self, obj):
        return f"{obj.endpoint.method} {obj.endpoint.host.name}{obj.endpoint.path}"

    @admin.display(description="data classes")
    def classes(self, obj):
        return ", ".join(obj.data_classes)

    def save_model(self, request, obj, form, change):
        previous = DataField.objects.filter(pk=obj.pk).values_list("endpoint_id", flat=True).first()
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            services.endpoints_refresh_risk(endpoint_ids=[obj.endpoint_id, *([previous] if previous else [])])

    def delete_model(self, request, obj):
        services.data_field_delete(data_field_id=str(obj.uuid))

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            endpoint_ids = list(queryset.values_list("endpoint_id", flat=True).distinct())
            queryset.delete()
            services.endpoints_refresh_risk(endpoint_ids=endpoint_ids)
