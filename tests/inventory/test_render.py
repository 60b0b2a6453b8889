"""The fast renderers of inventory.api.render answer exactly what the documented DRF serializers would."""
import datetime as dt

import pytest
from django.utils import timezone

from classification.models import DataField
from core.enums import AlertStatus, AlertType
from inventory.api import render, serializers as s
from inventory.api.services import endpoint_detail
from inventory.models import ApiTrace, Endpoint
from tests.factories import AlertFactory, DataFieldFactory, EndpointFactory, HostFactory

pytestmark = pytest.mark.django_db


def odd_endpoint(**kwargs) -> Endpoint:
    """An endpoint with the values that trip renderers: nulls, unicode, empty and non-empty lists."""
    defaults = {
        "host": HostFactory(name="ünïcode.example.com"),
        "path": "/ça/{param1}/\u2028x",
        "method": "PATCH",
        "risk_score": "HIGH",
        "risk_rank": 3,
        "data_classes": ["email", "ssn"],
        "resource_permissions": [],
        "first_detected": None,
        "last_active": dt.datetime(2026, 1, 31, 12, 0, 0, 999999, tzinfo=dt.UTC),
        "is_authenticated_user_set": None,
        "openapi_spec_name": None,
        "owner": "",
        "is_graphql": True,
        "graphql_schema": None,
    }
    return EndpointFactory(**{**defaults, **kwargs})


class TestListItem:
    @pytest.mark.parametrize("overrides", [
        {},
        {"is_authenticated_user_set": False, "openapi_spec_name": "shop.yaml", "owner": "team-a",
         "first_detected": dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=dt.UTC), "last_active": None},
        {"is_authenticated_user_set": True, "data_classes": [], "resource_permissions": ["admin", "r:x"],
         "full_trace_capture_enabled": True, "is_graphql": False},
    ])
    def test_the_fast_list_item_equals_the_serializer(self, overrides):
        e = odd_endpoint(**overrides)
        [row] = render.endpoint_rows(Endpoint.objects.filter(uuid=e.uuid))
        fresh = Endpoint.objects.select_related("host").get(uuid=e.uuid)
        assert render.endpoint_item(row) == dict(s.EndpointListItemSerializer(fresh).data)

    def test_the_list_route_answers_the_serializer_shape(self, client):
        e = odd_endpoint()
        response = client.get("/api/v1/endpoints")
        assert response.status_code == 200
        fresh = Endpoint.objects.select_related("host").get(uuid=e.uuid)
        assert response.json() == [dict(s.EndpointListItemSerializer(fresh).data)]
        # DRF's JSONRenderer escapes U+2028 for JavaScript; the orjson renderer does too.
        assert b"\\u2028" in response.content


class TestDetail:
    def test_the_fast_detail_equals_the_serializer(self, client):
        e = odd_endpoint()
        DataFieldFactory(endpoint=e, data_path="user.email", data_classes=["email"], entity="customer")
        DataFieldFactory(endpoint=e, data_section="REQUEST_QUERY", data_path="q", false_positives=["ssn"],
                         scanner_identified=["x"], is_nullable=True)
        AlertFactory(endpoint=e, type=AlertType.PII_DATA, status=AlertStatus.RESOLVED, resolution_message="ok",
                     context={"dataPath": "user.email", "1": [1, 2]})
        AlertFactory(endpoint=e)
        now = timezone.now()
        for i in range(3):
            ApiTrace.objects.create(
                endpoint=e, host=e.host.name, path=f"/ça/{i}", method="PATCH",
                request_parameters=[{"name": "q", "value": "ünï"}], request_headers=[{"name": "A", "value": 1}],
                request_body="{}", response_status=200, response_headers=[], response_body="x" * i,
                meta={"source": "10.0.0.1", "n": None}, redacted=bool(i % 2), created_at=now - dt.timedelta(seconds=i),
            )
        fresh = Endpoint.objects.select_related("host").get(uuid=e.uuid)
        fresh.detail_data_fields = list(DataField.objects.filter(endpoint=fresh)
                                        .order_by("data_section", "data_path", "status_code"))
        fresh.detail_alerts = list(fresh.alerts.order_by("-created_at", "uuid"))
        fresh.detail_traces = list(fresh.traces.order_by("-created_at", "uuid")[:100])
        fresh.detail_openapi_spec = None
        expected = dict(s.EndpointDetailSerializer(fresh).data)
        assert endpoint_detail(endpoint_id=str(e.uuid)) == expected
        response = client.get(f"/api/v1/endpoint/{e.uuid}")
        assert response.status_code == 200
        assert response.json() == expected
        assert [t["path"] for t in response.json()["traces"]] == ["/ça/0", "/ça/1", "/ça/2"]


class TestHosts:
    def test_the_fast_host_item_equals_the_serializer(self, client):
        EndpointFactory(host=HostFactory(name="b.example.com", is_public_detected=False))
        host = HostFactory(name="a.example.com")
        EndpointFactory(host=host)
        EndpointFactory(host=host)
        response = client.get("/api/v1/hosts")
        assert response.status_code == 200
        assert response["X-Total-Count"] == "2"
        host.refresh_from_db()
        host.num_endpoints = 2
        assert response.json()[0] == dict(s.HostSerializer(host).data)
        assert response.json() == [{"host": "a.example.com", "numEndpoints": 2, "isPublic": True},
                                   {"host": "b.example.com", "numEndpoints": 1, "isPublic": False}]
