"""POST /api/v1/endpoint/{id}/update-paths: DECISIONS §4's merge, through the API, with database state."""
import datetime as dt

import pytest
from django.utils import timezone

from classification.models import DataField
from core.enums import RISK_RANK
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, EndpointCaller, ObservedPath, UsageDay, UsageMinute
from inventory.patterns.regex import pattern_compile
from tests.factories import AlertFactory, DataFieldFactory, HostFactory
from tests.inventory.factories import (
    ApiTraceFactory,
    EndpointCallerFactory,
    ObservedPathFactory,
    PatternEndpointFactory,
    UsageDayFactory,
    UsageMinuteFactory,
)

pytestmark = pytest.mark.django_db


def update(client, endpoint, paths):
    return client.post(f"/api/v1/endpoint/{endpoint.uuid}/update-paths", {"paths": paths}, format="json")


def ok(response):
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def host():
    return HostFactory(name="api.example.com")


def ep(host, path, method="GET", **kwargs):
    return PatternEndpointFactory(host=host, path=path, method=method, **kwargs)


class TestMergeIntoAParameter:
    def test_literal_siblings_collapse_into_one_new_endpoint(self, client, host):
        now = timezone.now()
        minute = now.replace(second=0, microsecond=0)
        one = ep(host, "/users/1", first_detected=now - dt.timedelta(days=5), last_active=now - dt.timedelta(days=1),
                 is_authenticated_user_set=True, owner="team-users")
        two = ep(host, "/users/2", first_detected=now - dt.timedelta(days=9), last_active=now)
        three = ep(host, "/users/3", is_authenticated_detected=True, unauthenticated_success_seen=True,
                   first_detected=now - dt.timedelta(days=2), last_active=now - dt.timedelta(days=2))
        post = ep(host, "/users/1", method="POST")
        elsewhere = ep(HostFactory(name="other.example.com"), "/users/1")

        DataFieldFactory(endpoint=one, data_path="email", data_classes=["email"])
        DataFieldFactory(endpoint=two, data_path="email", data_classes=["phone_number"])
        DataFieldFactory(endpoint=three, data_path="ssn", data_classes=["ssn"])
        for e in (one, two, three):
            ApiTraceFactory(endpoint=e, path=e.path)
            ObservedPathFactory(endpoint=e, path=e.path, count=2)
            UsageMinuteFactory(endpoint=e, minute=minute, count=3)
            UsageDayFactory(endpoint=e, day=now.date(), count=10)
            EndpointCallerFactory(endpoint=e, address="10.0.0.5")
        UsageDayFactory(endpoint=two, day=now.date() - dt.timedelta(days=1), count=4)

        [result] = ok(update(client, one, ["/users/{id}"]))

        assert result["path"] == "/users/{id}" and result["method"] == "GET" and result["host"] == "api.example.com"
        merged = Endpoint.objects.get(uuid=result["uuid"])
        assert merged.uuid not in {one.uuid, two.uuid, three.uuid}
        assert not Endpoint.objects.filter(uuid__in=[one.uuid, two.uuid, three.uuid]).exists()
        assert Endpoint.objects.filter(uuid__in=[post.uuid, elsewhere.uuid]).count() == 2
        assert (merged.path_regex, merged.num_segments, merged.num_literal_segments) == (
            pattern_compile("/users/{id}").regex, 2, 1)

        fields = {f.data_path: f for f in DataField.objects.filter(endpoint=merged)}
        assert set(fields) == {"email", "ssn"}
        assert sorted(fields["email"].data_classes) == ["email", "phone_number"]
        assert (merged.risk_score, merged.risk_rank) == ("HIGH", RISK_RANK["HIGH"])
        assert merged.data_classes == ["email", "phone_number", "ssn"]
        assert result["riskScore"] == "HIGH" and result["dataClasses"] == ["email", "phone_number", "ssn"]

        assert ApiTrace.objects.filter(endpoint=merged).count() == 3
        assert sorted(ObservedPath.objects.filter(endpoint=merged).values_list("path", "count")) == [
            ("/users/1", 2), ("/users/2", 2), ("/users/3", 2)]
        assert UsageMinute.objects.get(endpoint=merged, minute=minute).count == 9
        assert dict(UsageDay.objects.filter(endpoint=merged).values_list("day", "count")) == {
            now.date(): 30, now.date() - dt.timedelta(days=1): 4}
        assert list(EndpointCaller.objects.filter(endpoint=merged).values_list("address", flat=True)) == ["10.0.0.5"]

        assert merged.first_detected == two.first_detected and merged.last_active == two.last_active
        assert merged.is_authenticated_user_set is True and merged.owner == "team-users"
        assert merged.unauthenticated_success_seen is True and merged.is_authenticated_detected is False

    def test_an_existing_endpoint_with_the_pattern_absorbs_the_literal_one(self, client, host):
        existing = ep(host, "/users/{param1}", owner="owners")
        DataFieldFactory(endpoint=existing, data_path="name", data_classes=[])
        literal = ep(host, "/users/me", owner="other")
        DataFieldFactory(endpoint=literal, data_path="email", data_classes=["email"])
        ApiTraceFactory(endpoint=literal, path="/users/me")

        [result] = ok(update(client, literal, ["/users/{param1}"]))

        assert result["uuid"] == str(existing.uuid)
        assert not Endpoint.objects.filter(uuid=literal.uuid).exists()
        assert set(DataField.objects.filter(endpoint=existing).values_list("data_path", flat=True)) == {"name", "email"}
        assert ApiTrace.objects.filter(endpoint=existing, path="/users/me").count() == 1
        existing.refresh_from_db()
        assert existing.owner == "owners" and existing.risk_score == "MEDIUM"

    def test_duplicate_fields_keep_the_targets_false_positives_and_collapse(self, client, host):
        target = ep(host, "/users/{param1}")
        kept = DataFieldFactory(endpoint=target, data_path="contact", data_classes=[], false_positives=["email"],
                                entity="customer")
        source = ep(host, "/users/9")
        DataFieldFactory(endpoint=source, data_path="contact", data_classes=["email", "ssn"], is_nullable=True)

        ok(update(client, source, ["/users/{param1}"]))

        [field] = DataField.objects.filter(endpoint=target)
        assert field.uuid == kept.uuid
        assert field.data_classes == ["ssn"] and field.false_positives == ["email"]
        assert field.entity == "customer" and field.is_nullable is True
        target.refresh_from_db()
        assert target.risk_score == "HIGH"

    def test_duplicate_alerts_collapse_keeping_open_ones(self, client, host):
        target = ep(host, "/users/{param1}")
        source = ep(host, "/users/7")
        old = timezone.now() - dt.timedelta(days=3)
        AlertFactory(endpoint=target, description="A new endpoint has been detected for x: /users/{param1}.")
        oldest_new = AlertFactory(endpoint=source, created_at=old,
                                  description="A new endpoint has been detected for x: /users/7.")
        resolved = AlertFactory(endpoint=target, type="PII Data Detected", risk_score="HIGH", status="Resolved",
                                created_at=old, description="Sensitive data of type email in 'email'.")
        open_one = AlertFactory(endpoint=source, type="PII Data Detected", risk_score="HIGH",
                                description="Sensitive data of type email in 'email'.")
        distinct = AlertFactory(endpoint=source, type="PII Data Detected", risk_score="HIGH",
                                description="Sensitive data of type ssn in 'ssn'.")

        ok(update(client, source, ["/users/{param1}"]))

        remaining = set(Alert.objects.filter(endpoint=target).values_list("uuid", flat=True))
        assert remaining == {oldest_new.uuid, open_one.uuid, distinct.uuid}
        assert not Alert.objects.filter(uuid=resolved.uuid).exists()
        assert Alert.objects.count() == 3

    def test_merged_traces_are_pruned_to_the_newest_100(self, client, host):
        target = ep(host, "/users/{param1}")
        source = ep(host, "/users/5")
        now = timezone.now()
        ApiTrace.objects.bulk_create(
            [ApiTraceFactory.build(endpoint=target, path="/users/1", created_at=now - dt.timedelta(minutes=i))
             for i in range(0, 140, 2)]
            + [ApiTraceFactory.build(endpoint=source, path="/users/5", created_at=now - dt.timedelta(minutes=i))
               for i in range(1, 140, 2)]
        )
        ok(update(client, source, ["/users/{param1}"]))
        kept = list(ApiTrace.objects.filter(endpoint=target).order_by("-created_at"))
        assert len(kept) == 100
        assert kept[-1].created_at == now - dt.timedelta(minutes=99)


class TestSplit:
    def test_a_general_endpoint_splits_by_its_observed_paths(self, client, host):
        general = ep(host, "/{param1}/orders", owner="shop-team")
        DataFieldFactory(endpoint=general, data_path="total", data_classes=["credit_card"])
        AlertFactory(endpoint=general)
        ObservedPathFactory(endpoint=general, path="/users/orders", count=3)
        ObservedPathFactory(endpoint=general, path="/shops/orders", count=1)
        ObservedPathFactory(endpoint=general, path="/carts/orders", count=1)
        user_trace = ApiTraceFactory(endpoint=general, path="/users/orders")
        shop_trace = ApiTraceFactory(endpoint=general, path="/shops/orders")
        cart_trace = ApiTraceFactory(endpoint=general, path="/carts/orders")
        UsageMinuteFactory(endpoint=general, count=5)

        users, shops = ok(update(client, general, ["/users/orders", "/shops/orders"]))

        assert (users["path"], shops["path"]) == ("/users/orders", "/shops/orders")
        assert not Endpoint.objects.filter(uuid=general.uuid).exists()
        assert ApiTrace.objects.get(uuid=user_trace.uuid).endpoint_id == Endpoint.objects.get(path="/users/orders").uuid
        assert ApiTrace.objects.get(uuid=shop_trace.uuid).endpoint_id == Endpoint.objects.get(path="/shops/orders").uuid
        # unmatched traffic, fields, alerts and usage follow the primary target (most observed requests)
        assert str(ApiTrace.objects.get(uuid=cart_trace.uuid).endpoint_id) == users["uuid"]
        assert set(ObservedPath.objects.filter(endpoint_id=users["uuid"]).values_list("path", flat=True)) == {
            "/users/orders", "/carts/orders"}
        assert list(ObservedPath.objects.filter(endpoint_id=shops["uuid"]).values_list("path", flat=True)) == [
            "/shops/orders"]
        assert DataField.objects.filter(endpoint_id=users["uuid"]).count() == 1
        assert Alert.objects.filter(endpoint_id=users["uuid"]).count() == 1
        assert UsageMinute.objects.get(endpoint_id=users["uuid"]).count == 5
        assert users["riskScore"] == "HIGH" and shops["riskScore"] == "NONE"
        assert users["owner"] == shops["owner"] == "shop-team"

    def test_the_endpoint_keeps_its_identity_when_it_is_one_of_the_paths(self, client, host):
        users = ep(host, "/users/{param1}")
        DataFieldFactory(endpoint=users, data_path="id")
        for path, count in (("/users/1", 1), ("/users/2", 1), ("/users/me", 4)):
            ObservedPathFactory(endpoint=users, path=path, count=count)
            ApiTraceFactory(endpoint=users, path=path)

        same, me = ok(update(client, users, ["/users/{param1}", "/users/me"]))

        assert same["uuid"] == str(users.uuid) and me["path"] == "/users/me"
        assert set(ObservedPath.objects.filter(endpoint=users).values_list("path", flat=True)) == {"/users/1", "/users/2"}
        assert list(ObservedPath.objects.filter(endpoint_id=me["uuid"]).values_list("path", "count")) == [("/users/me", 4)]
        assert set(ApiTrace.objects.filter(endpoint_id=me["uuid"]).values_list("path", flat=True)) == {"/users/me"}
        assert DataField.objects.filter(endpoint=users).count() == 1
        assert DataField.objects.filter(endpoint_id=me["uuid"]).count() == 0

    def test_matching_traffic_of_a_more_general_sibling_moves_to_the_more_specific_target(self, client, host):
        literal = ep(host, "/users/5")
        catch_all = ep(host, "/{param1}/{param2}")
        DataFieldFactory(endpoint=catch_all, data_path="x")
        ObservedPathFactory(endpoint=catch_all, path="/users/8", count=2)
        ObservedPathFactory(endpoint=catch_all, path="/shops/3", count=1)
        ApiTraceFactory(endpoint=catch_all, path="/users/8")
        ApiTraceFactory(endpoint=catch_all, path="/shops/3")

        [users] = ok(update(client, literal, ["/users/{param1}"]))

        assert Endpoint.objects.filter(uuid=catch_all.uuid).exists()
        assert list(ObservedPath.objects.filter(endpoint=catch_all).values_list("path", flat=True)) == ["/shops/3"]
        assert list(ObservedPath.objects.filter(endpoint_id=users["uuid"]).values_list("path", flat=True)) == [
            "/users/8"]
        assert list(ApiTrace.objects.filter(endpoint=catch_all).values_list("path", flat=True)) == ["/shops/3"]
        assert DataField.objects.filter(endpoint=catch_all).count() == 1

    def test_a_sibling_whose_observed_paths_all_moved_is_dissolved_into_the_target(self, client, host):
        literal = ep(host, "/users/5")
        mostly_users = ep(host, "/{param1}/{param2}")
        DataFieldFactory(endpoint=mostly_users, data_path="x", data_classes=["email"])
        ObservedPathFactory(endpoint=mostly_users, path="/users/8")

        [users] = ok(update(client, literal, ["/users/{param1}"]))

        assert not Endpoint.objects.filter(uuid=mostly_users.uuid).exists()
        assert list(DataField.objects.filter(endpoint_id=users["uuid"]).values_list("data_path", flat=True)) == ["x"]
        assert users["riskScore"] == "MEDIUM"

    def test_rename_without_matching_traffic_moves_everything(self, client, host):
        old = ep(host, "/users/{param1}", is_authenticated_user_set=False)
        DataFieldFactory(endpoint=old, data_path="email", data_classes=["email"])
        AlertFactory(endpoint=old)

        [renamed] = ok(update(client, old, ["/accounts/{param1}"]))

        assert renamed["path"] == "/accounts/{param1}" and renamed["isAuthenticatedUserSet"] is False
        assert not Endpoint.objects.filter(uuid=old.uuid).exists()
        assert DataField.objects.get().endpoint_id == Endpoint.objects.get(path="/accounts/{param1}").uuid
        assert Alert.objects.get().endpoint_id == Endpoint.objects.get(path="/accounts/{param1}").uuid

    def test_repeated_patterns_give_one_endpoint(self, client, host):
        e = ep(host, "/users/1")
        results = ok(update(client, e, ["/users/{id}", "/users/{param1}", "/users/{x}"]))
        # Names differ, the pattern is one (same regex): the first spelling is kept (DECISIONS §4).
        assert [r["path"] for r in results] == ["/users/{id}"]
        assert Endpoint.objects.filter(host=host).count() == 1

    def test_nothing_merges_across_methods_hosts_or_segment_counts(self, client, host):
        e = ep(host, "/users/1")
        post = ep(host, "/users/2", method="POST")
        deeper = ep(host, "/users/2/orders")
        other_host = ep(HostFactory(name="b.example.com"), "/users/2")
        ok(update(client, e, ["/users/{param1}"]))
        assert Endpoint.objects.filter(uuid__in=[post.uuid, deeper.uuid, other_host.uuid]).count() == 3


class TestValidation:
    @pytest.mark.parametrize("path, reason", [
        ("users/{param1}", "must start with /"),
        ("/users?x", "must not contain ?"),
        ("/users/a=b", "must not contain ="),
        ("/users/", "must not contain empty segments"),
        ("//x", "must not contain empty segments"),
        ("/users", "must have 2 segment(s) like the current path, not 1"),
        ("/users/{param1}/x", "must have 2 segment(s) like the current path, not 3"),
    ])
    def test_a_bad_path_is_400_with_the_path_and_reason_and_changes_nothing(self, client, host, path, reason):
        e = ep(host, "/users/1")
        response = update(client, e, ["/users/{param1}", path])
        assert response.status_code == 400
        assert response.json() == f"{path}: {reason}"
        assert list(Endpoint.objects.values_list("path", flat=True)) == ["/users/1"]

    @pytest.mark.parametrize("body, code", [
        ({}, "invalid_type"), ({"paths": []}, "too_small"), ({"paths": "/x"}, "invalid_type"),
        ({"paths": [1]}, "invalid_type"),
    ])
    def test_a_bad_body_is_a_zod_400(self, client, host, body, code):
        e = ep(host, "/users/1")
        response = client.post(f"/api/v1/endpoint/{e.uuid}/update-paths", body, format="json")
        assert response.status_code == 400 and response.json()["type"] == "ZOD"
        assert response.json()["err"]["issues"][0]["code"] == code
        assert Endpoint.objects.get().uuid == e.uuid


def test_resulting_endpoints_are_marked_operator_written(client, host):
    existing = ep(host, "/shops/{param1}")
    e = ep(host, "/users/1")
    [created, reused] = ok(update(client, e, ["/users/{param1}", "/shops/{param1}"]))
    assert reused["uuid"] == str(existing.uuid)
    assert Endpoint.objects.get(uuid=created["uuid"]).user_set_path is True
    assert Endpoint.objects.get(uuid=existing.uuid).user_set_path is True


def test_an_equally_specific_new_pattern_does_not_take_traffic_from_the_kept_endpoint(client, host):
    users = ep(host, "/users/{param1}")
    ObservedPathFactory(endpoint=users, path="/users/5")
    ApiTraceFactory(endpoint=users, path="/users/5")
    fives, same = ok(update(client, users, ["/{param1}/5", "/users/{param1}"]))
    assert same["uuid"] == str(users.uuid)
    assert list(ObservedPath.objects.filter(endpoint=users).values_list("path", flat=True)) == ["/users/5"]
    assert ApiTrace.objects.filter(endpoint=users).count() == 1
    assert ApiTrace.objects.filter(endpoint_id=fives["uuid"]).count() == 0
