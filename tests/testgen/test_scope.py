"""Which endpoints a run never sends to (testgen/scope.py): state resets and bulk deletes."""
from __future__ import annotations

import pytest

from testgen.scope import destructive_reason


@pytest.mark.parametrize(("method", "path", "query", "bulk"), [
    ("DELETE", "/api/articles", (), True),                      # every article
    ("DELETE", "/api/articles/{param1}/comments", (), True),    # every comment of an article
    ("DELETE", "/api/notes", ("noteId",), False),               # one note, named in the query
    ("DELETE", "/api/articles/{param1}", (), False),            # one article
    ("DELETE", "/api/articles/{param1}/favorite", (), False),   # the caller's favourite of one article
    ("DELETE", "/api/profiles/{param1}/follow", (), False),     # the caller's follow of one profile
    ("DELETE", "/api/users/me", (), False),
    ("DELETE", "/api/users/{param1}/favorites", (), True),      # a collection (plural)
])
def test_a_delete_of_a_collection_is_a_bulk_delete_a_relation_to_one_object_is_not(method, path, query, bulk):
    assert (destructive_reason(path, method, query=query) == "a DELETE of a whole collection (bulk delete)") is bulk


@pytest.mark.parametrize("path", ["/createdb", "/api/reset-db", "/api/v1/seed", "/admin/flush", "/api/deleteAll"])
def test_a_reset_path_is_destructive_for_any_method(path):
    assert destructive_reason(path, "GET") and destructive_reason(path, "POST")


@pytest.mark.parametrize("path", ["/api/password/reset", "/auth/init", "/api/products"])
def test_credential_resets_and_ordinary_routes_are_not(path):
    assert destructive_reason(path, "POST") is None
