"""Admin login throttling (issue #12, point 8): django-axes locks a username + client address out
after ADMIN_LOGIN_FAILURE_LIMIT failures for ADMIN_LOGIN_COOLOFF_MINUTES; the API is unaffected."""
from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
PASSWORD = "correct horse battery staple"
WRONG = "Tr0ub4dor&3-wrong"
ME, OTHER_IP = "10.0.0.7", "10.0.0.8"


@pytest.fixture
def operators(db) -> list[str]:
    users = get_user_model().objects
    for name in ("adalovelace", "gracehopper"):
        users.create_superuser(name, f"{name}@example.com", PASSWORD)
    return ["adalovelace", "gracehopper"]


def login(username: str, password: str, ip: str = ME, **headers):
    """One admin login form post from ``ip``, on a fresh browser; the response."""
    return Client(REMOTE_ADDR=ip).post(LOGIN, {"username": username, "password": password, "next": "/admin/"},
                                       **headers)


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def fail(username: str, times: int = 5, ip: str = ME, **headers) -> list[int]:
    return [login(username, WRONG, ip, **headers).status_code for _ in range(times)]


def test_five_wrong_passwords_then_the_right_one_is_refused(operators):
    assert fail("adalovelace") == [200, 200, 200, 200, 429]
    response = login("adalovelace", PASSWORD)
    assert response.status_code == 429
    assert not logged_in(response)


def test_the_lockout_page_says_for_how_long_and_how_to_lift_it(operators):
    fail("adalovelace")
    response = login("adalovelace", PASSWORD)
    assert response.status_code == 429
    assert response["Retry-After"] == str(15 * 60)
    page = response.content.decode()
    assert "Too many failed logins" in page
    assert "15 minutes" in page
    assert "manage.py axes_reset" in page


def test_another_user_from_the_same_address_is_unaffected(operators):
    fail("adalovelace")
    assert logged_in(login("gracehopper", PASSWORD))


def test_the_same_user_from_another_address_is_unaffected(operators):
    fail("adalovelace")
    assert logged_in(login("adalovelace", PASSWORD, ip=OTHER_IP))


def test_four_failures_then_a_success_start_the_count_again(operators):
    fail("adalovelace", times=4)
    assert logged_in(login("adalovelace", PASSWORD))
    assert fail("adalovelace", times=4) == [200] * 4
    assert logged_in(login("adalovelace", PASSWORD))


def test_the_lock_ends_after_the_cool_off_and_attempts_during_it_do_not_extend_it(operators):
    fail("adalovelace")
    locked_at = AccessAttempt.objects.get().attempt_time
    assert fail("adalovelace", times=3) == [429] * 3  # refused, without restarting the cool-off
    attempt = AccessAttempt.objects.get()
    assert (attempt.attempt_time, attempt.failures_since_start) == (locked_at, 5)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))
    assert logged_in(login("adalovelace", PASSWORD))


def test_axes_reset_lifts_every_lock(operators):
    fail("adalovelace")
    fail("gracehopper", ip=OTHER_IP)
    call_command("axes_reset", verbosity=0)
    assert logged_in(login("adalovelace", PASSWORD))
    assert logged_in(login("gracehopper", PASSWORD, ip=OTHER_IP))


def test_a_lower_failure_limit_locks_sooner(operators, settings):
    settings.AXES_FAILURE_LIMIT = 2
    assert fail("adalovelace", times=2) == [200, 429]


def test_x_forwarded_for_is_ignored_unless_proxies_are_configured(operators):
    statuses = [login("adalovelace", WRONG, HTTP_X_FORWARDED_FOR=f"203.0.113.{n}").status_code for n in range(5)]
    assert statuses == [200, 200, 200, 200, 429]  # one address (REMOTE_ADDR) whatever the header says
    assert login("adalovelace", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 429


def test_behind_one_trusted_proxy_the_forwarded_address_is_the_client(operators, settings):
    settings.ADMIN_LOGIN_TRUSTED_PROXIES = 1
    proxy = "10.0.0.1"
    # The client's own X-Forwarded-For entries (left) are not believed; the proxy's (rightmost) is.
    for n in range(5):
        login("adalovelace", WRONG, ip=proxy, HTTP_X_FORWARDED_FOR=f"1.2.3.{n}, 203.0.113.9")
    assert login("adalovelace", PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 429
    assert logged_in(login("adalovelace", PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR="203.0.113.10"))
    assert AccessAttempt.objects.get().ip_address == "203.0.113.9"


@pytest.mark.parametrize(("forwarded", "trusted", "expected"), [
    ("203.0.113.9", 0, ME),
    ("203.0.113.9", 1, "203.0.113.9"),
    ("1.2.3.4, 203.0.113.9", 1, "203.0.113.9"),
    ("1.2.3.4, 203.0.113.9", 2, "1.2.3.4"),
    ("203.0.113.9", 2, ME),  # fewer entries than proxies
    ("not-an-address", 1, ME),
    ("", 1, ME),
    ("2001:db8::1", 1, "2001:db8::1"),
])
def test_client_ip(settings, rf, forwarded, trusted, expected):
    from core.admin_login import client_ip

    settings.ADMIN_LOGIN_TRUSTED_PROXIES = trusted
    assert client_ip(rf.get("/", REMOTE_ADDR=ME, HTTP_X_FORWARDED_FOR=forwarded)) == expected


def test_the_api_is_unaffected_by_a_lockout_and_bad_keys_count_for_nothing(operators, client, anon_client):
    fail("adalovelace")
    assert client.get("/api/v1/endpoints", REMOTE_ADDR=ME).status_code == 200
    for _ in range(10):
        response = anon_client.get("/api/v1/endpoints", HTTP_AUTHORIZATION="ask_wrong", REMOTE_ADDR=OTHER_IP)
        assert response.status_code == 401
    assert AccessAttempt.objects.count() == 1  # ada's, from the admin form only
    assert logged_in(login("gracehopper", PASSWORD, ip=OTHER_IP))


def test_failed_logins_log_neither_the_password_nor_the_username(operators, caplog):
    with caplog.at_level(logging.DEBUG):
        fail("adalovelace")
        login("adalovelace", PASSWORD)
    text = "\n".join(f"{r.getMessage()} {r.args}" for r in caplog.records)
    assert "AXES" in text  # the lines are there, masked
    for secret in (WRONG, PASSWORD, "adalovelace", ME):
        assert secret not in text
    attempt = AccessAttempt.objects.get()
    assert WRONG not in attempt.post_data and "adalovelace" not in attempt.post_data
