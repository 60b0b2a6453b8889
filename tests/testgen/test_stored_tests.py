"""Generated tests are stored per endpoint: a repeat call of GET /gen-test-endpoint(s) is the stored JSON,
and a change of what a test is generated from (the endpoint, its data fields, its traffic, the testing
environment, the templates and their settings) makes the next call generate it again."""
from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from django.test.utils import CaptureQueriesContext

from classification.models import DataField
from core.enums import DataSection
from inventory.models import Endpoint
from testgen.models import StoredTest
from testgen.services import test_generate, tests_generate_for_host
from testgen.services.stored import render, sources_fingerprint
from tests.testgen.conftest import SHOP
from tests.testgen.factories import ApiTraceFactory

pytestmark = pytest.mark.django_db

SINGLE = "/api/v1/gen-test-endpoint"
MANY = "/api/v1/gen-test-endpoints"


def many(client, **query) -> bytes:
    response = client.get(MANY, {"host": SHOP, **query})
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    return response.content


def single(client, **query) -> bytes:
    response = client.get(SINGLE, query)
    assert response.status_code == 200, response.content
    return response.content


def item(body: bytes, path: str, method: str) -> dict:
    return next(i for i in json.loads(body) if (i["endpoint"], i["method"]) == (path, method))


class TestRepeatCalls:
    def test_answer_is_the_rendering_of_a_fresh_generation_cold_and_warm(self, client, shop):
        fresh = render(tests_generate_for_host(host=SHOP))
        assert many(client) == fresh
        assert many(client) == fresh
        assert many(client, type="XSS") == render(tests_generate_for_host(host=SHOP, template_name="XSS"))

    def test_one_row_per_endpoint_and_choice_of_template(self, client, shop):
        many(client)
        many(client)
        many(client, type="XSS", version=1)
        assert StoredTest.objects.filter(options="").count() == len(shop)
        assert StoredTest.objects.filter(options="XSS:1").count() == len(shop)

    def test_repeat_call_is_the_stored_bytes(self, client, shop):
        many(client)
        # The stored body of one endpoint, rewritten in place (stamp kept): the next answer carries it,
        # so the answer is assembled from the stored rows, not generated again.
        row = StoredTest.objects.get(endpoint=shop["search"], options="")
        StoredTest.objects.filter(pk=row.pk).update(body=b'{"success":true,"stored":1}')
        assert item(many(client), "/api/search", "GET") == {"success": True, "stored": 1,
                                                             "endpoint": "/api/search", "method": "GET"}

    def test_repeat_call_reads_no_traffic(self, client, shop):
        many(client)
        with CaptureQueriesContext(connection) as queries:
            many(client)
        assert not any("ROW_NUMBER" in q["sql"] for q in queries.captured_queries)  # no profile was loaded
        assert not any(q["sql"].lstrip().startswith("INSERT") for q in queries.captured_queries)

    def test_single_endpoint_answer_is_stored_and_reused(self, client, shop):
        fresh = render(test_generate(endpoint=shop["user_update"]))
        assert single(client, endpoint=str(shop["user_update"].uuid)) == fresh
        StoredTest.objects.filter(endpoint=shop["user_update"], options="").update(body=b'{"success":false,"msg":"x"}')
        assert single(client, endpoint="/api/users/{param1}", method="PATCH") == b'{"success":false,"msg":"x"}'

    def test_single_and_per_host_share_the_stored_result(self, client, shop):
        single(client, endpoint="/api/search")
        StoredTest.objects.filter(endpoint=shop["search"]).update(body=b'{"success":false,"msg":"kept"}')
        assert item(many(client), "/api/search", "GET") == {"success": False, "endpoint": "/api/search",
                                                            "method": "GET", "msg": "kept"}


class TestInvalidation:
    def test_a_data_field_change_changes_the_answer(self, client, shop):
        before = many(client)
        field = DataField.objects.get(endpoint=shop["search"], data_section=DataSection.REQUEST_QUERY)
        response = client.put(f"/api/v1/data-field/{field.uuid}/update-data-path", {"dataPath": "term"},
                              format="json")
        assert response.status_code == 200, response.content
        after = many(client)
        assert after != before
        assert after == render(tests_generate_for_host(host=SHOP))
        assert "term" in item(after, "/api/search", "GET")["test"]["requests"][0]["queryParams"]

    def test_an_endpoint_change_changes_the_answer(self, client, shop):
        assert item(many(client), "/api/users/{param1}", "GET")["templateName"] == "BOLA"
        assert single(client, endpoint="/api/users/{param1}", method="GET").startswith(
            b'{"success":true,"templateName":"BOLA"')
        response = client.put(f"/api/v1/endpoint/{shop['user_read'].uuid}/authenticated", {"authenticated": False},
                              format="json")
        assert response.status_code == 200, response.content
        assert item(many(client), "/api/users/{param1}", "GET")["templateName"] == "SQL_INJECTION"
        assert single(client, endpoint="/api/users/{param1}", method="GET").startswith(
            b'{"success":true,"templateName":"SQL_INJECTION"')

    def test_new_traffic_changes_the_answer(self, client, shop):
        before = item(many(client), "/api/search", "GET")
        ApiTraceFactory(endpoint=shop["search"], request_parameters=[{"name": "q", "value": "bob"}])
        after = item(many(client), "/api/search", "GET")
        assert after != before
        assert after["test"]["requests"][0]["queryParams"]["q"] == "bob"

    def test_a_new_get_pattern_changes_the_read_back_of_writes(self, client, shop, db):
        from tests.testgen.factories import endpoint_from_traffic

        many(client)
        stamps = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        endpoint_from_traffic(host=SHOP, method="GET", path="/api/health")
        assert many(client) == render(tests_generate_for_host(host=SHOP))
        changed = {e for e, s in StoredTest.objects.values_list("endpoint_id", "stamp") if stamps.get(e) != s}
        # Every result: the host's endpoints are read across by every template (read-back paths of the
        # writes, values seen elsewhere, user names), and the new endpoint has a result of its own.
        assert changed == set(StoredTest.objects.values_list("endpoint_id", flat=True))
        assert StoredTest.objects.filter(endpoint__path="/api/health").exists()

    def test_new_traffic_on_another_endpoint_of_the_host_generates_every_result_again(self, client, shop):
        """MASS_ASSIGNMENT reads the values seen on the host's other endpoints, BOLA the user names its
        user read was called with: new traffic anywhere on the host (which moves that endpoint's
        lastActive, as ingestion does) makes every stored result of the host stale."""
        many(client)
        stamps = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        Endpoint.objects.filter(uuid=shop["search"].uuid).update(last_active=timezone.now() + timedelta(seconds=5))
        assert many(client) == render(tests_generate_for_host(host=SHOP))
        renewed = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        assert all(renewed[e] != stamp for e, stamp in stamps.items())

    def test_a_global_env_change_generates_again(self, client, shop, set_env):
        many(client)
        stamps = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        set_env("http://127.0.0.1:9", otherObjectId="8")
        assert many(client) == render(tests_generate_for_host(host=SHOP))
        renewed = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        assert renewed.keys() == stamps.keys() and all(renewed[e] != stamps[e] for e in stamps)
        assert client.delete("/api/v1/testing/global-env").status_code == 200
        many(client)
        assert all(s not in renewed.values() for s in StoredTest.objects.values_list("stamp", flat=True))

    def test_a_generation_setting_change_changes_the_answer(self, client, shop, settings):
        before = item(many(client, type="SQL_INJECTION"), "/api/search", "GET")
        settings.TESTGEN_SQLI_DELAY_SECONDS = 7
        after = item(many(client, type="SQL_INJECTION"), "/api/search", "GET")
        assert after != before
        assert after == item(render(tests_generate_for_host(host=SHOP, template_name="SQL_INJECTION")),
                             "/api/search", "GET")

    def test_a_deleted_endpoint_takes_its_stored_tests_along(self, client, shop):
        many(client)
        assert client.delete(f"/api/v1/endpoint/{shop['search'].uuid}").status_code == 200
        assert not StoredTest.objects.filter(endpoint_id=shop["search"].uuid).exists()
        assert ("/api/search", "GET") not in {(i["endpoint"], i["method"]) for i in
                                              json.loads(many(client))}


def test_template_code_is_part_of_the_fingerprint(tmp_path):
    """Editing a template's file gives another fingerprint (so a deploy regenerates every stored test)."""
    from django.conf import settings

    shutil.copytree(settings.BASE_DIR / "testgen", tmp_path / "testgen",
                    ignore=shutil.ignore_patterns("__pycache__"))
    sources = ("testgen",)
    before = sources_fingerprint(tmp_path, sources)
    assert sources_fingerprint(tmp_path, sources) == before
    xss = tmp_path / "testgen" / "templates" / "xss.py"
    xss.write_text(xss.read_text() + "\n# edited\n")
    assert sources_fingerprint(tmp_path, sources) != before
    (tmp_path / "testgen" / "migrations" / "0099_x.py").write_text("# not generation code\n")
    xss.write_text(xss.read_text().removesuffix("\n# edited\n"))
    assert sources_fingerprint(tmp_path, sources) == before


class TestRecheckWindow:
    """A check that found every stored result valid is trusted for TESTGEN_STORED_RECHECK_SECONDS while the
    inventory version and the testing environment stay the same."""

    def test_traffic_alone_shows_after_the_window_or_an_inventory_change(self, client, shop, settings):
        from inventory.counts import inventory_changed

        settings.TESTGEN_STORED_RECHECK_SECONDS = 3600
        many(client)
        trusted = many(client)  # every stored result found valid: this check is trusted
        ApiTraceFactory(endpoint=shop["search"], request_parameters=[{"name": "q", "value": "bob"}])
        assert many(client) == trusted
        inventory_changed()
        assert item(many(client), "/api/search", "GET")["test"]["requests"][0]["queryParams"]["q"] == "bob"

    def test_a_trusted_call_reads_the_stored_bodies_and_nothing_else_of_generation(self, client, shop, settings):
        settings.TESTGEN_STORED_RECHECK_SECONDS = 3600
        many(client)
        trusted = many(client)
        with CaptureQueriesContext(connection) as queries:
            assert many(client) == trusted
        generation = [q["sql"] for q in queries.captured_queries if "testgen_" in q["sql"]]
        assert len(generation) == 1 and "testgen_storedtest" in generation[0]  # the environment: its digest there

    def test_without_a_window_every_call_checks(self, client, shop, settings):
        settings.TESTGEN_STORED_RECHECK_SECONDS = 0
        many(client)
        many(client)
        ApiTraceFactory(endpoint=shop["search"], request_parameters=[{"name": "q", "value": "bob"}])
        assert item(many(client), "/api/search", "GET")["test"]["requests"][0]["queryParams"]["q"] == "bob"

    def test_an_endpoint_change_through_the_api_is_seen_within_the_window(self, client, shop, settings):
        settings.TESTGEN_STORED_RECHECK_SECONDS = 3600
        many(client)
        many(client)
        response = client.put(f"/api/v1/endpoint/{shop['user_read'].uuid}/authenticated", {"authenticated": False},
                              format="json")
        assert response.status_code == 200, response.content
        assert item(many(client), "/api/users/{param1}", "GET")["templateName"] == "SQL_INJECTION"

    def test_a_global_env_change_is_seen_within_the_window(self, client, shop, settings, set_env):
        settings.TESTGEN_STORED_RECHECK_SECONDS = 3600
        many(client)
        many(client)
        stamps = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        set_env("http://127.0.0.1:9")
        many(client)
        renewed = dict(StoredTest.objects.values_list("endpoint_id", "stamp"))
        assert all(renewed[e] != stamps[e] for e in stamps)


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="TOAST compression is PostgreSQL's")
def test_stored_bodies_are_compressed_with_lz4_where_the_server_has_it():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
        if not cursor.fetchone()[0]:
            pytest.skip("this PostgreSQL is built without lz4")
        cursor.execute("SELECT attcompression FROM pg_attribute WHERE attrelid = 'testgen_storedtest'::regclass"
                       " AND attname = 'body'")
        assert cursor.fetchone()[0] == "l"
