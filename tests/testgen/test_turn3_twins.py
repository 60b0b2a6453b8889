"""Issue #26's patterns, each on a vulnerable and a fixed twin (tests/testgen/market_app.py): detected on
one, clean on the other, through the real command, runner and runs table. The inventory is what
ingestion stores for such traffic (credentials redacted, cookie names kept, classified fields)."""
from __future__ import annotations

import json

import pytest

from classification.models import DataField
from core.testmarker import HEADER, MarkerVerdict, marker_check
from testgen.models import TestRun
from testgen.services import test_generate
from tests.testgen.conftest import run_command
from tests.testgen.factories import ApiTraceFactory, endpoint_from_traffic
from tests.testgen.market_app import MarketApp
from tests.testgen.target_app import RunningTarget
from tests.testgen.twin_apps import JwtApi

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_templates")]
HOST = "market.test"
BOB = {"name": "bob", "userId": "bob",
       "login": {"url": "/api/login", "body": {"username": "bob", "password": "Bob-pw-2"}, "tokenPath": "token"}}
PROFILE = {"username": "alice", "email": "alice@market.test", "phone": "+15550001", "bio": "", "role": "customer"}


@pytest.fixture
def market(set_env):
    """Serve a MarketApp twin and point the environment at it: alice is the test identity (her bearer
    token), bob the second one (his login)."""
    running: list[RunningTarget] = []

    def serve(*flaws: str, env: dict | None = None, **options) -> MarketApp:
        running.append(RunningTarget(MarketApp(set(flaws), **options)))
        values = {"authToken": "Bearer tok-alice", "testUserId": "alice", "identities": [BOB], **(env or {})}
        set_env(running[-1].base_url, **{k: v for k, v in values.items() if v is not None})
        return running[-1].app

    yield serve
    for target in running:
        target.stop()


def observed(method: str, path: str, *, paths=(), response=None, body=None, query=None, headers=None,
             classes: dict[str, list[str]] | None = None, authenticated: bool = True, answers=()):
    """An endpoint as ingestion stores its traffic: ``headers`` replace the stored request headers (values
    redacted as ingestion keeps them), ``classes`` set data classes on response fields, ``answers``: more
    traces (concrete path, answer) of other objects."""
    endpoint = endpoint_from_traffic(host=HOST, method=method, path=path, authenticated=authenticated,
                                     paths=list(paths), response=response, body=body, query=query)
    if headers is not None:
        trace = endpoint.traces.get()
        trace.request_headers = [{"name": k, "value": v} for k, v in headers.items()]
        trace.save()
    for data_path, names in (classes or {}).items():
        DataField.objects.filter(endpoint=endpoint, data_path=data_path).update(data_classes=names)
    for concrete, answer in answers:
        ApiTraceFactory(endpoint=endpoint, path=concrete, response_body=json.dumps(answer),
                        request_headers=[{"name": "Authorization", "value": "Bearer [REDACTED]"}])
    return endpoint


def run(template: str | None, method: str, path: str) -> dict:
    """One run of the command on an endpoint: {template: outcome} and the output."""
    args = ["--host", HOST, "--endpoint", path, "--method", method] + (["--type", template] if template else [])
    status, output = run_command(*args)
    run = TestRun.objects.order_by("-created_at").first()
    outcomes = {r.template_name: r.outcome for r in run.results.all()}
    return {"outcomes": outcomes, "output": output, "run": run, "status": status}


def detected(found: dict, template: str) -> None:
    assert found["outcomes"].get(template) == "FAILED", found["output"]


def clean(found: dict, template: str) -> None:
    assert found["outcomes"].get(template) == "PASSED", found["output"]


# --- AUTH_BYPASS: only on proof ------------------------------------------------------------------

@pytest.fixture
def public_and_private(db):
    """A catalogue and a "who am I" route that traffic only ever showed with a token."""
    observed("GET", "/api/products", response=[{"id": 1, "name": "Tea", "price": 3}])
    observed("GET", "/api/me", response=PROFILE, classes={"email": ["email"], "phone": ["phone_number"]})


def test_a_public_route_called_with_credentials_is_no_finding(public_and_private, market):
    market()  # /api/me without credentials answers {"user": null}
    clean(run("AUTH_BYPASS", "GET", "/api/products"), "AUTH_BYPASS")
    clean(run("AUTH_BYPASS", "GET", "/api/me"), "AUTH_BYPASS")


def test_a_private_answer_served_without_credentials_is_found(public_and_private, market):
    market("anon_me")
    found = run("AUTH_BYPASS", "GET", "/api/me")
    detected(found, "AUTH_BYPASS")
    assert "shows 3 value(s) of the authenticated answer's sensitive or user-specific content" in found["output"]
    clean(run("AUTH_BYPASS", "GET", "/api/products"), "AUTH_BYPASS")  # the catalogue stays public


@pytest.fixture
def orders_with_consent_cookies(db):
    """Traffic carried a consent and a language cookie beside the bearer token: only the token is a
    credential (DECISIONS §4), so the test removes the Authorization header, not the cookies."""
    observed("GET", "/api/orders", response=[{"id": 10, "owner": "alice", "email": "alice@market.test", "total": 12.5}],
             headers={"Authorization": "Bearer [REDACTED]", "Cookie": "cookieconsent_status=[REDACTED]; lang=[REDACTED]"},
             classes={"[].email": ["email"]})


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("orders_anonymous",), "FAILED")])
def test_consent_cookies_are_no_credential(orders_with_consent_cookies, market, flaws, outcome):
    test = test_generate(endpoint=orders_with_consent_cookies_endpoint(), template_name="AUTH_BYPASS")["test"]
    assert test["requests"][1]["omitHeaders"] == ["Authorization"]
    assert "{{authCookie}}" not in json.dumps(test)
    market(*flaws)
    assert run("AUTH_BYPASS", "GET", "/api/orders")["outcomes"]["AUTH_BYPASS"] == outcome


def orders_with_consent_cookies_endpoint():
    from inventory.models import Endpoint
    return Endpoint.objects.select_related("host").get(path="/api/orders", method="GET")


# --- refusals in any form -----------------------------------------------------------------------

@pytest.fixture
def orders(db):
    return observed("GET", "/api/orders/{param1}", paths=["/api/orders/10", "/api/orders/20", "/api/orders/30"],
                    response={"id": 10, "owner": "alice", "email": "alice@market.test", "total": 12.5},
                    classes={"email": ["email"]},
                    answers=[("/api/orders/20", {"id": 20, "owner": "bob", "email": "bob@market.test", "total": 1}),
                             ("/api/orders/30", {"id": 30, "owner": "carol", "email": "c@market.test", "total": 1})])


@pytest.mark.parametrize("refusal", [400, 500, 429])
def test_a_refusal_in_another_form_than_401_or_403_is_no_finding(orders, market, refusal):
    market(refusal=refusal)
    found = run("BOLA", "GET", "/api/orders/{param1}")
    clean(found, "BOLA")


def test_another_users_order_served_is_found(orders, market):
    app = market("bola_orders")
    detected(run("BOLA", "GET", "/api/orders/{param1}"), "BOLA")
    # bob's order, found through traffic's owner field, and carol's (a user seen in traffic): reads only
    assert {r["path"] for r in app.requests if r["headers"].get("authorization") == "Bearer tok-alice"} >= {
        "/api/orders/20", "/api/orders/30"}


# --- a password change proved by a login's token, not its status ----------------------------------

@pytest.fixture
def password_change(db):
    observed("GET", "/api/users/{param1}", paths=["/api/users/alice", "/api/users/bob", "/api/users/carol"],
             response=PROFILE)
    observed("POST", "/api/login", authenticated=False, body={"username": "carol", "password": "[REDACTED]"},
             response={"token": "[REDACTED]"})
    return observed("PUT", "/api/users/{param1}/password", paths=["/api/users/carol/password"],
                    body={"password": "[REDACTED]"})


def test_a_login_answering_200_with_a_failure_body_proves_nothing(password_change, market):
    app = market()  # the fixed twin changes the caller's own password, whatever the path names
    clean(run("BOLA", "PUT", "/api/users/{param1}/password"), "BOLA")
    assert app.users["bob"]["password"] == "Bob-pw-2"
    # the password is put back only by bob, only when his login with the new one gave him a token: never
    # with alice's token (which here would have written bob's password into alice's account)
    assert app.users["alice"]["password"] != "Bob-pw-2"
    assert app.users["carol"]["password"] == "Carol-pw-3"


def test_another_users_password_changed_is_found_and_put_back(password_change, market):
    app = market("bola_password")
    detected(run("BOLA", "PUT", "/api/users/{param1}/password"), "BOLA")
    assert app.users["bob"]["password"] == "Bob-pw-2"  # put back by bob himself
    puts = [r for r in app.requests if r["method"] == "PUT"]
    assert [r["headers"]["authorization"] for r in puts] == ["Bearer tok-alice", "Bearer tok-bob"]
    assert app.users["carol"]["password"] == "Carol-pw-3"


# --- users of traffic named in bodies; UserId-style owners; role changes ---------------------------

@pytest.fixture
def profile_writes(db):
    observed("GET", "/api/users/{param1}", paths=["/api/users/alice", "/api/users/bob", "/api/users/carol"],
             response=PROFILE)
    return observed("PUT", "/api/profile", body={"username": "carol", "phone": "[REDACTED]", "bio": "hello"},
                    response=PROFILE)


@pytest.mark.parametrize(("flaws", "bola"), [((), "PASSED"), (("profile_by_body",), "FAILED")])
def test_a_write_naming_a_user_of_traffic_in_its_body_never_writes_to_them(profile_writes, market, flaws, bola):
    app = market(*flaws)
    found = run(None, "PUT", "/api/profile")  # every applicable template
    assert found["outcomes"]["BOLA"] == bola, found["output"]
    assert "FAILED" not in {o for t, o in found["outcomes"].items() if t != "BOLA"}, found["output"]
    assert app.users["carol"] == {**app.users["carol"], "phone": "+15550003", "bio": "carol's bio"}
    assert not any("carol" in r["body"] for r in app.requests if r["method"] == "PUT")


@pytest.fixture
def baskets(db):
    """Sequelize-style owners: the answer names its owner under ``UserId`` (a number)."""
    return observed("GET", "/api/baskets/{param1}", paths=["/api/baskets/1", "/api/baskets/2", "/api/baskets/3"],
                    response={"id": 1, "UserId": 1, "status": "open", "items": [{"product": 1, "qty": 2}]},
                    answers=[("/api/baskets/2", {"id": 2, "UserId": 2, "status": "open", "items": []}),
                             ("/api/baskets/3", {"id": 3, "UserId": 3, "status": "open", "items": []})])


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("bola_basket_read",), "FAILED")])
def test_userid_owners_tell_whose_object_it_is(baskets, market, flaws, outcome):
    numeric = {"name": "bob", "userId": "2", "authToken": "Bearer tok-bob"}
    app = market(*flaws, env={"testUserId": "1", "identities": [numeric]})
    assert run("BOLA", "GET", "/api/baskets/{param1}")["outcomes"]["BOLA"] == outcome
    by_alice = {r["path"] for r in app.requests if r["headers"].get("authorization") == "Bearer tok-alice"}
    assert "/api/baskets/2" in by_alice and "/api/baskets/1" not in by_alice  # bob's (UserId 2), never her own


@pytest.fixture
def role_change(db):
    observed("GET", "/api/users/{param1}", paths=["/api/users/alice", "/api/users/bob", "/api/users/carol"],
             response=PROFILE)
    return observed("PUT", "/api/users/update_role", body={"username": "carol", "role": "admin"},
                    response={"status": "ok"})


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("bfla_update_role",), "FAILED")])
def test_a_role_change_route_in_any_spelling_is_a_function_of_another_role(role_change, market, flaws, outcome):
    app = market(*flaws)
    found = run("BOLA", "PUT", "/api/users/update_role")
    assert found["outcomes"]["BOLA"] == outcome, found["output"]
    assert "role or permission change" in found["output"] or outcome == "PASSED"
    assert app.users["carol"]["role"] == "customer"  # the user traffic named is never the one changed


# --- cookie sessions and form logins ------------------------------------------------------------

@pytest.fixture
def wallet(db):
    observed("GET", "/api/wallet", response={"owner": "alice", "email": "alice@market.test", "balance": 40},
             headers={"Cookie": "sid=[REDACTED]"}, classes={"email": ["email"]})
    observed("POST", "/api/session", authenticated=False, body={"username": "carol", "password": "[REDACTED]"},
             response={"status": "ok"})


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("wallet_any_sid",), "FAILED")])
def test_cookie_sessions_log_in_and_are_tested_as_cookies(wallet, market, flaws, outcome):
    login = {"url": "/api/session", "body": {"username": "alice", "password": "Alice-pw-1"}, "cookie": {"name": "sid"}}
    app = market(*flaws, env={"authToken": None, "login": login})
    found = run("AUTH_BYPASS", "GET", "/api/wallet")
    assert found["outcomes"]["AUTH_BYPASS"] == outcome, found["output"]
    control = next(r for r in app.requests if r["path"] == "/api/wallet")
    assert control["headers"]["cookie"].startswith("sid=") and "authorization" not in control["headers"]
    assert any(r["path"] == "/api/wallet" and r["headers"].get("cookie") == "sid=apiscope-malformed-token"
               for r in app.requests)


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("bola_orders",), "FAILED")])
def test_a_form_login_fetches_the_token(orders, market, flaws, outcome):
    login = {"url": "/oauth/token", "form": True, "tokenPath": "access_token",
             "body": {"grant_type": "password", "username": "alice", "password": "Alice-pw-1"}}
    app = market(*flaws, env={"authToken": None, "login": login})
    assert run("BOLA", "GET", "/api/orders/{param1}")["outcomes"]["BOLA"] == outcome
    token = next(r for r in app.requests if r["path"] == "/oauth/token")
    assert token["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert "grant_type=password" in token["body"]


# --- effects as the owner sees them --------------------------------------------------------------

@pytest.fixture
def notes(db):
    observed("GET", "/api/notes", response=[{"id": 100, "text": "buy tea"}])
    return observed("DELETE", "/api/notes/{param1}", paths=["/api/notes/300"])


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("bola_note_delete",), "FAILED")])
def test_a_removal_only_a_collection_shows_is_read_back(notes, market, flaws, outcome):
    app = market(*flaws, env={"identities": [{**BOB, "objectIds": {"note": "200"}}]})
    found = run("BOLA", "DELETE", "/api/notes/{param1}")
    assert found["outcomes"]["BOLA"] == outcome, found["output"]
    assert 300 in app.notes  # carol's note, the one traffic showed, is never the one deleted
    if outcome == "FAILED":
        assert "bob's view GET /api/notes is unchanged" in found["output"]


@pytest.fixture
def checkout(db):
    observed("GET", "/api/baskets/{param1}", paths=["/api/baskets/1", "/api/baskets/3"],
             response={"id": 1, "UserId": 1, "status": "open", "items": [{"product": 1, "qty": 2}]})
    return observed("POST", "/api/baskets/{param1}/checkout", paths=["/api/baskets/3/checkout"],
                    response={"status": "ordered", "basket": 3})


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("bola_checkout",), "FAILED")])
def test_a_state_change_of_another_users_container_is_found(checkout, market, flaws, outcome):
    app = market(*flaws, env={"identities": [{**BOB, "objectIds": {"basket": "2"}}]})
    found = run("BOLA", "POST", "/api/baskets/{param1}/checkout")
    assert found["outcomes"]["BOLA"] == outcome, found["output"]
    assert app.baskets[3]["status"] == "open"  # carol's basket, seen in traffic, is never checked out


@pytest.fixture
def basket_items(db):
    observed("GET", "/api/baskets/{param1}", paths=["/api/baskets/1"],
             response={"id": 1, "UserId": 1, "status": "open", "items": [{"product": 1, "qty": 2}]})
    observed("GET", "/api/baskets/{param1}/items", paths=["/api/baskets/1/items"], response=[{"product": 1, "qty": 2}])
    return observed("POST", "/api/baskets/{param1}/items", paths=["/api/baskets/1/items"], body={"product": 2, "qty": 1},
                    response={"basket": 1, "items": 2})


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("bola_basket_add",), "FAILED")])
def test_an_addition_to_another_users_private_collection_is_found(basket_items, market, flaws, outcome):
    app = market(*flaws, env={"objectIds": {"basket": "1"}, "identities": [{**BOB, "objectIds": {"basket": "2"}}]})
    found = run("BOLA", "POST", "/api/baskets/{param1}/items")
    assert found["outcomes"]["BOLA"] == outcome, found["output"]
    assert len(app.baskets[2]["items"]) == (2 if flaws else 1)  # bob's basket: the test's item only when unguarded


# --- public objects, comments on them, nested objects --------------------------------------------

@pytest.fixture
def articles(db):
    """Public articles naming their authors, comments anyone logged in may add, deletes for authors."""
    observed("GET", "/api/articles/{param1}", paths=["/api/articles/alice-tea", "/api/articles/carol-pots"],
             response={"slug": "alice-tea", "title": "alice tea", "author": {"username": "alice", "bio": ""}})
    observed("GET", "/api/articles/{param1}/comments", paths=["/api/articles/alice-tea/comments"],
             response=[{"id": 1, "body": "first brew", "author": {"username": "alice"}}])
    observed("POST", "/api/articles/{param1}/comments", paths=["/api/articles/alice-tea/comments"],
             body={"comment": {"body": "first brew"}},
             response={"comment": {"id": 1, "body": "first brew", "author": {"username": "alice"}}})
    observed("DELETE", "/api/articles/{param1}", paths=["/api/articles/alice-tea"])
    observed("DELETE", "/api/articles/{param1}/comments/{param2}", paths=["/api/articles/alice-tea/comments/1"])


ARTICLE_IDS = {"objectIds": {"article": "alice-tea", "comment": "1"},
               "identities": [{**BOB, "objectIds": {"article": "bob-cups", "comment": "2"}}]}


def test_a_public_object_naming_the_test_user_is_no_bypass(articles, market):
    market()  # the test user's name in her public article is its author, not her session
    clean(run("AUTH_BYPASS", "GET", "/api/articles/{param1}"), "AUTH_BYPASS")
    clean(run("AUTH_BYPASS", "GET", "/api/articles/{param1}/comments"), "AUTH_BYPASS")


def test_a_comment_on_another_users_public_article_is_no_finding(articles, market):
    app = market(env=ARTICLE_IDS)
    clean(run("BOLA", "POST", "/api/articles/{param1}/comments"), "BOLA")
    # The comment was accepted and bob's comments changed: the article being one alice reads decided.
    assert any(slug == "bob-cups" and author == "alice" for slug, author, _ in app.comments.values())


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"),
                                                (("bola_article_delete", "bola_comment_delete"), "FAILED")])
def test_a_nested_object_is_deleted_before_its_parent(articles, market, flaws, outcome):
    """Bob's comment sits under his article: the comment's delete runs before the article's (which would
    take the comment with it), so both flaws show in one run of the host."""
    app = market(*flaws, env=ARTICLE_IDS)
    status, output = run_command("--host", HOST, "--type", "BOLA")
    results = {(r.method, r.endpoint): r.outcome for r in TestRun.objects.order_by("-created_at").first().results.all()}
    assert results[("DELETE", "/api/articles/{param1}/comments/{param2}")] == outcome, output
    assert results[("DELETE", "/api/articles/{param1}")] == outcome, output
    assert "carol-pots" in app.articles and 3 in app.comments  # carol's, seen in traffic only


def test_a_nested_write_with_the_parent_unknown_names_what_to_configure(articles, market):
    app = market("bola_comment_delete", env={"identities": [{**BOB, "objectIds": {"comment": "2"}}]})
    found = run("BOLA", "DELETE", "/api/articles/{param1}/comments/{param2}")
    assert found["outcomes"]["BOLA"] == "INCONCLUSIVE", found["output"]
    assert "identities.bob.objectIds.article" in found["output"]
    assert not any(r["method"] == "DELETE" for r in app.requests) and 2 in app.comments


@pytest.fixture
def registration(db):
    """A registration as a POST to the user collection, its fields in an envelope (no "sign-up" in the path)."""
    return observed("POST", "/api/users", authenticated=False,
                    body={"user": {"username": "carol", "email": "carol@market.test", "password": "[REDACTED]"}},
                    response={"user": {"username": "carol", "email": "carol@market.test", "token": "[REDACTED]"}})


def test_a_registration_to_the_user_collection_registers_fresh_users(registration, market):
    app = market()
    found = run(None, "POST", "/api/users")
    # The example alone registers a user of the test's own, so the attacks' answers can be judged.
    assert found["outcomes"]["SQL_INJECTION"] == "PASSED" and found["outcomes"]["XSS"] == "PASSED", found["output"]
    created = set(app.users) - {"alice", "bob", "carol", "root"}
    assert len(created) > 3
    assert app.users["carol"]["password"] == "Carol-pw-3" and app.users["alice"]["password"] == "Alice-pw-1"


@pytest.fixture
def favorites(db):
    observed("POST", "/api/products/{param1}/favorite", paths=["/api/products/2/favorite"],
             response={"product": 2, "favorited": True})
    observed("DELETE", "/api/products/{param1}/favorite", paths=["/api/products/2/favorite"],
             response={"product": 2, "favorited": False})


def test_the_callers_relation_to_one_object_is_no_bulk_delete(favorites, market):
    """``DELETE /api/products/{id}/favorite`` removes the caller's favourite of one product: it is tested (on
    the test identity's own product), not excluded as a bulk delete."""
    app = market(env={"objectIds": {"product": "1"}})
    app.favorites.add(("alice", 1))
    found = run("SQL_INJECTION", "DELETE", "/api/products/{param1}/favorite")
    assert found["outcomes"] == {"SQL_INJECTION": "PASSED"}, found["output"]
    sent = [r["path"] for r in app.requests if r["method"] == "DELETE"]
    assert "/api/products/1/favorite" in sent and not any(p.startswith("/api/products/2") for p in sent)


@pytest.mark.parametrize(("flaws", "outcome"), [((), "PASSED"), (("register_role",), "FAILED")])
def test_a_registration_is_read_back_by_the_new_user_through_the_singular_user_route(registration, market, flaws,
                                                                                     outcome):
    """``GET /api/user`` (no parameter, singular) is the caller's own user: the user a registration created
    logs in and reads a role it was not to set."""
    observed("POST", "/api/login", authenticated=False, body={"username": "carol", "password": "[REDACTED]"},
             response={"token": "[REDACTED]"})
    observed("GET", "/api/user", response={"user": {"username": "alice", "email": "alice@market.test", "role": "customer"}})
    market(*flaws)
    found = run("MASS_ASSIGNMENT", "POST", "/api/users")
    assert found["outcomes"]["MASS_ASSIGNMENT"] == outcome, found["output"]


# --- a weak JWT secret of six digits --------------------------------------------------------------

@pytest.mark.parametrize(("secret", "outcome"), [("384912", "FAILED"), ("k3Qp9-not-a-number-7f2a91c0e", "PASSED")])
def test_a_six_digit_jwt_secret_is_found_offline(db, set_env, settings, secret, outcome):
    settings.TESTGEN_JWT_CRACK_SECONDS = 120  # the whole numeric space on a loaded machine
    endpoint_from_traffic(host=HOST, method="GET", path="/api/me", authenticated=True,
                          response={"user": "alice", "plan": "pro"})
    app = JwtApi(secret=secret)
    target = RunningTarget(app)
    try:
        set_env(target.base_url, authToken=f"Bearer {app.issue('alice')}")
        found = run("AUTH_BYPASS", "GET", "/api/me")
    finally:
        target.stop()
    assert found["outcomes"]["AUTH_BYPASS"] == outcome, found["output"]
    if outcome == "FAILED":
        assert "forged with the weak secret '384912'" in found["output"]


# --- state-resetting endpoints and exclude --------------------------------------------------------

@pytest.fixture
def reset_in_traffic(db):
    observed("GET", "/api/reset-db", authenticated=False, response={"message": "Database populated."})
    observed("GET", "/api/products", response=[{"id": 1, "name": "Tea", "price": 3}])


def test_a_state_resetting_get_seen_in_traffic_is_never_called(reset_in_traffic, market, client):
    app = market()
    status, output = run_command("--host", HOST)
    assert app.resets == 0 and not any(r["path"] == "/api/reset-db" for r in app.requests)
    assert "GET /api/reset-db: Excluded from testing: its path ('reset-db') resets or seeds shared state" in output
    items = client.get("/api/v1/gen-test-endpoints", {"host": HOST}).json()
    assert {"success": False, "endpoint": "/api/reset-db", "method": "GET",
            "msg": "Excluded from testing: its path ('reset-db') resets or seeds shared state; list it in "
                   "allowDestructive to test it"} in items


def test_allow_destructive_and_exclude_are_the_operators_choice(reset_in_traffic, market, client):
    app = market(env={"allowDestructive": [{"path": "/api/reset-*"}], "exclude": [{"path": "/api/products",
                                                                                  "methods": ["GET"]}]})
    run_command("--host", HOST)
    assert app.resets > 0  # accepted as a target by the operator
    assert not any(r["path"] == "/api/products" for r in app.requests)
    item = client.get("/api/v1/gen-test-endpoint", {"endpoint": "/api/products"}).json()
    assert item == {"success": False, "msg": "Excluded from testing: listed in the testing environment's exclude "
                                             "(/api/products)"}


# --- every request carries the run's marker -----------------------------------------------------

def test_every_request_of_a_run_carries_a_marker_that_verifies(orders, market):
    app = market("bola_orders")
    found = run(None, "GET", "/api/orders/{param1}")
    values = {r["headers"].get(HEADER.lower()) for r in app.requests}
    assert len(values) == 1 and None not in values  # logins included
    value = values.pop()
    assert value.startswith(f"{found['run'].uuid}.")
    assert marker_check(value) == MarkerVerdict.TEST  # closed a moment ago: still within the grace
    stored = json.dumps([found["run"].coverage, [r.checks for r in found["run"].results.all()]])
    assert value not in stored and "X-Apiscope-Test" not in json.dumps(
        test_generate(endpoint=orders, template_name="BOLA"))


# --- what a run may send: a recording target -----------------------------------------------------

CAROL = {"carol", "3", "30", "300", "carol-pots"}  # carol, seen in traffic only, her basket, order, note, article
# (and comment 3)


@pytest.fixture
def carols_traffic(db):
    """An inventory whose traffic names carol's objects everywhere: in paths (her order 30, basket 3, note 300,
    her name), in a query (``noteId=300``) and in bodies (``username``, ``UserId``)."""
    observed("GET", "/api/users/{param1}", paths=["/api/users/alice", "/api/users/bob", "/api/users/carol"],
             response=PROFILE)
    observed("GET", "/api/orders/{param1}", paths=["/api/orders/30", "/api/orders/20", "/api/orders/10"],
             response={"id": 30, "owner": "carol", "email": "c@market.test", "total": 1}, classes={"email": ["email"]})
    observed("PATCH", "/api/orders/{param1}", paths=["/api/orders/30"], body={"note": "gift", "UserId": 3},
             response={"id": 30, "owner": "carol", "note": "gift"})
    observed("GET", "/api/baskets/{param1}", paths=["/api/baskets/3"],
             response={"id": 3, "UserId": 3, "status": "open", "items": []})
    observed("POST", "/api/baskets/{param1}/checkout", paths=["/api/baskets/3/checkout"], response={"status": "ordered"})
    observed("GET", "/api/notes", response=[{"id": 300, "text": "plan"}])
    observed("DELETE", "/api/notes/{param1}", paths=["/api/notes/300"])
    observed("DELETE", "/api/notes", query={"noteId": "300"})
    observed("PUT", "/api/profile", body={"username": "carol", "phone": "[REDACTED]", "bio": "hi"}, response=PROFILE)
    observed("GET", "/api/articles/{param1}", paths=["/api/articles/carol-pots"],
             response={"slug": "carol-pots", "title": "carol pots", "author": {"username": "carol", "bio": ""}})
    observed("POST", "/api/articles/{param1}/comments", paths=["/api/articles/carol-pots/comments"],
             body={"comment": {"body": "my pots"}}, response={"comment": {"id": 3, "body": "my pots"}})
    observed("DELETE", "/api/articles/{param1}/comments/{param2}", paths=["/api/articles/carol-pots/comments/3"])
    observed("PUT", "/api/users/{param1}/password", paths=["/api/users/carol/password"], body={"password": "[REDACTED]"})
    observed("PUT", "/api/users/update_role", body={"username": "carol", "role": "admin"}, response={"status": "ok"})
    observed("GET", "/api/me", response=PROFILE, classes={"email": ["email"]})
    observed("GET", "/api/products", response=[{"id": 1, "name": "Tea", "price": 3}])
    observed("GET", "/api/reset-db", authenticated=False, response={"message": "Database populated."})
    observed("POST", "/api/login", authenticated=False, body={"username": "carol", "password": "[REDACTED]"},
             response={"token": "[REDACTED]"})


def _leaves(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield str(value)


def test_every_template_writes_only_to_the_test_identities_and_sends_nothing_else(carols_traffic, market):
    """Every applicable template of every endpoint, against the twin with every flaw on (the worst case):
    no write names carol or one of her objects, in path, query or body; carol's data is as seeded; every
    request is an endpoint of the inventory (the one under test, or a GET reading back) or a login, never
    the state-resetting route; each carries the run's marker."""
    from inventory.models import Endpoint
    from inventory.patterns.segments import path_segments, segment_is_parameter

    app = market(*__import__("tests.testgen.market_app", fromlist=["FLAWS"]).FLAWS,
                 env={"objectIds": {"order": "10", "basket": "1", "note": "100", "article": "alice-tea", "comment": "1"},
                      "identities": [{**BOB, "objectIds": {"order": "20", "basket": "2", "note": "200",
                                                           "article": "bob-cups", "comment": "2"}}]})
    status, output = run_command("--host", HOST)
    run = TestRun.objects.order_by("-created_at").first()
    assert run.num_tests > 30 and run.num_errors == 0, output

    for request in app.requests:
        if request["method"] in ("POST", "PUT", "PATCH", "DELETE") and request["path"] not in ("/api/login",
                                                                                                 "/api/session"):
            named = set(path_segments(request["path"])) | set(request["query"].values())
            try:
                named |= set(_leaves(json.loads(request["body"] or "{}")))
            except ValueError:
                named.add(request["body"])
            assert not named & CAROL, request
    assert app.users["carol"] == {"id": 3, "password": "Carol-pw-3", "email": "carol@market.test",
                                  "phone": "+15550003", "bio": "carol's bio", "role": "customer"}
    assert 300 in app.notes and app.baskets[3]["status"] == "open" and 30 not in app.order_notes
    assert "carol-pots" in app.articles and app.comments[3] == ("carol-pots", "carol", "my pots")
    assert not any(slug == "carol-pots" for slug, author, _ in app.comments.values() if author != "carol")

    patterns = [(e.method, path_segments(e.path)) for e in Endpoint.objects.filter(host__name=HOST)]

    def in_inventory(method: str, path: str) -> bool:
        parts = path_segments(path)
        return any(m == method and len(p) == len(parts) and all(segment_is_parameter(a) or a == b for a, b in
                                                                zip(p, parts, strict=True)) for m, p in patterns)

    logins = {("POST", "/api/login")}
    for request in app.requests:  # (a payload with "/" in a path segment is one segment as sent: %2F)
        assert (request["method"], request["path"]) in logins or in_inventory(request["method"], request["target"]), \
            request
    assert app.resets == 0 and not any(r["path"] == "/api/reset-db" for r in app.requests)
    markers = {r["headers"].get(HEADER.lower()) for r in app.requests}
    assert markers == {markers and next(iter(markers))} and next(iter(markers)).startswith(str(run.uuid))


def test_a_user_name_the_inventory_kept_literal_is_never_written(market):
    """The inventory kept carol's routes apart (``GET /api/users/carol``, ``PUT /api/users/carol/password``:
    names that read as words stay literal): her own read names her under ``username``, so the write's
    literal segment is a user seen in traffic; every template writes the test identity's own instead."""
    observed("GET", "/api/users/{param1}", paths=["/api/users/alice"], response=PROFILE)
    observed("GET", "/api/users/carol", response={**PROFILE, "username": "carol", "email": "carol@market.test"})
    observed("PUT", "/api/users/carol/password", body={"password": "[REDACTED]"})
    app = market("bola_password", env={"login": {"url": "/api/login", "body": {"username": "alice",
                                                                              "password": "Alice-pw-1"},
                                                 "tokenPath": "token"}})
    run_command("--host", HOST, "--endpoint", "/api/users/carol/password", "--method", "PUT")
    assert app.users["carol"]["password"] == "Carol-pw-3" and app.users["alice"]["password"] == "Alice-pw-1"
    writes = [r for r in app.requests if r["method"] == "PUT"]
    assert writes and not any("carol" in r["path"] for r in writes)


PUBLIC_CAROL = {"username": "carol", "email": "carol@market.test", "bio": "carol's bio"}


def test_a_public_profile_of_a_user_seen_in_traffic_is_no_finding(market):
    """Profiles anyone may read: carol's, seen in traffic, is served to alice as to an anonymous caller
    (BOLA's control without credentials)."""
    observed("GET", "/api/profiles/{param1}", paths=["/api/profiles/carol", "/api/profiles/alice"],
             response=PUBLIC_CAROL, classes={"email": ["email"]})
    app = market()
    clean(run("BOLA", "GET", "/api/profiles/{param1}"), "BOLA")
    carol = [r for r in app.requests if r["path"] == "/api/profiles/carol"]
    assert {"authorization" in r["headers"] for r in carol} == {True, False}  # with alice's token, and without


def test_a_literal_route_whose_pattern_traffic_called_anonymously_is_public(market):
    """The inventory kept ``/api/profiles/carol`` (called with a token) apart from ``/api/profiles/{param1}``,
    which traffic called without credentials: the route is public, what an anonymous caller gets there
    is no bypass."""
    observed("GET", "/api/profiles/{param1}", paths=["/api/profiles/root"], authenticated=False,
             response={**PUBLIC_CAROL, "username": "root"})
    observed("GET", "/api/profiles/carol", response=PUBLIC_CAROL, classes={"email": ["email"]})
    market()
    clean(run("AUTH_BYPASS", "GET", "/api/profiles/carol"), "AUTH_BYPASS")
