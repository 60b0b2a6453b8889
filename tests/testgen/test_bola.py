"""What BOLA/BFLA tests are made of (issue #15 item 2): two real users, object ids per identity and
resource type, writes only to the other test identity's objects, effects read back by the owner.
The OWASP twins (tests/testgen/owasp) run them end to end against real flaws and their fixes."""
from __future__ import annotations

import json

import pytest

from testgen.services import test_generate
from tests.testgen.factories import ApiTraceFactory, endpoint_from_traffic

pytestmark = pytest.mark.django_db
HOST = "books.test"
BOB = {"name": "bob", "userId": "bob", "objectIds": {"books": "7"},
       "login": {"url": "/login", "body": {"username": "bob", "password": "pw-bob"}, "tokenPath": "token"}}


@pytest.fixture
def identities(client):
    """alice is the test identity (testUserId), bob the second one."""
    def put(*others: dict, test_user_id: str = "alice") -> None:
        response = client.put("/api/v1/testing/global-env", {"baseUrl": "http://books.test", "authToken": "Bearer a",
                                                               "testUserId": test_user_id, "identities": list(others)},
                              format="json")
        assert response.status_code == 200, response.content
    return put


def bola(endpoint) -> dict:
    result = test_generate(endpoint=endpoint, template_name="BOLA")
    assert result["success"], result
    return result["test"]


def user_read():
    return endpoint_from_traffic(host=HOST, method="GET", path="/users/v1/{param1}", authenticated=True,
                                 paths=["/users/v1/alice", "/users/v1/bob", "/users/v1/carol"],
                                 response={"id": 1, "username": "alice", "email": "a@books.test"})


def urls(test) -> list[str]:
    return [r.get("url", "") for r in test["requests"]]


def test_a_user_path_with_a_version_segment_uses_the_test_users_own_id(identities):
    identities(BOB)
    test = bola(user_read())
    own, bob_read, bob, anonymous, carol, carol_anonymous = test["requests"]
    assert own["url"] == "{{baseUrl}}/users/v1/{{testUserId}}" and "identity" not in own
    assert (bob_read["url"], bob_read["identity"]) == ("{{baseUrl}}/users/v1/{{identities.bob.userId}}", "bob")
    assert bob["url"] == bob_read["url"] and "identity" not in bob  # bob's own user, with alice's token
    # and without credentials: an object served to anyone is public, not bob's private object
    assert anonymous["url"] == bob["url"] and anonymous["omitHeaders"] == ["Authorization"]
    assert carol["url"] == "{{baseUrl}}/users/v1/carol" and carol["skipIfEquals"] == ["{{testUserId}}", "carol"]
    assert carol_anonymous["url"] == carol["url"] and carol_anonymous["omitHeaders"] == ["Authorization"]
    # refused in any form (verdicts.py); bob's answer is compared with bob's own read of it
    checks = [a for a in test["assertions"] if not a.get("precondition")]
    assert [a["verdict"] for a in checks] == ["refused"] * 2
    assert checks[0]["otherwise"]["compare"] == "similar"
    assert checks[0]["otherwise"]["otherwise"]["request"] == 3  # public: alike without credentials
    assert checks[1]["otherwise"]["request"] == 5  # carol's too


def test_a_literal_user_name_in_a_path_is_the_object_and_writes_go_to_the_second_identity_only(identities):
    identities(BOB)
    user_read()
    endpoint = endpoint_from_traffic(host=HOST, method="PUT", path="/users/v1/carol/password", authenticated=True,
                                     paths=["/users/v1/carol/password"], body={"password": "[REDACTED]"})
    test = bola(endpoint)
    assert not any("carol" in json.dumps(r) for r in test["requests"])  # never the user seen in traffic
    read, before, write, login, restore, after = test["requests"]
    assert read["identity"] == before["identity"] == after["identity"] == "bob"  # bob's own view, read by bob
    assert before["url"] == after["url"] == "{{baseUrl}}/users/v1/{{identities.bob.userId}}"
    assert write["url"] == "{{baseUrl}}/users/v1/{{identities.bob.userId}}/password" and "identity" not in write
    new_password = write["body"]["password"]
    assert (login["loginAs"], login["loginPassword"], login["adoptCredential"]) == ("bob", new_password, True)
    # put back by bob himself, only when his login with the new password gave him a credential
    assert restore["body"] == {"password": "{{identities.bob.password}}"} and restore["identity"] == "bob"
    assert restore["onlyIfLoggedIn"] == 3
    check = next(a for a in test["assertions"] if a["request"] == 3)
    assert (check["verdict"], check["otherwise"]["verdict"]) == ("notLoggedIn", "refused")


def test_a_numeric_user_position_takes_the_id_the_owner_reads(identities):
    identities(BOB)
    user_read()
    endpoint = endpoint_from_traffic(host=HOST, method="PUT", path="/users/v1/{param1}/email", authenticated=True,
                                     paths=["/users/v1/1/email", "/users/v1/2/email"], body={"email": "a@x.test"})
    test = bola(endpoint)
    read, before, write, after = test["requests"]
    assert read["url"] == "{{baseUrl}}/users/v1/{{identities.bob.userId}}"
    assert before["url"] == after["url"] == "{{baseUrl}}/users/v1/{{responses[0].body.id}}"
    assert write["url"] == "{{baseUrl}}/users/v1/{{responses[0].body.id}}/email"
    assert write["body"]["email"].startswith("apiscope-bola-") and write["body"]["email"].endswith("@example.test")
    effect = next(a for a in test["assertions"] if a["request"] == 3 and a["type"] == "body")
    assert (effect["condition"], effect["compare"], effect["value"]) == ("equals", "similar", "{{responses[1].body}}")
    assert effect["otherwise"]["verdict"] == "refused"


def test_object_ids_are_per_identity_and_resource_type(identities):
    identities(BOB)
    books = endpoint_from_traffic(host=HOST, method="GET", path="/books/v1/{param1}", authenticated=True,
                                  paths=["/books/v1/1"])
    orders = endpoint_from_traffic(host=HOST, method="GET", path="/orders/{param1}", authenticated=True,
                                   paths=["/orders/5"])
    assert "{{identities.bob.objectIds.books}}" in json.dumps(bola(books))
    # bob's book id is no order id; whose order 5 is, traffic did not show: the test names what to configure.
    assert urls(bola(orders)) == ["{{baseUrl}}/orders/{{identities.bob.objectIds.order}}"]


def test_traffic_shows_which_identity_owns_an_object(identities):
    identities({**BOB, "objectIds": {}})
    endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/books/v1/{param1}", authenticated=True,
                                     paths=["/books/v1/1", "/books/v1/2", "/books/v1/3"],
                                     response={"id": 1, "owner": "alice"})
    for concrete, owner in (("/books/v1/2", "bob"), ("/books/v1/3", "carol")):
        ApiTraceFactory(endpoint=endpoint, path=concrete, response_body=json.dumps({"id": 9, "owner": owner}))
    test = bola(endpoint)
    by_url = {r["url"]: r for r in test["requests"] if "identity" not in r and "omitHeaders" not in r}
    assert set(by_url) == {"{{baseUrl}}/books/v1/2", "{{baseUrl}}/books/v1/3"}  # book 1 is alice's own
    carol = by_url["{{baseUrl}}/books/v1/3"]
    assert carol["skipIfEquals"] == ["{{testUserId}}", "carol"]
    index = test["requests"].index(carol)
    check = next(a for a in test["assertions"] if a["request"] == index)
    public = check["otherwise"].pop("otherwise")
    assert check["otherwise"] == {"type": "body", "field": "owner", "condition": "notEquals", "value": "carol"}
    # or served alike without credentials (a public object): the same request, anonymous
    anonymous = test["requests"][public["request"]]
    assert anonymous["url"] == carol["url"] and anonymous["omitHeaders"] == ["Authorization"]
    assert public["compare"] == "similar" and public["value"] == f"{{{{responses[{index}].body}}}}"


def test_without_a_second_identity_a_write_says_what_is_missing(identities):
    identities()
    endpoint = endpoint_from_traffic(host=HOST, method="DELETE", path="/users/{param1}", authenticated=True,
                                     paths=["/users/4", "/users/5"])
    test = bola(endpoint)
    assert urls(test) == ["{{baseUrl}}/users/{{identities.other.userId}}"]  # never user 4 or 5 seen in traffic
    assert test["requests"][0]["optional"] is True  # not sent: the test is INCONCLUSIVE, naming what to set
    assert all(a["inconclusive"] is True for a in test["assertions"])


def test_an_object_named_in_the_body_is_the_second_identitys(identities):
    identities(BOB)
    user_read()
    endpoint = endpoint_from_traffic(host=HOST, method="PUT", path="/account/v1/profile", authenticated=True,
                                     body={"username": "carol", "bio": "hello"})
    read, before, write, after = bola(endpoint)["requests"]
    assert write["body"]["username"] == "{{identities.bob.userId}}"
    assert write["body"]["bio"].startswith("apiscope-bola-")
    assert read["url"] == "{{baseUrl}}/users/v1/{{identities.bob.userId}}"
    # bob's view of his own user, read by bob before and after the write
    assert before["url"] == after["url"] == "{{baseUrl}}/users/v1/{{identities.bob.userId}}"
    assert before["identity"] == after["identity"] == "bob"


@pytest.mark.parametrize(("method", "path", "body"), [
    ("PUT", "/users/{param1}/role", {"role": "editor"}),
    ("GET", "/admin/stats", None),
    ("POST", "/api/v2/staff/announcements", {"text": "hi"}),
])
def test_functions_of_another_role_must_be_refused(identities, method, path, body):
    identities(BOB)
    endpoint = endpoint_from_traffic(host=HOST, method=method, path=path, authenticated=True,
                                     paths=[path.replace("{param1}", "carol")], body=body)
    test = bola(endpoint)
    attack = next(r for r in test["requests"] if "identity" not in r and r["method"] == method)
    assert "carol" not in attack["url"]
    assert attack.get("body") == body  # the function as observed (the role value traffic used)
    index = test["requests"].index(attack)
    assert any(a.get("verdict") == "refused" and a["request"] == index
               or (a.get("otherwise") or {}).get("request") == index for a in test["assertions"])
    assert "BFLA" in test["description"]



@pytest.mark.parametrize("template", ["SQL_INJECTION", "XSS", "AUTH_BYPASS", "RATE_LIMIT"])
def test_other_templates_write_to_the_test_users_own_object_not_to_a_user_seen_in_traffic(identities, template):
    identities(BOB)
    user_read()
    endpoint = endpoint_from_traffic(host=HOST, method="PUT", path="/users/v1/carol/password", authenticated=True,
                                     paths=["/users/v1/carol/password"], body={"password": "[REDACTED]"})
    result = test_generate(endpoint=endpoint, template_name=template)
    if template in ("SQL_INJECTION", "XSS"):
        # the password is the only input, and a credential change of the test identity writes its own password
        # back unchanged: nothing is left to fuzz
        assert result["success"] is False
        return
    test = result["test"]
    writes = {r["url"] for r in test["requests"] if r["method"] != "GET"}  # reads are read-backs of its own user
    assert writes == {"{{baseUrl}}/users/v1/{{testUserId}}/password"}
    assert {r["url"] for r in test["requests"] if r["method"] == "GET"} <= {"{{baseUrl}}/users/v1/{{testUserId}}"}


def test_a_payload_built_on_the_own_user_keeps_its_placeholder_in_the_path(identities):
    identities(BOB)
    endpoint = endpoint_from_traffic(host=HOST, method="PATCH", path="/users/{param1}", authenticated=True,
                                     paths=["/users/carol"], body={"bio": "x"})
    test = test_generate(endpoint=endpoint, template_name="SQL_INJECTION")["test"]
    path_requests = [r for r in test["requests"] if r["description"].startswith("path parameter")]
    assert path_requests[0]["url"] == "{{baseUrl}}/users/{{testUserId}}"
    assert path_requests[1]["url"] == "{{baseUrl}}/users/{{testUserId}}'"  # ' is left as it is in paths


def test_no_template_tries_to_log_in_as_a_user_seen_in_traffic(identities):
    endpoint = endpoint_from_traffic(host=HOST, method="POST", path="/users/v1/login",
                                     body={"username": "carol", "email": "carol@books.test", "password": "[REDACTED]"})
    register = endpoint_from_traffic(host=HOST, method="POST", path="/users/v1/register",
                                     body={"username": "dave", "password": "[REDACTED]"})
    assert test_generate(endpoint=endpoint, template_name="MASS_ASSIGNMENT")["success"] is False  # a login
    for template in ("SQL_INJECTION", "XSS", "RATE_LIMIT", "USER_ENUMERATION"):
        sent = json.dumps(test_generate(endpoint=endpoint, template_name=template)["test"]["requests"])
        # a user that does not exist, or (MASS_ASSIGNMENT registers one) a fresh user of the test's own
        assert "carol" not in sent and ("apiscope-no-such-user" in sent or "{{uniqueName}}" in sent)
    # a registration registers a fresh user of the test's own, never dave (nor a name a burst logs in with)
    sent = json.dumps(test_generate(endpoint=register, template_name="SQL_INJECTION"))
    assert "dave" not in sent and "apiscope-no-such-user" not in sent and "{{uniqueName}}" in sent


def test_a_numeric_user_read_skips_the_test_users_own_id_read_from_its_user(identities):
    identities()  # testUserId "alice"; the path takes numeric ids
    user_read()
    endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/users/v1/{param1}/orders", authenticated=True,
                                     paths=["/users/v1/1/orders", "/users/v1/2/orders"])
    test = bola(endpoint)
    lookup, own, *others = test["requests"]
    assert lookup["url"] == "{{baseUrl}}/users/v1/{{testUserId}}"
    assert own["url"] == "{{baseUrl}}/users/v1/{{responses[0].body.id}}/orders"
    assert [r["skipIfEquals"] for r in others] == [["{{responses[0].body.id}}", "1"]] * 2 + [
        ["{{responses[0].body.id}}", "2"]] * 2  # each with its anonymous control


def test_a_credential_change_of_the_test_identity_writes_its_own_password_back(identities):
    """AUTH_BYPASS's writes (and any template's) never give the test identity another password: the body
    carries ``{{ownPassword}}`` (its login recipe's), and without a recipe the request is not sent."""
    identities(BOB)
    user_read()
    endpoint = endpoint_from_traffic(host=HOST, method="PUT", path="/users/v1/carol/password", authenticated=True,
                                     paths=["/users/v1/carol/password"], body={"password": "[REDACTED]"})
    test = test_generate(endpoint=endpoint, template_name="AUTH_BYPASS")["test"]
    writes = [r for r in test["requests"] if r["method"] == "PUT"]
    assert writes and all(r["body"] == {"password": "{{ownPassword}}"} and r["optional"] for r in writes)
    assert any(a.get("inconclusive") and "credential change was sent" in a["description"] for a in test["assertions"])


def test_a_credential_change_in_an_envelope_writes_the_own_password_back_and_a_registration_is_fresh(identities):
    """``PUT /api/user {"user": {"email", "password"}}`` changes the test identity's own password: it is
    written back as ``{{ownPassword}}`` inside the envelope; ``POST /api/users`` with the same envelope is a
    registration: a fresh user of the test, never the test identity nor the user traffic showed."""
    identities(BOB)
    update = endpoint_from_traffic(host=HOST, method="PUT", path="/api/user", authenticated=True,
                                   body={"user": {"email": "[REDACTED]", "password": "[REDACTED]", "bio": "hi"}})
    writes = [r for r in test_generate(endpoint=update, template_name="XSS")["test"]["requests"] if r["method"] == "PUT"]
    assert writes and all(r["body"]["user"]["password"] == "{{ownPassword}}" for r in writes)
    signup = endpoint_from_traffic(host=HOST, method="POST", path="/api/users", authenticated=False,
                                   body={"user": {"username": "carol", "email": "[REDACTED]", "password": "[REDACTED]"}})
    posts = test_generate(endpoint=signup, template_name="XSS")["test"]["requests"]
    names = {r["body"]["user"]["username"] for r in posts if "payload" not in r}
    assert names and all(n.startswith("{{uniqueName}}") for n in names), names
    assert all(r["body"]["user"]["password"] != "{{ownPassword}}" for r in posts)
