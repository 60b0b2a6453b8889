"""The console in a real browser: Playwright drives Debian's chromium against gunicorn on seeded demo
data, logs in, opens the dashboard, an endpoint page and the alerts list, checks their figures
against the API, fails on any JavaScript error or Content-Security-Policy violation (every page
carries the policy; a violation provoked on purpose proves they are caught), checks the ingestion
health page stays one screen wide after 1,000 ingestion requests with distinct User-Agents, and keeps
screenshots.

Screenshots go to ``$CONSOLE_ARTIFACTS`` (default ``var/artifacts/console/``; the path is printed).
With ``CONSOLE_DOCS_SCREENSHOTS=1`` the dashboard's and endpoint page's window views also go to
``docs/console/`` (docs/console.md shows them).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import requests
from django.contrib.auth.models import User

from core.models import ApiKey
from tests.support.processes import ROOT, process_env
from tests.support.web import start_web

from .conftest import seed_demo

CHROMIUM = "/usr/bin/chromium"
# Flags for a closed network and a root user (the machine's notes on headless chromium).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTH = 1440

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - the dev extra pins it
    sync_playwright = None

pytestmark = [
    pytest.mark.slow,
    pytest.mark.not_on_sqlite("starts gunicorn on the PostgreSQL test database"),
    pytest.mark.skipif(sync_playwright is None, reason="playwright is not installed (pip install -e '.[dev]')"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"Debian's chromium is not installed at {CHROMIUM}: scripts/test.sh installs it "
                              "with apt-get when run as root (apt-get install chromium)"),
]


DOCS = ROOT / "docs" / "console" if os.environ.get("CONSOLE_DOCS_SCREENSHOTS") == "1" else None


def screenshot(page, shots: Path, name: str) -> None:
    """The whole page into the artifacts; with CONSOLE_DOCS_SCREENSHOTS=1 the window's view into docs/."""
    page.screenshot(path=shots / name, full_page=True)
    if DOCS is not None and name in ("dashboard.png", "endpoint.png", "health.png"):
        DOCS.mkdir(exist_ok=True)
        page.screenshot(path=DOCS / name)


def artifacts_dir() -> Path:
    path = Path(os.environ.get("CONSOLE_ARTIFACTS") or ROOT / "var" / "artifacts" / "console")
    path.mkdir(parents=True, exist_ok=True)
    return path


class Api:
    def __init__(self, base_url: str, key: str):
        self.base_url, self.key = base_url, key

    def get(self, path: str, **params) -> requests.Response:
        response = requests.get(f"{self.base_url}/api/v1{path}", params=params, headers={"Authorization": self.key},
                                timeout=30)
        assert response.status_code == 200, (path, response.status_code, response.text[:300])
        return response

    def total(self, path: str, **params) -> int:
        return int(self.get(path, **params).headers["X-Total-Count"])


@pytest.mark.django_db(transaction=True)
def test_console_in_chromium_figures_equal_the_api_and_no_javascript_error():
    seed_demo()
    User.objects.create_superuser("operator", "operator@example.com", "console-pass-1")
    _, key = ApiKey.issue(name="browser test")
    web = start_web(process_env(TEST_SERVE_STATIC="true"))
    shots = artifacts_dir()
    print(f"\nconsole screenshots: {shots}")
    errors: list[str] = []
    policies: dict[str, str | None] = {}
    try:
        api = Api(web.base_url, key)
        flood_health(web.base_url)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
            page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
            page.on("requestfailed", lambda req: errors.append(f"request failed: {req.url}"))
            page.on("response", lambda r: r.status >= 400 and errors.append(f"{r.status}: {r.url}"))
            # Every document's policy, and every violation reported by the page itself.
            page.on("response", lambda r: r.request.resource_type == "document" and policies.__setitem__(
                r.url, r.headers.get("content-security-policy")))
            page.add_init_script(VIOLATIONS_REPORTED)

            page.goto(f"{web.base_url}/admin/login/?next=/admin/")
            page.fill("#id_username", "operator")
            page.fill("#id_password", "console-pass-1")
            page.click("input[type=submit]")
            page.wait_for_url(f"{web.base_url}/admin/")

            def figure(name: str) -> int:
                return int(page.locator(f"[data-figure='{name}']").inner_text().strip())

            # Dashboard: branded, its figures are the API's.
            assert "apiscope console" in page.locator("#site-name").inner_text()
            assert figure("endpoints-total") == api.total("/endpoints") > 0
            for risk in ("HIGH", "MEDIUM", "LOW", "NONE"):
                assert figure(f"endpoints-{risk}") == api.total("/endpoints", riskScores=risk), risk
            assert figure("hosts-total") == api.total("/hosts")
            assert figure("alerts-open-total") == api.total("/alerts", status="Open") > 0
            assert figure("alerts-open-pii-data-detected") == api.total("/alerts", status="Open",
                                                                       types="PII Data Detected")
            assert page.locator("#panel-new svg rect").count() > 0
            screenshot(page, shots, "dashboard.png")

            # Endpoint page of the riskiest endpoint: title with the host's name, its alerts.
            endpoint = api.get("/endpoints", riskScores="HIGH", limit=1).json()[0]
            page.goto(f"{web.base_url}/admin/inventory/endpoint/{endpoint['uuid']}/change/")
            title = page.locator("#endpoint-title").inner_text()
            assert f"{endpoint['method']} {endpoint['host']} {endpoint['path']}" in title
            alerts = api.total("/alerts", endpoint=endpoint["uuid"])
            assert page.locator("#panel-alerts h2").inner_text() == f"Alerts ({alerts})"
            assert page.locator("#panel-usage svg").count() == 1
            endpoint_page = page.url
            screenshot(page, shots, "endpoint.png")

            # Alerts list: SPEC's display strings, the API's count, no column cut at 1440 px.
            page.goto(f"{web.base_url}/admin/detections/alert/")
            assert page.get_by_text("PII Data Detected").first.is_visible()
            assert f"{api.total('/alerts')} alerts" in page.locator(".paginator").inner_text()
            for url in (f"{web.base_url}/admin/detections/alert/", f"{web.base_url}/admin/inventory/endpoint/",
                        f"{web.base_url}/admin/", endpoint_page):
                page.goto(url)
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, f"{url} is {overflow} px wider than {WIDTH} px"
            page.goto(f"{web.base_url}/admin/detections/alert/")
            screenshot(page, shots, "alerts.png")
            page.goto(f"{web.base_url}/admin/hosts-graph/")
            assert page.locator("svg.console-graph .node").count() == api.total("/hosts")
            screenshot(page, shots, "hosts-graph.png")
            # Ingestion health after 1,000 sources: one screen wide, the rest folded into one line.
            page.goto(f"{web.base_url}/admin/health/")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"the health page is {overflow} px wider than {WIDTH} px"
            assert page.locator("#sources tr").count() <= 1 + 25 + 1  # header, top sources, the folded line
            assert "other sources, added up" in page.locator("#sources-others").inner_text()
            screenshot(page, shots, "health.png")

            # A violation is caught: an image from another origin, refused by the policy, is an error.
            assert not errors, errors
            page.evaluate("() => { const i = new Image(); i.src = 'http://198.51.100.7/pixel.png';"
                          " document.body.appendChild(i); }")
            page.wait_for_timeout(500)
            assert any("Content Security Policy" in e or "CSP violation" in e for e in errors), errors
            errors.clear()
            browser.close()
    finally:
        web.stop()
    assert not errors, errors
    for url, policy in policies.items():
        assert policy and "script-src 'self'" in policy and "unsafe-inline" not in policy, (url, policy)
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, (url, policy)


# Reports every violation the page sees as a console error (the listener above fails the test on it).
VIOLATIONS_REPORTED = """
document.addEventListener('securitypolicyviolation', (e) => {
  console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI);
});
"""


def flood_health(base_url: str, count: int = 1000) -> None:
    """``count`` ingestion requests with distinct User-Agents and no valid key (refused: counted per source)."""
    with requests.Session() as session:
        for n in range(count):
            response = session.post(f"{base_url}/api/v1/log-request/batch", data="[]",
                                    headers={"Authorization": "not-a-key", "User-Agent": f"flood/{n:04d}",
                                             "Content-Type": "application/json"}, timeout=30)
            assert response.status_code == 401
