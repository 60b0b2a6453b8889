"""Wire shapes of data classes and data fields (camelCase), and the bodies of their routes."""
from __future__ import annotations

from rest_framework import serializers

from core.enums import DataSection, RiskScore
from core.fields import StrictCharField, TimestampField

from .models import DataClass, DataField


class DataClassSerializer(serializers.ModelSerializer):
    """SPEC "Data class": ``{className, severity, shortName}``."""

    className = serializers.CharField(source="name")
    severity = serializers.ChoiceField(choices=RiskScore.choices)
    shortName = serializers.CharField(source="short_name")

    class Meta:
        model = DataClass
        fields = ["className", "severity", "shortName"]


class DataFieldSerializer(serializers.ModelSerializer):
    """A data field as shown in the endpoint detail and answered by the data-field routes (DECISIONS §4)."""

    uuid = serializers.UUIDField(read_only=True)
    dataClasses = serializers.ListField(child=serializers.CharField(), source="data_classes")
    falsePositives = serializers.ListField(child=serializers.CharField(), source="false_positives")
    scannerIdentified = serializers.ListField(child=serializers.CharField(), source="scanner_identified")
    dataType = serializers.ChoiceField(choices=DataField.DataType.choices, source="data_type")
    dataSection = serializers.ChoiceField(choices=DataSection.choices, source="data_section")
    dataPath = serializers.CharField(source="data_path")
    statusCode = serializers.IntegerField(source="status_code", help_text="Response status; -1 for request sections.")
    contentType = serializers.CharField(source="content_type")
    isNullable = serializers.BooleanField(source="is_nullable")
    entity = serializers.CharField(allow_null=True)
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    lastSeen = TimestampField(source="last_seen")

    class Meta:
        model = DataField
        fields = [
            "uuid", "dataClasses", "falsePositives", "scannerIdentified", "dataType", "dataSection", "dataPath",
            "statusCode", "contentType", "isNullable", "entity", "createdAt", "updatedAt", "lastSeen",
        ]
        read_only_fields = fields


class DataPathField(StrictCharField):
    """A data path: dotted keys, ``[]`` or an explicit index for arrays (``items[0].name``)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 1024)
        kwargs.setdefault("trim_whitespace", True)
        super().__init__(**kwargs)


class UpdateClassesSerializer(serializers.Serializer):
    """Body of POST /data-field/{id}/update-classes. Class names must be enabled data classes."""

    dataClasses = serializers.ListField(child=serializers.CharField())
    dataSection = serializers.ChoiceField(choices=DataSection.choices)
    dataPath = DataPathField()

    def to_internal_value(self, data):
        # The enabled classes are read at validation time (not at import or schema generation).
        names = list(DataClass.objects.filter(enabled=True).order_by("-builtin", "id").values_list("name", flat=True))
        self.fields["dataClasses"] = serializers.ListField(child=serializers.ChoiceField(choices=names))
        return super().to_internal_value(data)


class UpdateEntitySerializer(serializers.Serializer):
    """Body of PUT /data-field/{id}/update-entity; an empty string or null clears the entity."""

    entity = StrictCharField(max_length=255, allow_blank=True, allow_null=True)


class UpdateDataPathSerializer(serializers.Serializer):
    """Body of PUT /data-field/{id}/update-data-path."""

    dataPath = DataPathField()
