"""DECISIONS §4 (turn 3): only credential cookies authenticate a request.

The one rule (``inventory.ingest.credentials.is_credential_cookie`` and the ``Cookie``-header helpers)
decides for ingestion's ``isAuthenticatedDetected``, the unauthenticated-data alert, generated specs'
security schemes and test generation. Names below are the ones frameworks, consent managers,
analytics and CDNs set in the wild (their own documentation); values are shaped like theirs.
"""
from __future__ import annotations

import secrets

import pytest

from inventory.ingest.credentials import (
    REDACTED,
    cookie_header_credentials,
    cookie_header_has_credential,
    cookie_pairs,
    is_credential_cookie,
    is_token_shaped,
)

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
       ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
RANDOM_TOKEN = "bC6s5RRbPHmUsLRoYFGf54YeokHmPzU13KEUTZbmyFw"
UUID = "a1b2c3d4-e5f6-4789-abcd-ef0123456789"

# A single-page app's anonymous visitor: consent, language, banner state, analytics, bot management.
CONSENT_ONLY = [
    ("cookieconsent_status", "dismiss"),
    ("OptanonConsent", "isGpcEnabled=0&datestamp=Mon+Jan+12+2026&version=202401.1.0&groups=C0001%3A1"),
    ("OptanonAlertBoxClosed", "2026-01-12T10:11:12.000Z"),
    ("CookieConsent", "{stamp:%27-1%27%2Cnecessary:true%2Cpreferences:false}"),
    ("euconsent-v2", "CP5xyzAP5xyzAAGABCENAqEgAAAAAAAAAAAAAAAAAAAA"),
    ("lang", "en"),
    ("django_language", "fr"),
    ("i18n_redirected", "de"),
    ("theme", "dark"),
    ("cookie-banner-dismissed", "true"),
    ("_ga", "GA1.2.1234567890.1736672000"),
    ("_ga_4XYZ12ABCD", "GS1.1.1736672000.1.1.1736672100.0.0.0"),
    ("_gid", "GA1.2.987654321.1736672000"),
    ("_fbp", "fb.1.1736672000000.1234567890"),
    ("ajs_anonymous_id", UUID),
    ("ajs_user_id", "ada"),
    ("_hjSessionUser_3512345", "eyJpZCI6IjEyMzQ1Njc4LTkwYWItY2RlZiIsImNyZWF0ZWQiOjE3MzY2NzIwMDB9"),
    ("_hjSession_3512345", "eyJpZCI6ImFiY2QiLCJjIjoxNzM2NjcyMDAwfQ=="),
    ("intercom-session-abc123de", RANDOM_TOKEN),
    ("intercom-id-abc123de", UUID),
    ("ai_session", "Wn2Yd|1736672000000|1736672100000"),
    ("_pk_ses.1.1fff", "1"),
    ("mp_0123456789abcdef_mixpanel", "%7B%22distinct_id%22%3A%20%22abc%22%7D"),
    ("__cf_bm", "x1Y2z3" * 20),
    ("_cfuvid", "Abc.Def-1736672000000-0.0.1.1-604800000"),
    ("AWSALB", "Zt3" * 40),
    ("__stripe_mid", UUID + "a1b2c3"),
    ("__stripe_sid", UUID + "d4e5f6"),
    ("csrftoken", secrets.token_hex(32)),
    ("XSRF-TOKEN", RANDOM_TOKEN),
    ("__RequestVerificationToken", RANDOM_TOKEN),
    ("didomi_token", RANDOM_TOKEN),
]

CREDENTIALS = [
    ("sessionid", "8f14e45fceea167a5a36dedd4bea2543"),  # Django
    ("session", "eyJ1c2VyIjoiYWRhIn0.Z3x5Yw.abcdef"),  # Flask
    ("connect.sid", "s%3AnMJ4yOtLPj_6mX8Yw3qIcR2vB9aZkD1e.Fp0kQ7hW3xT9sL2mN6bV8cY4rE1uA5iO0gJ"),  # Express
    ("PHPSESSID", "8kq1r2s3t4u5v6w7x8y9z0a1b2"),
    ("JSESSIONID", "6F5A4D3C2B1A0F9E8D7C6B5A4D3C2B1A"),
    ("ASP.NET_SessionId", "abcdefghijklmnopqrstuvwx"),
    (".AspNetCore.Cookies", "CfDJ8" + RANDOM_TOKEN),
    ("_myshop_session", "abc--def"),  # Rails
    ("laravel_session", "eyJpdiI6Ij"),
    ("remember_web_59ba36addc2b2f9401580f014c7f58ea4e30989d", "eyJpdiI6Ij"),
    ("SESS0123456789abcdef0123456789abcdef", "x"),  # Drupal
    ("wordpress_logged_in_0123456789abcdef", "ada|1736672000|token|hash"),
    ("__Secure-next-auth.session-token", JWT),
    ("sb-abcdefghijklmnop-auth-token", "base64-" + RANDOM_TOKEN),  # Supabase
    ("AWSELBAuthSessionCookie-0", RANDOM_TOKEN),
    ("KEYCLOAK_IDENTITY", JWT),
    ("sid", "abc"),
    ("token", "abc"),
    ("jwt", JWT),
    ("auth", "1f2e3d"),
    ("access_token", "abc"),
    ("user-token", "abc"),
    ("appSession", "abc"),  # Auth0 express-openid-connect
    # Neutral names: the value's shape decides.
    ("prefs", JWT),
    ("uid_v2", secrets.token_urlsafe(32)),
    ("ctx", secrets.token_hex(32)),
]


@pytest.mark.parametrize(("name", "value"), CONSENT_ONLY)
def test_consent_language_theme_analytics_and_cdn_cookies_are_not_credentials(name, value):
    assert is_credential_cookie(name, value) is False


@pytest.mark.parametrize(("name", "value"), CREDENTIALS)
def test_session_and_token_cookies_are_credentials(name, value):
    assert is_credential_cookie(name, value) is True


@pytest.mark.parametrize("value", [JWT, RANDOM_TOKEN, secrets.token_hex(32)])
def test_a_known_non_credential_name_is_never_a_credential_whatever_its_value(value):
    for name in ("cookieconsent_status", "lang", "_ga", "ajs_anonymous_id", "__cf_bm", "csrftoken", "theme"):
        assert is_credential_cookie(name, value) is False, name


@pytest.mark.parametrize("value", [UUID, "dark", "dark-mode-compact-sidebar-layout-v2", "1736672000123456789012345678901234",
                                   "GA1.2.1234567890.1736672000.123456", "en-US,fr;q=0.8", "true", "1"])
def test_a_neutral_name_with_an_ordinary_value_is_not_a_credential(value):
    assert is_credential_cookie("prefs", value) is False
    assert is_token_shaped(value) is False


def test_empty_and_redacted_values_leave_it_to_the_name():
    assert is_credential_cookie("sessionid", "") is False
    assert is_credential_cookie("sessionid", REDACTED) is True
    assert is_credential_cookie("prefs", REDACTED) is False
    assert is_credential_cookie("lang", REDACTED) is False


def test_cookie_header_of_a_consent_only_visitor_carries_no_credential():
    header = "; ".join(f"{name}={value}" for name, value in CONSENT_ONLY)
    assert cookie_pairs(header) is not None and len(cookie_pairs(header)) == len(CONSENT_ONLY)
    assert cookie_header_credentials(header) == []
    assert cookie_header_has_credential(header) is False


def test_cookie_header_with_one_session_cookie_among_consent_carries_a_credential():
    header = "cookieconsent_status=dismiss; lang=en; sessionid=8f14e45fceea167a5a36dedd4bea2543; _ga=GA1.2.3.4"
    assert cookie_header_credentials(header) == ["sessionid"]
    assert cookie_header_has_credential(header) is True


def test_cookie_header_redacted_in_storage_keeps_the_decision_through_names_and_known_shapes():
    # Stored form (names kept, values redacted): the name decides, and names found credentials by
    # their value's shape before redaction are passed as ``known``.
    assert cookie_header_has_credential(f"lang={REDACTED}; sessionid={REDACTED}") is True
    assert cookie_header_has_credential(f"lang={REDACTED}; prefs={REDACTED}") is False
    assert cookie_header_has_credential(f"lang={REDACTED}; prefs={REDACTED}", known={"prefs"}) is True


def test_a_cookie_header_that_is_not_name_value_pairs_counts_as_a_credential():
    # An agent that redacts the whole header (older stored traces too): as before names were kept.
    assert cookie_header_credentials(REDACTED) is None
    assert cookie_header_has_credential(REDACTED) is True
    assert cookie_header_has_credential("") is False
    assert cookie_header_has_credential("   ") is False


def test_quoted_values_and_odd_spacing_are_read():
    assert cookie_pairs(' a="1" ;b=2;;  c = 3 ') == [("a", "1"), ("b", "2"), ("c", "3")]
    assert cookie_header_credentials(f'prefs="{JWT}"; lang=en') == ["prefs"]
