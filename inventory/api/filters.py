"""django-filter FilterSets for the list routes, fed with already-validated query values.

The serializers of ``inventory.api.serializers`` validate the query string (zod
bodies on failure); the FilterSets below only turn the clean values into
queryset filters, so the admin and services can reuse the same lookups.
"""
from __future__ import annotations

from collections.abc import Sequence

import django_filters
from django import forms
from django.db import connection
from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from core.enums import RISK_RANK, HostType
from inventory.models import Endpoint, Host


def json_any_q(model: type[Model], field_name: str, values: Sequence[str]) -> Q:
    """Rows whose JSON list of strings ``field_name`` shares at least one element with ``values``.

    PostgreSQL: jsonb ``?|`` (served by the GIN indexes of migration
    ``0002_routes_search_indexes``). Other databases (the SQLite demo): an
    ``EXISTS`` over ``json_each``.
    """
    values = [str(v) for v in values]
    if not values:
        return Q(pk__in=[])
    if connection.vendor == "postgresql":
        return Q(**{f"{field_name}__has_any_keys": values})
    column = model._meta.get_field(field_name).column
    placeholders = ", ".join(["%s"] * len(values))
    sql = (
        f'EXISTS (SELECT 1 FROM json_each("{model._meta.db_table}"."{column}") AS item '
        f"WHERE item.value IN ({placeholders}))"
    )
    return Q(ExpressionWrapper(RawSQL(sql, values), output_field=BooleanField()))


def search_q(query: str) -> Q:
    """``searchQuery``: case-insensitive substring (not a regex) of path, host, owner or spec name.

    ``icontains`` escapes ``%`` and ``_``; on PostgreSQL the ``UPPER(col::text)`` trigram
    GIN indexes of ``0002_routes_search_indexes`` serve each branch. The matching hosts
    are looked up first (a small query on the hosts' own trigram index) and enter as a
    list of ids: a sub-select there would keep PostgreSQL from combining the indexes
    (BitmapOr) and make it scan every endpoint.
    """
    host_ids = list(Host.objects.filter(name__icontains=query).values_list("pk", flat=True))
    condition = Q(path__icontains=query) | Q(owner__icontains=query) | Q(openapi_spec_name__icontains=query)
    if host_ids:
        condition |= Q(host_id__in=host_ids)
    return condition


def with_effective_auth(queryset: QuerySet[Endpoint]) -> QuerySet[Endpoint]:
    """Annotate ``effective_auth``: the operator's setting when given, else detection (DECISIONS §4)."""
    return queryset.annotate(effective_auth=Coalesce("is_authenticated_user_set", "is_authenticated_detected"))


def host_type_q(host_type: str, *, prefix: str = "") -> Q:
    """``hostType``: EXTERNAL = public hosts, INTERNAL = private ones, ANY = all."""
    if host_type == HostType.EXTERNAL:
        return Q(**{f"{prefix}is_public": True})
    if host_type == HostType.INTERNAL:
        return Q(**{f"{prefix}is_public": False})
    return Q()


class _ListWidget(forms.Widget):
    """Reads a list from a QueryDict (``getlist``) or a plain dict of validated values."""

    def value_from_datadict(self, data, files, name):
        if hasattr(data, "getlist"):
            return data.getlist(name)
        return data.get(name)


class _ListField(forms.Field):
    widget = _ListWidget

    def to_python(self, value):
        if value in (None, ""):
            return []
        return list(value) if isinstance(value, (list, tuple)) else [value]


class ListFilter(django_filters.Filter):
    """A filter whose value is a list (values already validated by a serializer)."""

    field_class = _ListField


def filter_hosts(queryset, value):
    return queryset.filter(host__name__in=value)


def filter_risk_scores(queryset, value):
    # risk_rank (kept with risk_score by every writer) leads the list-order index: the scan stops at the page.
    return queryset.filter(risk_rank__in=[RISK_RANK[v] for v in value if v in RISK_RANK])


def filter_methods(queryset, value):
    return queryset.filter(method__in=value)


def filter_data_classes(queryset, value):
    return queryset.filter(json_any_q(Endpoint, "data_classes", value))


def filter_resource_permissions(queryset, value):
    return queryset.filter(json_any_q(Endpoint, "resource_permissions", value))


def filter_search(queryset, value):
    return queryset.filter(search_q(value))


def filter_is_authenticated(queryset, value):
    return with_effective_auth(queryset).filter(effective_auth=(value == "true"))


def filter_host_type(queryset, value):
    return queryset.filter(host_type_q(value, prefix="host__"))


ENDPOINT_FILTERS = {
    "hosts": filter_hosts,
    "riskScores": filter_risk_scores,
    "methods": filter_methods,
    "dataClasses": filter_data_classes,
    "resourcePermissions": filter_resource_permissions,
    "searchQuery": filter_search,
    "isAuthenticated": filter_is_authenticated,
    "hostType": filter_host_type,
}


def endpoints_filter(queryset: QuerySet[Endpoint], filters: dict) -> QuerySet[Endpoint]:
    """Apply validated GET /endpoints filters: ``EndpointFilter``'s lookups without building a
    FilterSet and its form per request. Empty values filter nothing, as in django-filter."""
    for name, value in filters.items():
        apply = ENDPOINT_FILTERS.get(name)
        if apply is not None and value not in (None, "", [], ()):
            queryset = apply(queryset, value)
    return queryset


class EndpointFilter(django_filters.FilterSet):
    """The eight filters of GET /endpoints (offset and limit page the result)."""

    hosts = ListFilter(method="filter_hosts")
    riskScores = ListFilter(method="filter_risk_scores")
    methods = ListFilter(method="filter_methods")
    dataClasses = ListFilter(method="filter_data_classes")
    resourcePermissions = ListFilter(method="filter_resource_permissions")
    searchQuery = django_filters.CharFilter(method="filter_search")
    isAuthenticated = django_filters.CharFilter(method="filter_is_authenticated")
    hostType = django_filters.CharFilter(method="filter_host_type")

    class Meta:
        model = Endpoint
        fields: list[str] = []

    def filter_hosts(self, queryset, name, value):
        return filter_hosts(queryset, value)

    def filter_risk_scores(self, queryset, name, value):
        return filter_risk_scores(queryset, value)

    def filter_methods(self, queryset, name, value):
        return filter_methods(queryset, value)

    def filter_data_classes(self, queryset, name, value):
        return filter_data_classes(queryset, value)

    def filter_resource_permissions(self, queryset, name, value):
        return filter_resource_permissions(queryset, value)

    def filter_search(self, queryset, name, value):
        return filter_search(queryset, value)

    def filter_is_authenticated(self, queryset, name, value):
        return filter_is_authenticated(queryset, value)

    def filter_host_type(self, queryset, name, value):
        return filter_host_type(queryset, value)


class HostFilter(django_filters.FilterSet):
    """``searchQuery`` (substring of the name) and ``hostType`` of GET /hosts."""

    searchQuery = django_filters.CharFilter(field_name="name", lookup_expr="icontains")
    hostType = django_filters.CharFilter(method="filter_host_type")

    class Meta:
        model = Host
        fields: list[str] = []

    def filter_host_type(self, queryset, name, value):
        return queryset.filter(host_type_q(value))
