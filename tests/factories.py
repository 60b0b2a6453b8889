"""factory-boy factories with sensible defaults for the shared models."""
import factory
from django.utils import timezone

from classification.models import DataField
from core.enums import RISK_RANK, AlertType, DataSection, RiskScore
from detections.models import Alert
from inventory.models import Endpoint, Host


class HostFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Host
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"api{n}.example.com")
    is_public_detected = True


class EndpointFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Endpoint

    host = factory.SubFactory(HostFactory)
    method = "GET"
    path = factory.Sequence(lambda n: f"/api/v1/items{n}/{{param1}}")
    path_regex = factory.LazyAttribute(lambda o: "^" + o.path.replace("{param1}", "[^/]+") + "$")
    num_segments = factory.LazyAttribute(lambda o: len([s for s in o.path.split("/") if s]))
    num_literal_segments = factory.LazyAttribute(lambda o: len([s for s in o.path.split("/") if s and "{" not in s]))
    risk_score = RiskScore.NONE
    risk_rank = factory.LazyAttribute(lambda o: RISK_RANK[o.risk_score])
    first_detected = factory.LazyFunction(timezone.now)
    last_active = factory.LazyFunction(timezone.now)


class DataFieldFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DataField

    endpoint = factory.SubFactory(EndpointFactory)
    data_section = DataSection.RESPONSE_BODY
    data_path = factory.Sequence(lambda n: f"field{n}")
    status_code = factory.LazyAttribute(lambda o: 200 if o.data_section.startswith("RESPONSE") else -1)
    data_classes = factory.LazyFunction(list)


class AlertFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Alert

    endpoint = factory.SubFactory(EndpointFactory)
    type = AlertType.NEW_ENDPOINT
    risk_score = RiskScore.LOW
    description = factory.LazyAttribute(lambda o: f"A new endpoint has been detected for {o.endpoint.host.name}: {o.endpoint.path}.")
