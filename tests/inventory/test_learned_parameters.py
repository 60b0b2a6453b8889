"""Parameterisation learned from cardinality (DECISIONS §9): through the ingestion routes, the analysis
task and the database; old ids resolve, the setting turns it off, operator paths are never touched."""
import pytest

from classification.models import DataField
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, IngestBatch

from .ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

HOST = "vampi.example.com"
NEW_ENDPOINT = "New Endpoint Detected"
# Usernames that are not dictionary words (DECISIONS §9 amended: ``bob``, ``carol``, ``frank`` are words
# and stay literal endpoints; ``alice`` or ``dmitri`` are values).
USERNAMES = ["alice", "dmitri", "oscar", "dave", "erin", "quentin", "ursula", "heidi", "ivan", "judy", "mallory",
             "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "xavier", "walter", "yolanda"]


def user_trace(name: str, **kwargs):
    """VAmPI's GET /users/v1/{username}: the user's record."""
    return raw_trace(host=HOST, path=f"/users/v1/{name}", response_body={"username": name,
                                                                         "email": f"{name}@example.com"}, **kwargs)


def paths() -> list[str]:
    return sorted(Endpoint.objects.filter(host__name=HOST).values_list("path", flat=True))


def test_twenty_usernames_become_one_endpoint_with_all_their_traffic(client, ingest, settings):
    settings.PATH_LEARNING = False
    ingest(*(user_trace(name) for name in USERNAMES))
    old_ids = {e.path: str(e.uuid) for e in Endpoint.objects.all()}
    assert len(old_ids) == 20 and Alert.objects.filter(type=NEW_ENDPOINT, status="Open").count() == 20

    settings.PATH_LEARNING = True
    ingest(user_trace("zoe"))  # a new endpoint in the family: the worker learns the group

    assert paths() == ["/users/v1/{param1}"]
    merged = Endpoint.objects.get()
    detail = client.get(f"/api/v1/endpoint/{merged.uuid}").json()
    assert len(detail["traces"]) == 21 == ApiTrace.objects.filter(endpoint=merged).count()
    assert {t["path"] for t in detail["traces"]} == {f"/users/v1/{n}" for n in [*USERNAMES, "zoe"]}
    usage = client.get(f"/api/v1/endpoint/{merged.uuid}/usage").json()
    assert sum(day["cnt"] for day in usage["dailyUsage"]) == 21
    [email] = DataField.objects.filter(endpoint=merged, data_path="email")
    # 21 endpoints' fields (username, email, the content-type header each) collapse into one of each.
    assert email.data_classes == ["email"] and DataField.objects.count() == 3
    assert set(DataField.objects.values_list("data_path", flat=True)) == {"email", "username", "content-type"}
    assert detail["riskScore"] == merged.risk_score and "email" in merged.data_classes

    new_endpoint = [a for a in detail["alerts"] if a["type"] == NEW_ENDPOINT]
    assert [a["status"] for a in new_endpoint].count("Open") == 1
    resolved = [a for a in new_endpoint if a["status"] == "Resolved"]
    assert len(resolved) == 20 and all(a["resolutionMessage"].startswith("Merged into /users/v1/{param1}")
                                       for a in resolved)
    assert Alert.objects.exclude(endpoint=merged).count() == 0
    # Duplicate PII alerts (one per old endpoint) collapse the same way: one stays open.
    pii = [a for a in detail["alerts"] if a["type"] == "PII Data Detected"]
    assert [a["status"] for a in pii].count("Open") == 1

    for path, old in old_ids.items():
        answer = client.get(f"/api/v1/endpoint/{old}")
        assert answer.status_code == 200 and answer.json()["uuid"] == str(merged.uuid), path
        assert client.get(f"/api/v1/endpoint/{old}/usage").status_code == 200

    # Later usernames go straight to the learned endpoint: no endpoint, no alert.
    ingest(user_trace("amelia"), user_trace("bartholomew"))
    assert paths() == ["/users/v1/{param1}"]
    assert Alert.objects.filter(type=NEW_ENDPOINT).count() == 21
    assert ApiTrace.objects.filter(endpoint=merged).count() == 23


def test_names_arriving_one_batch_at_a_time_are_learned_at_the_third(ingest):
    ingest(user_trace("alice"))
    ingest(user_trace("dmitri"))
    assert paths() == ["/users/v1/alice", "/users/v1/dmitri"]
    ingest(user_trace("oscar"))
    assert paths() == ["/users/v1/{param1}"]
    for name in USERNAMES[3:]:
        ingest(user_trace(name))
    assert paths() == ["/users/v1/{param1}"]
    assert ApiTrace.objects.count() == 20
    assert Alert.objects.filter(type=NEW_ENDPOINT, status="Open").count() == 1
    assert IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).count() == 0


def test_the_setting_off_keeps_literals_and_suggested_paths_offers_the_pattern(client, ingest, settings):
    settings.PATH_LEARNING = False
    ingest(*(user_trace(name) for name in USERNAMES[:5]))
    assert len(paths()) == 5 and "/users/v1/{param1}" not in paths()
    alice = Endpoint.objects.get(path="/users/v1/alice")
    assert client.get(f"/api/v1/endpoint/{alice.uuid}/suggested-paths").json()[0] == "/users/v1/{param1}"


def test_literals_of_another_shape_reserved_words_and_operator_paths_stay(client, ingest):
    ingest(raw_trace(host=HOST, path="/users/v1/_debug", response_body={"users": [{"username": "a"}]}),
           raw_trace(host=HOST, path="/users/v1/me", response_body={"username": "me", "email": "me@example.com"}),
           user_trace("admin"))
    admin = Endpoint.objects.get(path="/users/v1/admin")
    response = client.post(f"/api/v1/endpoint/{admin.uuid}/update-paths", {"paths": ["/users/v1/admin"]},
                           format="json")
    assert response.status_code == 200, response.content

    ingest(*(user_trace(name) for name in USERNAMES))

    assert paths() == ["/users/v1/_debug", "/users/v1/admin", "/users/v1/me", "/users/v1/{param1}"]
    operator = Endpoint.objects.get(path="/users/v1/admin")
    assert operator.user_set_path and operator.uuid == admin.uuid
    ingest(user_trace("admin"), raw_trace(host=HOST, path="/users/v1/me", response_body={"username": "me"}))
    assert ApiTrace.objects.filter(endpoint=operator).count() == 2
    assert ApiTrace.objects.filter(endpoint__path="/users/v1/me").count() == 2


def test_update_paths_splits_a_learned_endpoint_again(client, ingest):
    ingest(*(user_trace(name) for name in USERNAMES[:6]))
    learned = Endpoint.objects.get()
    assert learned.path == "/users/v1/{param1}" and learned.learned_segments == {"2": "names"}

    response = client.post(f"/api/v1/endpoint/{learned.uuid}/update-paths",
                           {"paths": ["/users/v1/alice", "/users/v1/{username}"]}, format="json")
    assert response.status_code == 200, response.content
    alice, rest = response.json()
    assert (alice["path"], rest["path"]) == ("/users/v1/alice", "/users/v1/{username}")
    assert list(ApiTrace.objects.filter(endpoint_id=alice["uuid"]).values_list("path", flat=True)) == [
        "/users/v1/alice"]
    assert ApiTrace.objects.filter(endpoint_id=rest["uuid"]).count() == 5

    ingest(user_trace("alice"), *(user_trace(name) for name in USERNAMES[6:10]))
    assert paths() == ["/users/v1/alice", "/users/v1/{username}"]
    assert ApiTrace.objects.filter(endpoint_id=alice["uuid"]).count() == 2


def test_ids_with_a_word_among_them_and_dotted_namespaces(ingest):
    ingest(*(raw_trace(host=HOST, path=f"/payment/id{i}", response_body={"amount": i, "currency": "EUR"})
             for i in range(1, 31)),
           raw_trace(host=HOST, path="/payment/history", response_body={"payments": [], "total": 0}))
    assert paths() == ["/payment/history", "/payment/{param1}"]
    ingest(raw_trace(host=HOST, path="/payment/id31", response_body={"amount": 1, "currency": "EUR"}),
           raw_trace(host=HOST, path="/payment/pending", response_body={"payments": []}))
    assert paths() == ["/payment/history", "/payment/pending", "/payment/{param1}"]

    arm = "management.example.com"
    ingest(*(raw_trace(host=arm, path=f"/subscriptions/0b5e4c2a-8d3f-4e1a-9c7b-2f6d8e0a1b3c/resourceGroups/rg-{g}"
                                      f"/providers/{ns}/{kind}/{name}", response_body={"id": name, "location": "x"})
             for g in ("prod", "dev", "test") for ns, kind in (("Microsoft.Compute", "virtualMachines"),
                                                       ("Microsoft.Network", "virtualNetworks"))
             for name in ("vm-alpha", "web-01", "db-gamma")))
    arm_paths = sorted(Endpoint.objects.filter(host__name=arm).values_list("path", flat=True))
    assert arm_paths == [
        "/subscriptions/{param1}/resourceGroups/{param2}/providers/Microsoft.Compute/virtualMachines/{param3}",
        "/subscriptions/{param1}/resourceGroups/{param2}/providers/Microsoft.Network/virtualNetworks/{param3}",
    ]


METLO_SUBRESOURCES = ["details", "history", "settings", "notes", "comments", "tags", "events", "files", "messages",
                      "shipments"]


def test_dictionary_words_are_never_merged_whatever_their_count_and_shapes(ingest):
    """DECISIONS §9 amended: Metlo's sub-resources answering one shape stay ten endpoints; Akto's words too;
    usernames that are not words are still learned, the ones that are words stay literal."""
    answer = {"id": 1, "owner": {"name": "Ada", "email": "ada@example.com"}, "status": "ok"}
    ingest(*(raw_trace(host=HOST, path=f"/api/users/{100000 + i}/{sub}", response_body=answer)
             for i in range(3) for sub in METLO_SUBRESOURCES))
    ingest(*(raw_trace(host=HOST, path=f"/api/{word}", response_body=answer) for word in ("cat", "demo", "tree")))
    ingest(*(user_trace(name) for name in [*USERNAMES[:6], "bob", "carol", "mark"]))

    assert paths() == sorted([*(f"/api/users/{{param1}}/{sub}" for sub in METLO_SUBRESOURCES),
                              "/api/cat", "/api/demo", "/api/tree",
                              "/users/v1/bob", "/users/v1/carol", "/users/v1/mark", "/users/v1/{param1}"])
    learned = Endpoint.objects.get(path="/users/v1/{param1}")
    assert learned.learned_segments == {"2": "names"}
    # A later dictionary word does not go into the learned endpoint; a later name does.
    ingest(user_trace("grace"), user_trace("zoe"))
    assert "/users/v1/grace" in paths() and "/users/v1/zoe" not in paths()


def test_an_endpoint_learned_from_words_before_takes_no_more_words(ingest):
    """A position learned by the old rule ("words") keeps taking names, never dictionary words."""
    ingest(user_trace("alice"))
    endpoint = Endpoint.objects.get()
    Endpoint.objects.filter(pk=endpoint.pk).update(path="/users/v1/{param1}", path_regex=r"^/users/v1/[^/]+$",
                                                   num_literal_segments=2, learned_segments={"2": "words"})
    ingest(user_trace("dmitri"), user_trace("settings"))
    assert paths() == ["/users/v1/settings", "/users/v1/{param1}"]


def test_a_lone_number_is_a_parameter_and_a_version_before_literals_stays(ingest):
    ingest(raw_trace(host=HOST, path="/3", response_body={"id": 3}),
           raw_trace(host=HOST, path="/2/tweets/1460323737035677698", response_body={"data": {"id": "1"}}),
           raw_trace(host=HOST, path="/1.1/statuses/show.json", response_body={"id": 1}))
    assert paths() == ["/1.1/statuses/show.json", "/2/tweets/{param1}", "/{param1}"]
