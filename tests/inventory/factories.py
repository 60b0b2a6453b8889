"""Factories for the traffic-derived inventory rows (traces, usage, observed paths, addresses)."""
import factory
from django.utils import timezone

from classification.models import DataClass
from inventory.models import ApiTrace, EndpointCaller, HostAddress, ObservedPath, UsageDay, UsageMinute
from inventory.patterns.regex import pattern_compile
from tests.factories import EndpointFactory, HostFactory


class PatternEndpointFactory(EndpointFactory):
    """An endpoint whose regex and segment counts are computed from its path like ingestion does."""

    path_regex = factory.LazyAttribute(lambda o: pattern_compile(o.path).regex)
    num_segments = factory.LazyAttribute(lambda o: pattern_compile(o.path).num_segments)
    num_literal_segments = factory.LazyAttribute(lambda o: pattern_compile(o.path).num_literal_segments)


class ApiTraceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ApiTrace

    endpoint = factory.SubFactory(PatternEndpointFactory)
    host = factory.LazyAttribute(lambda o: o.endpoint.host.name)
    path = factory.LazyAttribute(lambda o: o.endpoint.path.replace("{param1}", "42"))
    method = factory.LazyAttribute(lambda o: o.endpoint.method)
    request_parameters = factory.LazyFunction(lambda: [{"name": "q", "value": "x"}])
    request_headers = factory.LazyFunction(lambda: [{"name": "Authorization", "value": "[REDACTED]"}])
    request_body = ""
    response_status = 200
    response_headers = factory.LazyFunction(lambda: [{"name": "Content-Type", "value": "application/json"}])
    response_body = '{"ok": true}'
    meta = factory.LazyFunction(lambda: {"incoming": True, "source": "10.0.0.9", "sourcePort": "50000",
                                         "destination": "10.0.0.1", "destinationPort": "443"})


class ObservedPathFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ObservedPath

    endpoint = factory.SubFactory(PatternEndpointFactory)
    path = factory.Sequence(lambda n: f"/observed/{n}")
    count = 1
    last_seen = factory.LazyFunction(timezone.now)


class UsageMinuteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = UsageMinute

    endpoint = factory.SubFactory(PatternEndpointFactory)
    minute = factory.LazyFunction(lambda: timezone.now().replace(second=0, microsecond=0))
    count = 1


class UsageDayFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = UsageDay

    endpoint = factory.SubFactory(PatternEndpointFactory)
    day = factory.LazyFunction(lambda: timezone.now().date())
    count = 1


class HostAddressFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = HostAddress

    host = factory.SubFactory(HostFactory)
    address = factory.Sequence(lambda n: f"10.1.{n // 250}.{n % 250 + 1}")


class EndpointCallerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EndpointCaller

    endpoint = factory.SubFactory(PatternEndpointFactory)
    address = factory.Sequence(lambda n: f"10.2.{n // 250}.{n % 250 + 1}")


class CustomDataClassFactory(factory.django.DjangoModelFactory):
    """An operator's custom class (a value regex)."""

    class Meta:
        model = DataClass
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"custom_{n}")
    short_name = factory.LazyAttribute(lambda o: o.name.replace("_", " ").title())
    severity = "LOW"
    value_regex = r"^CUST-\d+$"
