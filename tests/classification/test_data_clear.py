"""POST /clear-sensitive-data, manage.py clear_sensitive_data and POST /clear-all-datafields."""
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.core.management import CommandError, call_command

from classification.models import DataField
from classification.services import endpoints_refresh_risk
from core.enums import AlertType
from detections.models import Alert
from inventory.models import Endpoint
from tests.support.processes import process_env
from tests.factories import AlertFactory, DataFieldFactory, EndpointFactory

ROOT = Path(__file__).resolve().parents[2]
SENSITIVE = [AlertType.PII_DATA, AlertType.QUERY_SENSITIVE, AlertType.PATH_SENSITIVE,
             AlertType.UNAUTHENTICATED_SENSITIVE]
KEPT = [AlertType.NEW_ENDPOINT, AlertType.BASIC_AUTH, AlertType.UNSECURED_ENDPOINT, AlertType.OPENAPI_SPEC_DIFF]


def inventory():
    """Two classified endpoints with every alert type, and one untouched endpoint."""
    endpoints = [EndpointFactory(), EndpointFactory()]
    for e in endpoints:
        DataFieldFactory(endpoint=e, data_classes=["ssn", "email"], false_positives=["phone_number"],
                         scanner_identified=["ssn"], data_path="a")
        DataFieldFactory(endpoint=e, data_classes=["ip_address"], data_path="b")
        for alert_type in [*SENSITIVE, *KEPT]:
            AlertFactory(endpoint=e, type=alert_type, description=f"{alert_type} on {e.path}")
    plain = EndpointFactory()
    DataFieldFactory(endpoint=plain, data_classes=[], data_path="c")
    endpoints_refresh_risk(endpoint_ids=[e.uuid for e in endpoints])
    assert set(Endpoint.objects.values_list("risk_score", flat=True)) == {"HIGH", "NONE"}
    return endpoints


def assert_cleared(*, fields_left: int):
    assert list(Endpoint.objects.values_list("risk_score", "risk_rank", "data_classes").distinct()) == [("NONE", 0, [])]
    assert DataField.objects.count() == fields_left
    for field in DataField.objects.all():
        assert (field.data_classes, field.false_positives, field.scanner_identified) == ([], [], [])
    assert sorted(Alert.objects.values_list("type", flat=True).distinct()) == sorted(KEPT)
    assert Alert.objects.count() == 2 * len(KEPT)


@pytest.mark.django_db
class TestApi:
    def test_clear_sensitive_data_empties_classes_resets_risk_and_deletes_sensitive_alerts(self, client):
        inventory()
        response = client.post("/api/v1/clear-sensitive-data")
        assert response.status_code == 200 and response.json() == "Success"
        assert_cleared(fields_left=5)
        assert client.get("/api/v1/endpoints", {"riskScores": "HIGH"}).json() == []
        assert client.get("/api/v1/endpoints", {"dataClasses": "ssn"}).json() == []

    def test_clear_all_datafields_deletes_every_field_with_the_same_effects(self, client):
        inventory()
        response = client.post("/api/v1/clear-all-datafields")
        assert response.status_code == 200 and response.json() == "Success"
        assert_cleared(fields_left=0)

    def test_clearing_an_empty_inventory_is_fine(self, client):
        assert client.post("/api/v1/clear-sensitive-data").json() == "Success"
        assert client.post("/api/v1/clear-all-datafields").json() == "Success"

    def test_both_need_the_api_key(self, anon_client):
        inventory()
        for url in ("/api/v1/clear-sensitive-data", "/api/v1/clear-all-datafields"):
            response = anon_client.post(url)
            assert response.status_code == 401 and response.json() == "Client unauthorized"
        assert DataField.objects.count() == 5 and Alert.objects.count() == 16


@pytest.mark.django_db
class TestCommand:
    def test_yes_clears_and_prints_what_it_cleared(self, capsys):
        inventory()
        call_command("clear_sensitive_data", "--yes")
        out = capsys.readouterr().out
        # 4 classified fields, 2 endpoints with a risk, 2 x 4 sensitive alerts
        assert "4 data field(s)" in out and "2 endpoint(s)" in out and "8 sensitive-data alert(s)" in out
        assert_cleared(fields_left=5)

    def test_without_yes_it_asks_and_a_no_changes_nothing(self, monkeypatch, capsys):
        inventory()
        monkeypatch.setattr("builtins.input", lambda prompt: "no")
        with pytest.raises(CommandError, match="nothing was cleared"):
            call_command("clear_sensitive_data")
        assert "cannot be undone" in capsys.readouterr().out
        assert DataField.objects.exclude(data_classes=[]).count() == 4 and Alert.objects.count() == 16

    def test_answering_yes_clears(self, monkeypatch):
        inventory()
        monkeypatch.setattr("builtins.input", lambda prompt: "yes")
        call_command("clear_sensitive_data")
        assert_cleared(fields_left=5)


def _manage(args, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "clear_sensitive_data", *args], cwd=ROOT, env=process_env(),
                          input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture
def builtins_reseeded_after_flush(django_db_blocker):
    """The transactional test ends with a flush, which also empties the built-in data classes a data
    migration seeded (and --reuse-db would keep them gone). Requested before ``transactional_db``,
    this fixture's teardown runs after that flush and seeds them again."""
    yield
    seed = importlib.import_module("classification.migrations.0002_seed_builtin_classes").seed
    with django_db_blocker.unblock():
        seed(django_apps, None)


class TestCommandProcess:
    def test_the_real_command_refuses_without_confirmation_then_clears_on_yes(
        self, builtins_reseeded_after_flush, transactional_db
    ):
        inventory()
        refused = _manage([], stdin="")  # no terminal answer: nothing happens
        assert refused.returncode != 0 and "nothing was cleared" in refused.stderr
        assert Alert.objects.count() == 16
        done = _manage([], stdin="yes\n")
        assert done.returncode == 0, done.stderr
        assert "Type 'yes' to continue" in done.stdout and "8 sensitive-data alert(s)" in done.stdout
        assert_cleared(fields_left=5)
