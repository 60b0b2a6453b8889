"""Discovery from traffic: hosts, endpoint patterns, data fields, types, classes, risk (DECISIONS §4, §5, §9)."""
import pytest

from classification.models import DataClass, DataField
from inventory.models import Endpoint, EndpointCaller, Host, HostAddress, ObservedPath

from .ingest_support import processed_trace, raw_trace, sample, send

pytestmark = pytest.mark.django_db

V1 = "/api/v1/log-request/batch"
V2 = "/api/v2/log-request/batch"


@pytest.fixture
def ingest(client, django_capture_on_commit_callbacks):
    def _ingest(*traces, url=V1):
        response = send(client, django_capture_on_commit_callbacks, url, list(traces))
        assert response.status_code == 200, response.content
        return response
    return _ingest


def fields_of(endpoint) -> dict:
    return {(f.data_section, f.data_path): f for f in DataField.objects.filter(endpoint=endpoint)}


def test_a_raw_trace_creates_host_endpoint_fields_and_risk(ingest):
    ingest(raw_trace(
        host="https://API.Example.com:8443", path="/api/v1/users/42", query=[("expand", "profile")],
        headers={"Accept": "application/json", "X-Request-Id": "r-1"},
        response_body={"user": {"id": 42, "email": "alice@example.com", "score": 4.5, "active": True,
                                "nickname": None, "tags": ["a", "b"], "phones": [{"number": "+14155552671"}]}},
    ))
    host = Host.objects.get()
    assert host.name == "api.example.com"
    endpoint = Endpoint.objects.get()
    assert (endpoint.host, endpoint.method, endpoint.path) == (host, "GET", "/api/v1/users/{param1}")
    assert endpoint.num_segments == 4 and endpoint.num_literal_segments == 3
    assert endpoint.first_detected is not None and endpoint.last_active is not None
    fields = fields_of(endpoint)
    expected = {
        ("REQUEST_QUERY", "expand"): ("string", -1, []),
        ("REQUEST_HEADER", "accept"): ("string", -1, []),
        ("REQUEST_HEADER", "x-request-id"): ("string", -1, []),
        ("RESPONSE_HEADER", "content-type"): ("string", 200, []),
        ("RESPONSE_BODY", "user.id"): ("integer", 200, []),
        ("RESPONSE_BODY", "user.email"): ("string", 200, ["email"]),
        ("RESPONSE_BODY", "user.score"): ("number", 200, []),
        ("RESPONSE_BODY", "user.active"): ("boolean", 200, []),
        ("RESPONSE_BODY", "user.nickname"): ("null", 200, []),
        ("RESPONSE_BODY", "user.tags[]"): ("string", 200, []),
        ("RESPONSE_BODY", "user.phones[].number"): ("string", 200, ["phone_number"]),
    }
    assert {k: (f.data_type, f.status_code, f.data_classes) for k, f in fields.items()} == expected
    assert fields[("RESPONSE_BODY", "user.nickname")].is_nullable is True
    assert fields[("RESPONSE_BODY", "user.email")].content_type == "application/json"
    assert endpoint.risk_score == "MEDIUM" and endpoint.risk_rank == 2
    assert endpoint.data_classes == ["email", "phone_number"]


def test_a_second_trace_with_another_id_matches_the_same_endpoint(ingest):
    ingest(raw_trace(path="/api/v1/users/42", response_body={"id": 42}))
    ingest(raw_trace(path="/api/v1/users/77", response_body={"id": 77, "email": "bob@example.com"}))
    endpoint = Endpoint.objects.get()
    assert endpoint.path == "/api/v1/users/{param1}"
    assert set(ObservedPath.objects.values_list("path", flat=True)) == {"/api/v1/users/42", "/api/v1/users/77"}
    assert fields_of(endpoint)[("RESPONSE_BODY", "email")].data_classes == ["email"]
    assert endpoint.risk_score == "MEDIUM"


@pytest.mark.parametrize("order", [("42", "me"), ("me", "42")])
def test_users_me_next_to_users_42_stays_literal(ingest, order):
    for segment in order:
        ingest(raw_trace(path=f"/api/v1/users/{segment}"))
    ingest(raw_trace(path="/api/v1/users/me"), raw_trace(path="/api/v1/users/1001"))
    assert sorted(Endpoint.objects.values_list("path", flat=True)) == ["/api/v1/users/me", "/api/v1/users/{param1}"]


@pytest.mark.parametrize("segment", [
    "12345", "550e8400-e29b-41d4-a716-446655440000", "5f2b9c0a1e", "a1b2c3d4e5f6g7", "alice@example.com",
    "2024-01-31", "dGhpcyBpcyBhIHZlcnkgbG9uZyBvcGFxdWUgdG9rZW4",
])
def test_parameter_segments(ingest, segment):
    ingest(raw_trace(path=f"/v1/things/{segment}/details"))
    assert Endpoint.objects.get().path == "/v1/things/{param1}/details"


@pytest.mark.parametrize("path", ["/api/v1/getUserProfile", "/v2/api/orders", "/health/live", "/oauth2callback"])
def test_names_stay_literal(ingest, path):
    ingest(raw_trace(path=path))
    assert Endpoint.objects.get().path == path


def test_parameters_are_numbered_left_to_right(ingest):
    ingest(raw_trace(path="/orgs/17/repos/9f8e7d6c5b/issues/3"))
    assert Endpoint.objects.get().path == "/orgs/{param1}/repos/{param2}/issues/{param3}"


def test_the_most_specific_pattern_wins(ingest, client):
    ingest(raw_trace(path="/files/123/raw"), raw_trace(path="/files/123/meta"))
    # An operator-written pattern with two parameters exists next to the detected ones.
    Endpoint.objects.create(host=Host.objects.get(), method="GET", path="/files/{param1}/{param2}",
                            path_regex="^/files/[^/]+/[^/]+$", num_segments=3, num_literal_segments=1,
                            user_set_path=True)
    ingest(raw_trace(path="/files/456/raw"), raw_trace(path="/files/456/thumbnail"))
    counts = {e.path: e.observed_paths.count() for e in Endpoint.objects.all()}
    assert counts == {"/files/{param1}/raw": 2, "/files/{param1}/meta": 1, "/files/{param1}/{param2}": 1}


def test_an_operator_pattern_absorbs_word_segments(ingest):
    ingest(raw_trace(path="/teams/red"))
    Endpoint.objects.filter(path="/teams/red").update(path="/teams/{param1}", path_regex="^/teams/[^/]+$",
                                                      num_literal_segments=1, user_set_path=True)
    ingest(raw_trace(path="/teams/blue"))
    assert list(Endpoint.objects.values_list("path", flat=True)) == ["/teams/{param1}"]


def test_methods_and_hosts_make_distinct_endpoints(ingest):
    ingest(raw_trace(path="/items/1"), raw_trace(path="/items/2", method="DELETE"),
           raw_trace(host="other.example.com", path="/items/3"))
    assert sorted(Endpoint.objects.values_list("host__name", "method", "path")) == [
        ("api.example.com", "DELETE", "/items/{param1}"), ("api.example.com", "GET", "/items/{param1}"),
        ("other.example.com", "GET", "/items/{param1}"),
    ]


@pytest.mark.parametrize("status", [404, 405])
def test_404_and_405_answers_create_nothing(ingest, status):
    ingest(raw_trace(path="/does-not-exist", status=status, response_body={"error": "alice@example.com"}))
    assert Endpoint.objects.count() == 0
    assert DataField.objects.count() == 0


def test_a_404_on_a_known_endpoint_is_analysed(ingest):
    ingest(raw_trace(path="/api/v1/users/42"))
    ingest(raw_trace(path="/api/v1/users/43", status=404, response_body={"detail": "not found"}))
    endpoint = Endpoint.objects.get()
    assert DataField.objects.get(endpoint=endpoint, data_path="detail").status_code == 404


def test_request_sections_are_analysed_only_below_400(ingest):
    ingest(raw_trace(path="/login", method="POST", status=401, body='{"email": "eve@example.com"}',
                     headers={"Content-Type": "application/json"}, response_body={"error": "denied"}))
    endpoint = Endpoint.objects.get()
    assert {(f.data_section, f.data_path) for f in DataField.objects.filter(endpoint=endpoint)} == {
        ("RESPONSE_HEADER", "content-type"), ("RESPONSE_BODY", "error")}


def test_form_text_and_array_bodies(ingest):
    ingest(
        raw_trace(path="/signup", method="POST", body="name=Al&contact=al%40example.com",
                  headers={"Content-Type": "application/x-www-form-urlencoded"}, response_body="welcome",
                  response_headers={"Content-Type": "text/plain"}),
        raw_trace(path="/batch", method="POST", body='[{"id": 1}, {"id": 2.5}]',
                  headers={"Content-Type": "application/json"}, response_body=[]),
    )
    signup = fields_of(Endpoint.objects.get(path="/signup"))
    assert signup[("REQUEST_BODY", "contact")].data_classes == ["email"]
    assert signup[("REQUEST_BODY", "contact")].content_type == "application/x-www-form-urlencoded"
    assert signup[("RESPONSE_BODY", "")].data_type == "string"
    batch = fields_of(Endpoint.objects.get(path="/batch"))
    assert batch[("REQUEST_BODY", "[].id")].data_type == "number"  # integer and number seen: number
    assert batch[("RESPONSE_BODY", "")].data_type == "array"


def test_a_type_seen_null_then_string_is_a_nullable_string(ingest):
    ingest(raw_trace(response_body={"middle_name": None}))
    ingest(raw_trace(response_body={"middle_name": "Q"}))
    field = DataField.objects.get(data_path="middle_name")
    assert (field.data_type, field.is_nullable) == ("string", True)


def test_v2_processed_traces_create_classified_fields(ingest):
    ingest(*sample("v2-batch-flask-01.json"), url=V2)
    users = Endpoint.objects.get(path="/users/{param1}")
    fields = fields_of(users)
    assert fields[("RESPONSE_BODY", "user.email")].data_classes == ["email"]
    assert fields[("RESPONSE_BODY", "user.id")].data_type == "number"
    assert fields[("RESPONSE_BODY", "user.tags[]")].data_type == "string"
    assert fields[("REQUEST_HEADER", "user-agent")].status_code == -1
    assert users.risk_score == "MEDIUM"
    login = fields_of(Endpoint.objects.get(path="/login"))
    assert login[("REQUEST_BODY", "email")].data_classes == ["email"]
    assert login[("RESPONSE_BODY", "contact")].content_type == "application/json"


def test_v2_metlo_class_names_are_mapped_and_unknown_ones_ignored(ingest):
    ingest(*sample("v2-batch-extra-invalid-config-builtin-classes-01.json"), url=V2)
    ingest(*sample("v2-batch-extra-authcfg-attacks-01.json"), url=V2)
    x = fields_of(Endpoint.objects.get(path="/x"))
    assert x[("REQUEST_BODY", "ip")].data_classes == ["ip_address"]
    assert x[("REQUEST_BODY", "email")].data_classes == ["email"]
    users = fields_of(Endpoint.objects.get(path="/users/{param1}"))
    # "secret_key", "both" and "bearer" are not classes of ours.
    assert users[("REQUEST_BODY", "mail")].data_classes == []
    assert users[("REQUEST_BODY", "items[].name")].data_type == "string"
    assert users[("REQUEST_BODY", "none")].is_nullable is True


def test_v2_partial_traces_only_count_usage(ingest):
    ingest(processed_trace(analysisType="partial", processedTraceData={"requestContentType": "",
                                                                       "responseContentType": ""}), url=V2)
    endpoint = Endpoint.objects.get()
    assert DataField.objects.count() == 0 and endpoint.traces.count() == 0
    assert endpoint.usage_minutes.get().count == 1


def test_an_agent_sent_endpoint_path_is_taken_as_the_pattern(ingest):
    trace = raw_trace(path="/shop/carts/alpha")
    trace["request"]["url"]["endpointPath"] = "/shop/carts/{cartName}"
    ingest(trace)
    assert Endpoint.objects.get().path == "/shop/carts/{param1}"


def test_graphql_documents_and_variables_are_analysed(ingest):
    body = ('{"query": "mutation Create($input: UserInput!) { createUser(input: $input, notify: \\"ops@example.com\\") '
            '{ id email } }", "variables": {"input": {"email": "new@example.com", "age": 33}}}')
    ingest(raw_trace(path="/api/graph", method="POST", body=body, headers={"Content-Type": "application/json"},
                     response_body={"data": {"createUser": {"id": "u1", "email": "new@example.com"}}}))
    endpoint = Endpoint.objects.get()
    assert endpoint.is_graphql is True
    fields = fields_of(endpoint)
    assert fields[("REQUEST_BODY", "mutation.createUser.__args.input.email")].data_classes == ["email"]
    assert fields[("REQUEST_BODY", "mutation.createUser.__args.input.age")].data_type == "integer"
    assert fields[("REQUEST_BODY", "mutation.createUser.__args.notify")].data_classes == ["email"]
    assert fields[("RESPONSE_BODY", "mutation.createUser.email")].data_classes == ["email"]
    assert ("REQUEST_BODY", "query") not in fields


def test_a_path_ending_in_graphql_is_graphql(ingest):
    ingest(raw_trace(path="/graphql", method="POST", body="not a document"))
    assert Endpoint.objects.get().is_graphql is True


def test_at_most_200_fields_per_endpoint(ingest):
    ingest(raw_trace(response_body={f"f{i}": i for i in range(150)}))
    ingest(raw_trace(response_body={f"g{i}": i for i in range(150)}))
    assert DataField.objects.count() == 200


def test_a_removed_class_is_never_re_added(ingest):
    ingest(raw_trace(response_body={"contact": "alice@example.com"}))
    field = DataField.objects.get(data_path="contact")
    field.data_classes, field.false_positives = [], ["email"]
    field.save()
    Endpoint.objects.update(data_classes=[], risk_score="NONE", risk_rank=0)
    ingest(raw_trace(response_body={"contact": "bob@example.com"}))
    field.refresh_from_db()
    assert field.data_classes == [] and field.false_positives == ["email"]
    assert Endpoint.objects.get().risk_score == "NONE"


def test_custom_classes_are_detected_and_disabled_ones_are_not(ingest):
    DataClass.objects.create(name="employee_badge", short_name="Badge", severity="HIGH", value_regex=r"^EMP-\d{6}$")
    DataClass.objects.filter(name="email").update(enabled=False)
    ingest(raw_trace(response_body={"badge": "EMP-123456", "mail": "alice@example.com"}))
    assert DataField.objects.get(data_path="badge").data_classes == ["employee_badge"]
    assert DataField.objects.get(data_path="mail").data_classes == []
    assert Endpoint.objects.get().risk_score == "HIGH"


def test_is_authenticated_detected(ingest):
    ingest(raw_trace(path="/private", headers={"Authorization": "Bearer abcdefghijklmnop"}))
    assert Endpoint.objects.get(path="/private").is_authenticated_detected is True
    ingest(raw_trace(path="/private", status=401))  # a refused request changes nothing
    assert Endpoint.objects.get(path="/private").is_authenticated_detected is True
    ingest(raw_trace(path="/private"))  # a success without credentials: not authenticated, for good
    ingest(raw_trace(path="/private", headers={"Cookie": "session=abc"}))
    endpoint = Endpoint.objects.get(path="/private")
    assert endpoint.is_authenticated_detected is False and endpoint.unauthenticated_success_seen is True
    ingest(raw_trace(path="/keyed", query=[("api_key", "k-123")]), raw_trace(path="/sdk", headers={"X-Api-Key": "k"}))
    assert set(Endpoint.objects.filter(is_authenticated_detected=True).values_list("path", flat=True)) == {
        "/keyed", "/sdk"}


def test_host_public_or_private(ingest):
    ingest(
        raw_trace(host="shop.example.com", destination="93.184.216.34"),
        raw_trace(host="billing.example.com", destination="10.1.2.3"),
        raw_trace(host="api.partner.io", destination=""),
        raw_trace(host="users.prod.svc", destination=""),
        raw_trace(host="localhost:8000", destination=""),
        raw_trace(host="192.168.1.20", destination=""),
    )
    public = dict(Host.objects.values_list("name", "is_public"))
    assert public == {"shop.example.com": True, "billing.example.com": False, "api.partner.io": True,
                      "users.prod.svc": False, "localhost": False, "192.168.1.20": False}
    # A global destination address seen later makes the host public.
    ingest(raw_trace(host="billing.example.com", destination="151.101.1.69"))
    assert Host.objects.get(name="billing.example.com").is_public is True


def test_operator_override_of_public_survives_ingestion(ingest):
    ingest(raw_trace(host="shop.example.com", destination="93.184.216.34"))
    Host.objects.filter(name="shop.example.com").update(public_override=False, is_public=False)
    ingest(raw_trace(host="shop.example.com", destination="151.101.1.69"))
    host = Host.objects.get()
    assert host.is_public is False and host.is_public_detected is True


def test_addresses_and_callers_are_recorded_for_the_hosts_graph(ingest):
    ingest(raw_trace(host="orders.internal", path="/orders/1", source="10.0.0.5", destination="10.0.0.9"),
           raw_trace(host="orders.internal", path="/orders/2", source="10.0.0.6", destination="10.0.0.9"))
    assert list(HostAddress.objects.values_list("host__name", "address")) == [("orders.internal", "10.0.0.9")]
    assert sorted(EndpointCaller.objects.values_list("endpoint__path", "address")) == [
        ("/orders/{param1}", "10.0.0.5"), ("/orders/{param1}", "10.0.0.6")]


def test_internet_clients_are_not_recorded_as_callers_but_known_hosts_are(ingest):
    ingest(raw_trace(host="web.example.com", path="/home", source="81.2.69.160", destination="93.184.216.34"))
    assert EndpointCaller.objects.count() == 0  # an internet client is no graph edge
    # web.example.com (served on 93.184.216.34) calls the API: that address is recorded.
    ingest(raw_trace(host="api.example.com", path="/v1/items", source="93.184.216.34", destination="151.101.1.69"))
    assert list(EndpointCaller.objects.values_list("endpoint__host__name", "address")) == [
        ("api.example.com", "93.184.216.34")]
