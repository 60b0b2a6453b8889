"""One regex spelling for ``Endpoint.path_regex``: ingestion, update-paths and the data migration agree."""
import importlib
import re

import pytest
from django.apps import apps as django_apps

from inventory.models import Endpoint
from inventory.patterns.regex import literal_escape, pattern_regex
from tests.factories import HostFactory

from .ingest_support import raw_trace, send

pytestmark = pytest.mark.django_db

rewrite = importlib.import_module("inventory.migrations.0004_path_regex_one_spelling").path_regexes_rewrite


@pytest.fixture
def ingest(client, django_capture_on_commit_callbacks):
    def _ingest(*traces):
        response = send(client, django_capture_on_commit_callbacks, "/api/v1/log-request/batch", list(traces))
        assert response.status_code == 200, response.content
    return _ingest


class TestSpelling:
    @pytest.mark.parametrize("path, regex", [
        ("/", "^/$"),
        ("/users/{param1}", "^/users/[^/]+$"),
        ("/v1.0/api-docs/{param1}.json", "^/v1\\.0/api-docs/[^/]+\\.json$"),
        ("/a+b/(c)/x$y/~u/#h/&k/{param1}", "^/a\\+b/\\(c\\)/x\\$y/~u/#h/&k/[^/]+$"),
    ])
    def test_one_spelling(self, path, regex):
        assert pattern_regex(path) == regex

    def test_only_metacharacters_are_escaped_and_literals_match_themselves(self):
        text = "a-b_c.d~e!f@g*h(i)[j]{k}|l^m$n?o+p\\q r#s&t%u:v;w,x'y\"z/"
        assert re.fullmatch(literal_escape(text), text)
        assert literal_escape("-/~#&% ") == "-/~#&% "


class TestIngestionAndUpdatePathsAgree:
    @pytest.mark.parametrize("concrete, operator_path, pattern", [
        ("/users/42", "/users/{id}", "/users/{param1}"),
        ("/v1.0/api-docs/7/orders", "/v1.0/api-docs/{n}/orders", "/v1.0/api-docs/{param1}/orders"),
    ])
    def test_same_pattern_same_regex(self, ingest, client, concrete, operator_path, pattern):
        ingest(raw_trace(host="detected.example.com", path=concrete))
        detected = Endpoint.objects.get(host__name="detected.example.com")
        assert detected.path == pattern

        literal = Endpoint.objects.create(
            host=HostFactory(name="operator.example.com"), method="GET", path=concrete,
            path_regex=pattern_regex(concrete), num_segments=concrete.count("/"),
            num_literal_segments=concrete.count("/"),
        )
        response = client.post(f"/api/v1/endpoint/{literal.uuid}/update-paths", {"paths": [operator_path]},
                               format="json")
        assert response.status_code == 200, response.content
        written = Endpoint.objects.get(uuid=response.json()[0]["uuid"])

        # DECISIONS §4: the operator's parameter names are kept; only the regex treats parameters alike.
        assert detected.path == pattern and written.path == operator_path
        assert written.path_regex == detected.path_regex == pattern_regex(pattern)


class TestDataMigration:
    def test_both_old_spellings_are_rewritten_in_the_one_spelling(self):
        host = HostFactory(name="api.example.com")
        old = {  # path -> regex as stored before: ingestion (re.escape), update-paths (escaped slashes)
            "/users/{param1}": "^/users/[^/]+$",
            "/v1.0/api-docs/{param1}": "^/v1\\.0/api\\-docs/[^/]+$",
            "/shops/{param1}": "^\\/shops\\/[^/]+$",
            "/files/{param1}.json": "^\\/files\\/[^/]+\\.json$",
            "/": "^\\/$",
        }
        for path, regex in old.items():
            Endpoint.objects.create(host=host, method="GET", path=path, path_regex=regex,
                                    num_segments=path.count("/"), num_literal_segments=0)

        changed = rewrite(django_apps, None)

        stored = dict(Endpoint.objects.values_list("path", "path_regex"))
        assert stored == {
            "/users/{param1}": "^/users/[^/]+$",
            "/v1.0/api-docs/{param1}": "^/v1\\.0/api-docs/[^/]+$",
            "/shops/{param1}": "^/shops/[^/]+$",
            "/files/{param1}.json": "^/files/[^/]+\\.json$",
            "/": "^/$",
        }
        assert changed == 4  # /users/{param1} was already in the one spelling
        assert rewrite(django_apps, None) == 0  # a second run changes nothing
