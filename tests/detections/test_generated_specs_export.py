"""``manage.py export_openapi`` and the admin's download link of OpenAPI specs."""
from __future__ import annotations

import io
import json

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from detections.models import OpenApiSpec
from detections.openapi.generate.service import generated_spec_refresh
from detections.specs import openapi_validate
from inventory.models import Host
from tests.detections.generated_traffic import HOST, SECRETS, varied_traces
from tests.inventory.ingest_support import ingest  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def traffic(ingest):
    ingest(*varied_traces())


def test_export_writes_the_validated_json_document(traffic, tmp_path):
    target = tmp_path / "shop.json"
    call_command("export_openapi", HOST, "-o", str(target), stderr=io.StringIO())
    document = json.loads(target.read_text())
    openapi_validate(document)
    assert "/api/users/{param1}" in document["paths"]
    assert not any(value in target.read_text() for value in SECRETS)


def test_export_as_yaml_to_standard_output(traffic, capsys):
    call_command("export_openapi", f"https://{HOST}:443", "--yaml")
    document = yaml.safe_load(capsys.readouterr().out)
    assert document["openapi"] == "3.1.0" and document["servers"] == [{"url": "https://shop.example.com"}]


def test_export_of_an_unknown_host_fails(db):
    with pytest.raises(CommandError, match="Unknown host 'nowhere.example.com'"):
        call_command("export_openapi", "nowhere.example.com")


@pytest.fixture
def browser() -> Client:
    browser = Client()
    browser.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return browser


def test_the_admin_lists_generated_specs_with_a_download_link(traffic, browser):
    spec = generated_spec_refresh(host_id=Host.objects.get(name=HOST).id, force=True)
    page = browser.get("/admin/detections/openapispec/")
    url = f"/admin/detections/openapispec/{spec.pk}/download/"
    assert page.status_code == 200 and url.encode() in page.content
    download = browser.get(url)
    assert download.status_code == 200
    assert download["Content-Disposition"] == f'attachment; filename="{HOST}-generated.json"'
    assert json.loads(download.content) == spec.spec
    detail = browser.get(f"/admin/detections/openapispec/{spec.pk}/change/")
    assert detail.status_code == 200 and url.encode() in detail.content
    assert browser.post(f"/admin/detections/openapispec/{spec.pk}/delete/", {"post": "yes"}).status_code == 403
    assert OpenApiSpec.objects.filter(pk=spec.pk).exists()


def test_the_download_needs_an_admin_login(traffic):
    spec = generated_spec_refresh(host_id=Host.objects.get(name=HOST).id, force=True)
    response = Client().get(f"/admin/detections/openapispec/{spec.pk}/download/")
    assert response.status_code == 302 and "/login/" in response["Location"]
