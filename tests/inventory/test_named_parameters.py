"""Operator-named parameters (DECISIONS §4): kept by update-paths, its merge, ingestion, suggested-paths
and test generation, through the real routes and database."""
import json

import pytest

from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, EndpointAlias, ObservedPath
from inventory.patterns.operator_paths import names_apply, path_problem, pattern_name
from inventory.patterns.regex import pattern_regex
from testgen.runner import PATH_PARAMETER

from .ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

HOST = "shop.example.com"


def update(client, endpoint_id, paths):
    return client.post(f"/api/v1/endpoint/{endpoint_id}/update-paths", {"paths": paths}, format="json")


def item_trace(item: str, **kwargs):
    return raw_trace(host=HOST, path=f"/catalog/{item}", response_body={"sku": item, "price": 3, "title": "x"},
                     **kwargs)


class TestPureNaming:
    def test_names_are_kept_and_unnamed_parameters_numbered_by_place(self):
        assert pattern_name("/catalog/{itemId}") == "/catalog/{itemId}"
        assert pattern_name("/a/{}/b/{id}/{}") == "/a/{param1}/b/{id}/{param3}"
        assert pattern_name("/a/{}/b/{param1}") == "/a/{param2}/b/{param1}"  # the operator's name is not reused

    def test_a_name_used_twice_is_refused(self):
        assert path_problem("/a/{id}/b/{id}") == "parameter names must be distinct"
        assert path_problem("/a/{}/b/{}") is None

    def test_suggestions_take_the_names_of_the_endpoint(self):
        assert names_apply("/shops/{param1}/items/{param2}", "/shops/{shopId}/items/{param2}") == \
            "/shops/{shopId}/items/{param2}"
        assert names_apply("/shops/{param1}/items", "/shops/{shopId}/{section}") == "/shops/{shopId}/items"

    def test_an_operator_name_left_in_a_url_is_seen_by_the_runner(self):
        assert PATH_PARAMETER.search("https://h/catalog/{itemId}")
        assert not PATH_PARAMETER.search("{{baseUrl}}/catalog/42")


class TestUpdatePaths:
    def test_catalog_item_id_stays_as_written_and_takes_the_traffic(self, client, ingest):
        ingest(item_trace("2000000001"))
        [detected] = Endpoint.objects.all()
        assert detected.path == "/catalog/{param1}"

        response = update(client, detected.uuid, ["/catalog/{itemId}"])
        assert response.status_code == 200, response.content
        [answer] = response.json()
        assert answer["path"] == "/catalog/{itemId}"
        named = Endpoint.objects.get(uuid=answer["uuid"])
        assert named.path_regex == pattern_regex("/catalog/{param1}") and named.user_set_path
        assert client.get(f"/api/v1/endpoint/{named.uuid}").json()["path"] == "/catalog/{itemId}"
        # The merged endpoint's id resolves to the named one.
        assert client.get(f"/api/v1/endpoint/{detected.uuid}").json()["uuid"] == str(named.uuid)

        # New traffic, id-like or word-like, lands on the named endpoint; no endpoint is created.
        ingest(item_trace("2000000002"), item_trace("blue-mug"))
        assert list(Endpoint.objects.values_list("path", flat=True)) == ["/catalog/{itemId}"]
        assert ApiTrace.objects.filter(endpoint=named).count() == 3
        assert Alert.objects.filter(endpoint=named, type="New Endpoint Detected").count() == 1

    def test_literal_siblings_merge_into_the_named_pattern(self, client, ingest):
        ingest(*(item_trace(name) for name in ("mug", "cup")))
        ids = list(Endpoint.objects.values_list("uuid", flat=True))
        assert len(ids) == 2  # two words: not enough evidence to learn

        response = update(client, ids[0], ["/catalog/{itemId}"])
        assert response.status_code == 200, response.content
        [named] = Endpoint.objects.all()
        assert named.path == "/catalog/{itemId}"
        assert sorted(ObservedPath.objects.filter(endpoint=named).values_list("path", flat=True)) == [
            "/catalog/cup", "/catalog/mug"]
        assert set(EndpointAlias.objects.values_list("old_uuid", flat=True)) == set(ids)

    def test_a_name_given_twice_is_a_400_that_changes_nothing(self, client, ingest):
        ingest(raw_trace(host=HOST, path="/shops/7/items/8"))
        endpoint = Endpoint.objects.get()
        response = update(client, endpoint.uuid, ["/shops/{id}/items/{id}"])
        assert response.status_code == 400
        assert response.json() == "/shops/{id}/items/{id}: parameter names must be distinct"
        assert Endpoint.objects.get().path == "/shops/{param1}/items/{param2}"


class TestSuggestedPaths:
    def test_suggestions_keep_the_operator_names(self, client, ingest):
        ingest(raw_trace(host=HOST, path="/catalog/1/reviews"))
        first = Endpoint.objects.get()
        response = update(client, first.uuid, ["/catalog/{itemId}/{section}"])
        assert response.status_code == 200, response.content
        named = Endpoint.objects.get()
        ingest(*(raw_trace(host=HOST, path=f"/catalog/{n}/reviews") for n in range(2, 22)))

        suggestions = client.get(f"/api/v1/endpoint/{named.uuid}/suggested-paths").json()
        assert suggestions[0] == "/catalog/{itemId}/reviews"
        assert all("{param1}" not in s for s in suggestions)


class TestGeneratedTests:
    def test_generated_tests_fill_the_named_parameter_from_traffic(self, client, ingest):
        trace = item_trace("2000000001", headers={"Authorization": "Bearer abcdefghijklmnopqrstu"})
        ingest(trace)
        response = update(client, Endpoint.objects.get().uuid, ["/catalog/{itemId}"])
        assert response.status_code == 200, response.content

        response = client.get("/api/v1/gen-test-endpoint",
                              {"endpoint": "/catalog/{itemId}", "method": "GET", "host": HOST, "type": "SQL_INJECTION"})
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["success"] is True and body["test"]["endpoint"] == "/catalog/{itemId}"
        text = json.dumps(body["test"])
        assert "itemId" in text  # the input is named after the operator's parameter
        urls = [r.get("url", "") for r in body["test"]["requests"]]
        assert urls and all("/catalog/" in u and not PATH_PARAMETER.search(u) for u in urls), urls
