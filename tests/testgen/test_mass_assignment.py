"""MASS_ASSIGNMENT's generated tests: values the API uses, fresh users, own objects only, read-backs."""
from __future__ import annotations

import pytest

from detections.models import OpenApiSpec
from tests.testgen.factories import endpoint_from_traffic
from tests.testgen.test_profiles_and_templates import generate

pytestmark = pytest.mark.django_db
HOST = "members.test"


def _write(test: dict, name: str) -> dict:
    """The write injecting property ``name`` (one property per write)."""
    return next(r for r in test["requests"] if f"may not set: {name}=" in r["description"])


def _index(test: dict, request: dict) -> int:
    return test["requests"].index(request)


def test_a_privileged_role_seen_in_traffic_is_injected_instead_of_a_guess():
    me = endpoint_from_traffic(host=HOST, method="PATCH", path="/api/me", authenticated=True, body={"bio": "hi"},
                               response={"name": "ann", "role": "member"})
    endpoint_from_traffic(host=HOST, method="GET", path="/api/me", authenticated=True,
                          response={"name": "ann", "role": "member", "verified": False})
    endpoint_from_traffic(host=HOST, method="GET", path="/api/team", authenticated=True,
                          response={"members": [{"name": "bo", "role": "moderator"}]})
    test = generate(me, "MASS_ASSIGNMENT")
    role, verified = _write(test, "role"), _write(test, "verified")
    assert role["body"] == {"bio": "hi", "role": "moderator"} and verified["body"] == {"bio": "hi", "verified": True}
    assert 'role="moderator" (seen in traffic)' in role["description"]
    before, control = test["requests"][:2]
    assert control["body"] == {"bio": "hi"} and role["onlyIfAccepted"] == 1  # nothing added: the control
    after = test["requests"][_index(test, role) + 1]
    assert before["url"] == after["url"] == "{{baseUrl}}/api/me" and after["onlyIfStatus"]["request"] == _index(test, role)
    checks = {(a["field"], a["request"]) for a in test["assertions"]}
    assert {("role", _index(test, role) + 1), ("role", _index(test, role)), ("verified", _index(test, verified) + 1)} <= checks


def test_with_one_role_in_traffic_an_unseen_enum_value_of_the_spec_is_used():
    OpenApiSpec.objects.create(name="members", text="{}", extension="json", openapi_version="3.0.0", hosts=[HOST],
                               spec={"components": {"schemas": {"Member": {"properties": {
                                   "role": {"type": "string", "enum": ["viewer", "curator"]}}}}}})
    me = endpoint_from_traffic(host=HOST, method="PATCH", path="/api/me", authenticated=True, body={"bio": "hi"})
    endpoint_from_traffic(host=HOST, method="GET", path="/api/me", authenticated=True,
                          response={"name": "ann", "role": "viewer"})
    write = _write(generate(me, "MASS_ASSIGNMENT"), "role")
    assert write["body"]["role"] == "curator" and '(from the spec)' in write["description"]


def test_a_registration_uses_a_fresh_user_logs_in_as_it_and_reads_it_back_by_name():
    register = endpoint_from_traffic(host=HOST, method="POST", path="/api/v2/users/register",
                                     body={"username": "dora", "password": "[REDACTED]", "email": "d@x.test"},
                                     response={"message": "registered"})
    endpoint_from_traffic(host=HOST, method="POST", path="/api/v2/users/login",
                          body={"username": "dora", "password": "[REDACTED]"}, response={"jwt": "[REDACTED]"})
    endpoint_from_traffic(host=HOST, method="GET", path="/api/v2/users/{param1}", authenticated=True,
                          paths=["/api/v2/users/dora", "/api/v2/users/eli"],
                          response={"username": "dora", "is_staff": False})
    test = generate(register, "MASS_ASSIGNMENT")
    control = test["requests"][0]
    write = _write(test, "is_staff")
    index = _index(test, write)
    login, read, by_location = test["requests"][index + 1:index + 4]
    assert by_location["url"] == f"{{{{responses[{index}].headers.Location}}}}"  # skipped when the answer has none
    # every write registers a user of its own: the control, then one per property
    assert control["body"]["username"] == "{{uniqueName}}c"
    suffix = write["body"]["username"].removeprefix("{{uniqueName}}")
    assert suffix and (write["body"]["email"]) == f"{{{{uniqueName}}}}{suffix}@example.com"
    assert write["body"]["password"] != "dora" and write["body"]["is_staff"] is True and "isAdmin" not in write["body"]
    assert login["url"] == "{{baseUrl}}/api/v2/users/login"
    assert login["body"] == {"username": write["body"]["username"], "password": write["body"]["password"]}
    assert read["url"] == "{{baseUrl}}/api/v2/users/" + write["body"]["username"]
    assert read["headers"]["Authorization"] == f"Bearer {{{{responses[{index + 1}].body.jwt}}}}"


@pytest.mark.parametrize(("path", "body", "why"), [
    ("/api/orders/{param1}", {"note": "x"}, "may not belong to a test identity"),
    ("/api/me/secret-answer", {"password": "[REDACTED]"}, "credential change is not sent"),
])
def test_a_put_to_an_object_that_may_be_someone_elses_is_not_sent(path, body, why):
    endpoint = endpoint_from_traffic(host=HOST, method="PUT", path=path, authenticated=True, body=body,
                                     paths=[path.replace("{param1}", "17")])
    test = generate(endpoint, "MASS_ASSIGNMENT")
    assert len(test["requests"]) == 1 and why in test["requests"][0]["skip"]
    assert test["assertions"][0]["inconclusive"] is True


def test_a_credential_flow_gets_no_mass_assignment():
    """A password change or a login assigns nothing a test could read back (its user is one that does not exist)."""
    for path in ("/api/me/password", "/api/v1/login"):
        endpoint = endpoint_from_traffic(host=HOST, method="PUT", path=path, authenticated=True,
                                         body={"password": "[REDACTED]", "role": "x"})
        from testgen.services import test_generate
        assert test_generate(endpoint=endpoint, template_name="MASS_ASSIGNMENT")["success"] is False
