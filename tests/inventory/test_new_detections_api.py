"""GET /api/v1/new-detections and /api/v1/new-detections-agg."""
import datetime as dt

import pytest
from django.utils import timezone

from core.enums import RISK_RANK
from tests.factories import DataFieldFactory, HostFactory
from tests.inventory.factories import PatternEndpointFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/new-detections"
AGG = "/api/v1/new-detections-agg"


def endpoint(first_detected, risk="NONE", **kwargs):
    return PatternEndpointFactory(first_detected=first_detected, risk_score=risk, risk_rank=RISK_RANK[risk], **kwargs)


def iso(value):
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def items(response):
    assert response.status_code == 200, response.content
    return [i["uuid"] for i in response.json()["items"]]


class TestEndpoints:
    def test_default_type_is_endpoint_newest_first_in_the_window(self, client):
        now = timezone.now()
        old = endpoint(now - dt.timedelta(days=10))
        mid = endpoint(now - dt.timedelta(days=2))
        new = endpoint(now - dt.timedelta(hours=1))
        endpoint(None)  # never detected from traffic
        response = client.get(URL, {"start": iso(now - dt.timedelta(days=3)), "end": iso(now)})
        body = response.json()
        assert set(body) == {"items", "total"}
        assert items(response) == [str(new.uuid), str(mid.uuid)] and body["total"] == 2
        assert body["items"][0]["path"] == new.path and body["items"][0]["riskScore"] == "NONE"
        everything = client.get(URL).json()
        assert [i["uuid"] for i in everything["items"]] == [str(new.uuid), str(mid.uuid), str(old.uuid)]

    def test_bounds_are_inclusive_and_dates_are_accepted(self, client):
        at = dt.datetime(2026, 1, 31, 12, 0, tzinfo=dt.UTC)
        e = endpoint(at)
        assert items(client.get(URL, {"start": "2026-01-31T12:00:00.000Z", "end": "2026-01-31T12:00:00.000Z"})) == [
            str(e.uuid)]
        assert items(client.get(URL, {"start": "2026-01-31", "end": "2026-02-01"})) == [str(e.uuid)]
        assert items(client.get(URL, {"start": "2026-02-01"})) == []
        assert items(client.get(URL, {"end": "2026-01-31T11:59:59Z"})) == []

    def test_risk_scores_and_hosts_filter(self, client):
        now = timezone.now()
        a = HostFactory(name="a.example.com")
        high_a = endpoint(now, "HIGH", host=a)
        endpoint(now, "LOW", host=a)
        endpoint(now, "HIGH", host=HostFactory(name="b.example.com"))
        medium_c = endpoint(now, "MEDIUM", host=HostFactory(name="c.example.com"))
        response = client.get(URL, {"detectionRiskScores": ["HIGH", "MEDIUM"],
                                    "detectionHosts": ["a.example.com", "c.example.com"]})
        assert set(items(response)) == {str(high_a.uuid), str(medium_c.uuid)}
        assert set(items(client.get(f"{URL}?detectionRiskScores[]=HIGH&detectionHosts[]=a.example.com"))) == {
            str(high_a.uuid)}

    def test_default_limit_10_and_offset(self, client):
        now = timezone.now()
        made = [endpoint(now - dt.timedelta(minutes=i)) for i in range(12)]
        first = client.get(URL).json()
        assert len(first["items"]) == 10 and first["total"] == 12
        assert items(client.get(URL, {"detectionOffset": 10})) == [str(e.uuid) for e in made[10:]]
        assert len(client.get(URL, {"detectionLimit": 50}).json()["items"]) == 12


class TestDataFields:
    def test_data_fields_created_in_the_window_with_their_risk_and_endpoint(self, client):
        now = timezone.now()
        e = PatternEndpointFactory(host=HostFactory(name="a.example.com"), path="/users/{param1}", method="POST")
        ssn = DataFieldFactory(endpoint=e, data_path="ssn", data_classes=["ssn", "email"], created_at=now)
        DataFieldFactory(endpoint=e, data_path="old", created_at=now - dt.timedelta(days=5))
        response = client.get(URL, {"detectionType": "DATA_FIELD", "start": iso(now - dt.timedelta(days=1))})
        body = response.json()
        assert body["total"] == 1
        [item] = body["items"]
        assert item["uuid"] == str(ssn.uuid) and item["dataPath"] == "ssn" and item["riskScore"] == "HIGH"
        assert item["apiEndpoint"] == {"uuid": str(e.uuid), "host": "a.example.com", "method": "POST",
                                       "path": "/users/{param1}"}
        assert {"dataClasses", "dataSection", "statusCode", "createdAt"} <= set(item)

    def test_risk_filter_uses_the_fields_highest_severity(self, client):
        high = DataFieldFactory(data_classes=["email", "ssn"])  # MEDIUM + HIGH -> HIGH
        medium = DataFieldFactory(data_classes=["email"])
        low = DataFieldFactory(data_classes=["ip_address"])
        none = DataFieldFactory(data_classes=[])

        def risk(*scores):
            return set(items(client.get(URL, {"detectionType": "DATA_FIELD", "detectionRiskScores": list(scores)})))

        assert risk("MEDIUM") == {str(medium.uuid)}
        assert risk("HIGH") == {str(high.uuid)}
        assert risk("LOW", "NONE") == {str(low.uuid), str(none.uuid)}
        assert risk("NONE") == {str(none.uuid)}
        assert len(risk()) == 4

    def test_hosts_filter_on_fields(self, client):
        mine = DataFieldFactory(endpoint=PatternEndpointFactory(host=HostFactory(name="mine.example.com")))
        DataFieldFactory()
        assert items(client.get(URL, {"detectionType": "DATA_FIELD", "detectionHosts": "mine.example.com"})) == [
            str(mine.uuid)]

    def test_a_page_is_a_constant_number_of_queries(self, client, django_assert_num_queries):
        for _ in range(15):
            DataFieldFactory(data_classes=["email"])
        with django_assert_num_queries(4):  # key, classes, count, page
            assert len(client.get(URL, {"detectionType": "DATA_FIELD", "detectionLimit": 15,
                                        "detectionRiskScores": "MEDIUM"}).json()["items"]) == 15
        with django_assert_num_queries(3):  # key, count, page
            assert len(client.get(URL, {"detectionLimit": 15}).json()["items"]) == 15


class TestValidation:
    @pytest.mark.parametrize("params, path, code", [
        ({"detectionLimit": 51}, ["detectionLimit"], "too_big"),
        ({"detectionLimit": -1}, ["detectionLimit"], "too_small"),
        ({"detectionOffset": -1}, ["detectionOffset"], "too_small"),
        ({"detectionType": "HOST"}, ["detectionType"], "invalid_enum_value"),
        ({"detectionRiskScores": ["SEVERE"]}, ["detectionRiskScores", 0], "invalid_enum_value"),
        ({"start": "yesterday"}, ["start"], "invalid_string"),
        ({"start": "2026-02-01", "end": "2026-01-01"}, ["end"], "custom"),
    ])
    def test_bad_query_is_a_zod_400(self, client, params, path, code):
        response = client.get(URL, params)
        assert response.status_code == 400 and response.json()["type"] == "ZOD"
        [issue] = response.json()["err"]["issues"]
        assert issue["path"] == path and issue["code"] == code

    def test_detection_limit_51_names_the_maximum(self, client):
        [issue] = client.get(URL, {"detectionLimit": 51}).json()["err"]["issues"]
        assert issue["maximum"] == 50

    def test_needs_the_api_key(self, anon_client):
        assert anon_client.get(URL).status_code == 401
        assert anon_client.get(AGG).status_code == 401


class TestAggregate:
    def test_one_item_per_day_for_30_days_oldest_first(self, client):
        now = timezone.now()
        today = now.date()
        endpoint(now)
        endpoint(now)
        three_days = endpoint(now - dt.timedelta(days=3))
        endpoint(now - dt.timedelta(days=40))
        DataFieldFactory(endpoint=three_days, created_at=now - dt.timedelta(days=3))
        body = client.get(AGG).json()
        assert len(body) == 30
        assert body[0]["day"] == (today - dt.timedelta(days=29)).isoformat()
        assert body[-1] == {"day": today.isoformat(), "numEndpoints": 2, "numFields": 0}
        assert body[-4] == {"day": (today - dt.timedelta(days=3)).isoformat(), "numEndpoints": 1, "numFields": 1}
        assert sum(d["numEndpoints"] for d in body) == 3
        assert sum(d["numFields"] for d in body) == 1

    def test_aggregate_is_a_constant_number_of_queries(self, client, django_assert_num_queries):
        for i in range(10):
            endpoint(timezone.now() - dt.timedelta(days=i))
        with django_assert_num_queries(3):
            assert len(client.get(AGG).json()) == 30
