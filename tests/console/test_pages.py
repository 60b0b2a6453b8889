"""Every console page through the admin URLs on seeded demo data, figures compared with the API's."""
from __future__ import annotations

import json
import re

import pytest

from core.enums import AlertType, RiskScore
from detections.models import Alert
from inventory.models import Endpoint

from .conftest import total

pytestmark = pytest.mark.django_db


def test_dashboard_is_the_branded_index_and_its_figures_equal_the_api(demo, admin_browser, client):
    response = admin_browser.get("/admin/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "apiscope console" in html and "Django administration" not in html
    ctx = response.context
    for risk, n in ctx["endpoints_by_risk"]:
        assert n == total(client, "/api/v1/endpoints", riskScores=risk), risk
    assert ctx["endpoints_total"] == total(client, "/api/v1/endpoints") > 0
    assert ctx["hosts_total"] == total(client, "/api/v1/hosts") == 5
    assert ctx["open_alerts_total"] == total(client, "/api/v1/alerts", status="Open") > 0
    for row in ctx["open_alerts"]:
        assert row["total"] == total(client, "/api/v1/alerts", status="Open", types=row["value"]), row
        assert row["type"] == row["value"]  # SPEC's display string, not the enum's name
    for risk, n in ctx["open_alerts_by_risk"]:
        assert n == total(client, "/api/v1/alerts", status="Open", riskScores=risk.lower()), risk
    assert ctx["data_classes"]
    for name, n in ctx["data_classes"]:
        assert n == total(client, "/api/v1/endpoints", dataClasses=name), name
    new_endpoints = ctx["per_day_totals"][0]
    assert new_endpoints == Endpoint.objects.count()  # the demo's traffic is at most 6 days old
    assert "<svg" in html and "new endpoints" in html
    high_hosts = {h.name for h in ctx["top_hosts"] if h.risk == RiskScore.HIGH}
    assert high_hosts and all(total(client, "/api/v1/endpoints", hosts=name, riskScores="HIGH") for name in high_hosts)
    latest = ctx["latest_alerts"]
    assert latest and f"{latest[0].endpoint.method} {latest[0].endpoint.host.name} " in html


def test_alerts_list_shows_spec_display_strings_and_host_names(demo, admin_browser):
    html = admin_browser.get("/admin/detections/alert/").content.decode()
    for alert_type in Alert.objects.values_list("type", flat=True).distinct():
        assert AlertType(alert_type).label in html
    assert "Pii Data" not in html and "Unsecured Endpoint" not in html
    endpoint = Alert.objects.select_related("endpoint__host").first().endpoint
    assert f"{endpoint.method} {endpoint.host.name} {endpoint.path}" in html
    assert not re.search(r"(GET|POST|PUT|DELETE) \d+:/", html)  # no host ids
    fields = admin_browser.get("/admin/classification/datafield/").content.decode()
    assert "Response Body" in fields


def test_endpoint_page_shows_what_an_operator_works_from_and_resolves_an_alert(demo, admin_browser, client):
    alert = Alert.objects.filter(status="Open", type=AlertType.PII_DATA).select_related("endpoint__host").first()
    endpoint = alert.endpoint
    url = f"/admin/inventory/endpoint/{endpoint.uuid}/change/"
    response = admin_browser.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert f"{endpoint.method} {endpoint.host.name} {endpoint.path}" in html
    ctx = response.context
    assert len(ctx["endpoint_alerts"]) == total(client, "/api/v1/alerts", endpoint=str(endpoint.uuid))
    usage = client.get(f"/api/v1/endpoint/{endpoint.uuid}/usage").json()
    assert ctx["usage_total"] == sum(day["cnt"] for day in usage["dailyUsage"]) > 0
    detail = client.get(f"/api/v1/endpoint/{endpoint.uuid}").json()
    shown = {(f.data_section, f.data_path, f.status_code) for _, fields in ctx["sections"] for f in fields}
    assert shown == {(f["dataSection"], f["dataPath"], f["statusCode"]) for f in detail["dataFields"]}
    assert "Response Body" in html or "Request Body" in html
    assert ctx["recent_traces"] and len(ctx["recent_traces"]) <= 10
    assert "Resolve" in html and "Run these tests" in html or not ctx["generated_tests"]

    action = f"/admin/alert/{alert.uuid}/resolve/"
    answer = admin_browser.post(action, {"next": url})
    assert answer.status_code == 302 and answer["Location"] == url
    assert client.get(f"/api/v1/alert/{alert.uuid}").json()["status"] == "Resolved"
    again = admin_browser.post(action, {"next": url}, follow=True)
    assert "Alert is already resolved." in again.content.decode()
    assert admin_browser.get(action).status_code == 405
    # An open redirect is refused: back to the alert list.
    assert admin_browser.post(f"/admin/alert/{alert.uuid}/reopen-resolved/",
                              {"next": "https://elsewhere.example/"})["Location"] == "/admin/detections/alert/"


def test_endpoint_page_of_an_unknown_or_malformed_id_is_no_server_error(admin_browser):
    assert admin_browser.get("/admin/inventory/endpoint/not-a-uuid/change/").status_code in (302, 404)
    assert admin_browser.get(
        "/admin/inventory/endpoint/7b0e1f8c-6d1a-4c55-9a53-3c1f2f4f9d11/change/").status_code in (302, 404)


def test_hosts_graph_is_drawn_with_every_host_and_edge_of_the_api(demo, admin_browser, client):
    graph = client.get("/api/v1/hosts-graph").json()
    response = admin_browser.get("/admin/hosts-graph/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<svg" in html
    for name, host in graph["hosts"].items():
        assert f"{name} ({host['numEndpoints']})" in html
    assert html.count('class="edge"') == len(graph["edges"])


def test_read_only_operators_see_every_page_and_change_nothing(demo, operator_browser, client):
    endpoint = Endpoint.objects.filter(alerts__status="Open").first()
    alert = endpoint.alerts.filter(status="Open").first()
    for url in ["/admin/", "/admin/health/", "/admin/hosts-graph/", "/admin/inventory/endpoint/",
                f"/admin/inventory/endpoint/{endpoint.uuid}/change/", "/admin/detections/alert/",
                "/admin/inventory/host/", "/admin/classification/datafield/", "/admin/core/apikey/",
                "/admin/webhooks/webhook/", "/admin/testgen/testrun/", "/admin/testgen/testingenvironment/"]:
        assert operator_browser.get(url).status_code == 200, url
    page = operator_browser.get(f"/admin/inventory/endpoint/{endpoint.uuid}/change/").content.decode()
    assert "Resolve" not in page and "Run these tests" not in page and 'name="_save"' not in page
    assert operator_browser.post(f"/admin/alert/{alert.uuid}/resolve/").status_code == 403
    assert operator_browser.post(f"/admin/endpoint/{endpoint.uuid}/run-tests/").status_code == 403
    assert operator_browser.post(f"/admin/inventory/endpoint/{endpoint.uuid}/change/",
                                 {"owner": "someone"}).status_code == 403
    assert operator_browser.post("/admin/detections/alert/", {
        "action": "resolve_selected", "_selected_action": [str(alert.uuid)]}).status_code in (200, 302, 403)
    assert client.get(f"/api/v1/alert/{alert.uuid}").json()["status"] == "Open"
    assert Endpoint.objects.get(uuid=endpoint.uuid).owner == endpoint.owner


def test_dashboard_figures_are_kept_while_the_inventory_is_unchanged_or_briefly_when_slow(
        demo, admin_browser, settings, monkeypatch):
    from console import dashboard

    settings.INVENTORY_COUNT_CACHE_SECONDS = 30
    monkeypatch.setattr(dashboard, "SLOW_MS", 0)  # every computation counts as slow here
    monkeypatch.setattr(dashboard, "_cache", {})
    first, age = dashboard.cached_figures()
    assert age == 0
    again, age = dashboard.cached_figures()
    assert again is first and age > 0
    Endpoint.objects.filter(risk_score="HIGH").update(risk_score="LOW", risk_rank=1)
    # A change within STALE_SECONDS: the slow figures are still served ...
    assert dashboard.cached_figures()[0] is first
    # ... and once they are older, the new version is computed.
    monkeypatch.setattr(dashboard, "STALE_SECONDS", 0)
    from inventory.counts import inventory_changed

    inventory_changed()
    fresh, age = dashboard.cached_figures()
    assert age == 0 and fresh["endpoints_by_risk"]["HIGH"] == 0 != first["endpoints_by_risk"]["HIGH"]
    page = admin_browser.get("/admin/")
    assert "Figures computed" in page.content.decode()


def test_read_only_operators_are_shown_secrets_masked_and_admins_in_clear(operator_browser, admin_browser):
    from testgen.models import TestRun
    from webhooks.models import Webhook

    secret_url = "https://hooks.chat.example/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"
    webhook = Webhook.objects.create(url=secret_url)
    run = TestRun.objects.create(base_url="https://ci:hunter2-password@staging.shop.test/")
    for url in ("/admin/webhooks/webhook/", f"/admin/webhooks/webhook/{webhook.pk}/change/",
                f"/admin/testgen/testrun/{run.pk}/change/"):
        shown = operator_browser.get(url).content.decode()
        assert "XXXXXXXXXXXXXXXXXXXXXXXX" not in shown and "hunter2-password" not in shown, url
        assert "[REDACTED]" in shown, url
    assert secret_url in admin_browser.get(f"/admin/webhooks/webhook/{webhook.pk}/change/").content.decode()
    assert Webhook.objects.get(pk=webhook.pk).url == secret_url  # nothing masked was saved


def test_run_action_starts_the_endpoints_tests_or_says_why_not(demo, admin_browser, client):
    from testgen.models import TestRun

    endpoint = Endpoint.objects.select_related("host").filter(risk_score="HIGH").first()
    page = f"/admin/inventory/endpoint/{endpoint.uuid}/change/"
    action = f"/admin/endpoint/{endpoint.uuid}/run-tests/"
    refused = admin_browser.post(action, follow=True)
    assert refused.redirect_chain[-1][0] == page
    assert "Tests not started:" in refused.content.decode() and not TestRun.objects.exists()

    assert client.put("/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9"},
                      format="json").status_code == 200
    started = admin_browser.post(action)
    run = TestRun.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/admin/testgen/testrun/{run.pk}/change/"
    listed = client.get(f"/api/v1/testing/runs/{run.pk}").json()
    assert (listed["host"], listed["endpoint"], listed["method"]) == (endpoint.host.name, endpoint.path,
                                                                      endpoint.method)


def test_a_large_hosts_graph_draws_the_linked_hosts_first():
    from console.svg import graph_drawn, hosts_graph_svg

    hosts = {f"h{i:03}.example.com": {"numEndpoints": i, "isPublic": i % 2 == 0} for i in range(100)}
    edges = [{"srcHost": "h000.example.com", "dstHost": "h001.example.com", "numEndpoints": 3}]
    drawn = graph_drawn({"hosts": hosts, "edges": edges}, limit=10)
    assert len(drawn["hosts"]) == 10 and drawn["edges"] == edges
    assert {"h000.example.com", "h001.example.com", "h099.example.com"} <= set(drawn["hosts"])
    svg = hosts_graph_svg(drawn)
    assert svg.count('class="node"') == 10 and svg.count('class="edge"') == 1
    assert "<script" not in hosts_graph_svg({"hosts": {"<script>x": {"numEndpoints": 1, "isPublic": True}},
                                             "edges": []})


def test_migrate_keeps_the_operators_group_with_every_view_permission_and_nothing_else():
    from django.contrib.auth.models import Group, Permission
    from django.core.management import call_command

    from console.operators import OPERATORS_GROUP

    Group.objects.filter(name=OPERATORS_GROUP).delete()
    call_command("migrate", verbosity=0)  # nothing to apply: post_migrate still runs
    group = Group.objects.get(name=OPERATORS_GROUP)
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert codenames == set(Permission.objects.filter(codename__startswith="view_").values_list("codename", flat=True))
    assert {"view_endpoint", "view_alert", "view_apikey", "view_webhook"} <= codenames
    assert not [c for c in codenames if not c.startswith("view_")]


def test_the_read_only_console_shows_no_header_secret_masked_by_the_apis_own_rule(
        operator_browser, admin_browser, client, scoped_client):
    """A custom credential header of the testing environment (stored in clear): a read key gets it
    "[REDACTED]" from the API, and a read-only operator the same on every console page (one rule,
    core.masking: the header rule for ``headers``, not the body-name rule); an admin sees it to edit it."""
    from testgen.models import TestingEnvironment

    env = {"baseUrl": "https://ci:basic-pw-1@staging.shop.test/api", "authToken": "Bearer tok-77",
           "headers": {"X-Internal-Key": "HDR-SECRET-999", "Accept": "application/json"},
           "tenant_api_token": "EXTRA-SECRET-555"}
    assert client.put("/api/v1/testing/global-env", env, format="json").status_code == 200
    read = scoped_client("read").get("/api/v1/testing/global-env").json()
    shown_by_api = json.dumps(read)
    pk = TestingEnvironment.objects.get().pk
    for url in ("/admin/testgen/testingenvironment/", f"/admin/testgen/testingenvironment/{pk}/change/"):
        page = operator_browser.get(url).content.decode()
        for secret in ("HDR-SECRET-999", "EXTRA-SECRET-555", "basic-pw-1", "tok-77"):
            assert secret not in page and secret not in shown_by_api, (url, secret)
        assert "[REDACTED]" in page, url
    change = operator_browser.get(f"/admin/testgen/testingenvironment/{pk}/change/").content.decode()
    assert "application/json" in change  # an ordinary header stays readable
    assert "HDR-SECRET-999" in admin_browser.get(f"/admin/testgen/testingenvironment/{pk}/change/").content.decode()
