"""``manage.py split_word_merges`` (issue #25): endpoints learned from dictionary words by the old rule
are split back into one endpoint per word; where uuids, aliases, fields, alerts and usage go."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from classification.models import DataField
from core.enums import AlertStatus, AlertType
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, ObservedPath, UsageDay

from .ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

HOST = "host-00.perf.example.com"
SUBS = ["details", "history", "settings", "notes", "comments", "tags", "events", "files", "messages", "shipments"]
ANSWER = {"id": 1, "owner": {"name": "User", "email": "user@example.com"}, "status": "ok"}


@pytest.fixture
def old_rule(monkeypatch):
    """Learning as it was before dictionary words became standouts."""
    import inventory.patterns.learn as learn

    monkeypatch.setattr(learn, "is_dictionary_word", lambda segment: False)
    monkeypatch.setattr(learn, "is_compound_word", lambda segment: False)
    return monkeypatch


def paths(host=HOST) -> list[str]:
    return sorted(Endpoint.objects.filter(host__name=host).values_list("path", flat=True))


def run(**options) -> str:
    out = StringIO()
    call_command("split_word_merges", stdout=out, **options)
    return out.getvalue()


def test_metlo_sub_resources_merged_by_the_old_rule_are_split_back(ingest, old_rule, client):
    # details gets the most requests: the merged endpoint's uuid stays with it.
    ingest(*(raw_trace(host=HOST, path=f"/api/users/{100000 + i}/{sub}", response_body=ANSWER)
             for i in range(3) for sub in SUBS),
           *(raw_trace(host=HOST, path=f"/api/users/{200000 + i}/details", response_body=ANSWER) for i in range(3)))
    # The old rule kept its reserved words (history, settings, events) apart and merged the rest.
    assert paths() == ["/api/users/{param1}/events", "/api/users/{param1}/history", "/api/users/{param1}/settings",
                       "/api/users/{param1}/{param2}"]
    merged = Endpoint.objects.get(path="/api/users/{param1}/{param2}")
    Endpoint.objects.filter(pk=merged.pk).update(learned_segments={"3": "words"})  # the old rule's label
    old_ids = {a.context["path"]: a for a in Alert.objects.filter(type=AlertType.NEW_ENDPOINT)}
    assert len(old_ids) == 10 and Alert.objects.filter(status=AlertStatus.RESOLVED).count() >= 6
    usage_before = sum(UsageDay.objects.filter(endpoint=merged).values_list("count", flat=True))
    old_rule.undo()

    assert "1 learned endpoint(s) would be split" in run(dry_run=True)
    assert len(paths()) == 4 and Endpoint.objects.get(uuid=merged.uuid).path.endswith("{param2}")  # dry run

    output = run()
    assert "1 learned endpoint(s) were split: 6 endpoint(s) split out" in output

    assert paths() == sorted(f"/api/users/{{param1}}/{sub}" for sub in SUBS)
    kept = Endpoint.objects.get(uuid=merged.uuid)
    assert kept.path == "/api/users/{param1}/details" and kept.learned_segments == {}
    # Usage cannot be split exactly: it stays on the endpoint that kept the uuid.
    assert sum(UsageDay.objects.filter(endpoint=kept).values_list("count", flat=True)) == usage_before
    for sub in SUBS:
        endpoint = Endpoint.objects.get(host__name=HOST, path=f"/api/users/{{param1}}/{sub}")
        observed = set(ObservedPath.objects.filter(endpoint=endpoint).values_list("path", flat=True))
        assert observed and all(p.endswith(f"/{sub}") for p in observed)
        assert all(t.path.endswith(f"/{sub}") for t in ApiTrace.objects.filter(endpoint=endpoint))
        assert ApiTrace.objects.filter(endpoint=endpoint).exists()
        assert DataField.objects.filter(endpoint=endpoint, data_path="owner.email").get().data_classes == ["email"]
        assert endpoint.risk_score == kept.risk_score
        # Its own "New Endpoint Detected" alert is back and open.
        new = Alert.objects.get(endpoint=endpoint, type=AlertType.NEW_ENDPOINT)
        assert new.status == AlertStatus.OPEN and new.resolution_message is None
        assert new.uuid == old_ids[f"/api/users/{{param1}}/{sub}"].uuid
    assert not Alert.objects.filter(resolution_message__startswith="Merged into").exists()
    # The merged endpoint's id keeps resolving (to the endpoint that kept it).
    assert client.get(f"/api/v1/endpoint/{merged.uuid}").json()["path"] == "/api/users/{param1}/details"

    # Idempotent.
    assert "0 learned endpoint(s) were split" in run()
    assert len(paths()) == 10


def test_names_stay_learned_and_only_the_words_come_out(ingest, old_rule):
    host = "vampi.example.com"
    names = ["alice", "dmitri", "oscar", "quentin", "ursula"]
    ingest(*(raw_trace(host=host, path=f"/users/v1/{n}", response_body={"username": n, "email": f"{n}@x.io"})
             for n in [*names, "bob", "carol", "mark"]))
    assert paths(host) == ["/users/v1/{param1}"]
    learned = Endpoint.objects.get(host__name=host)
    old_rule.undo()

    run(host=host)

    assert paths(host) == ["/users/v1/bob", "/users/v1/carol", "/users/v1/mark", "/users/v1/{param1}"]
    kept = Endpoint.objects.get(host__name=host, path="/users/v1/{param1}")
    assert kept.uuid == learned.uuid and kept.learned_segments == {"2": "names"}
    assert set(ObservedPath.objects.filter(endpoint=kept).values_list("path", flat=True)) == {
        f"/users/v1/{n}" for n in names}
    # New traffic: names go to the learned endpoint, words to theirs.
    ingest(raw_trace(host=host, path="/users/v1/zoe", response_body={"username": "zoe"}),
           raw_trace(host=host, path="/users/v1/bob", response_body={"username": "bob"}))
    assert paths(host) == ["/users/v1/bob", "/users/v1/carol", "/users/v1/mark", "/users/v1/{param1}"]
