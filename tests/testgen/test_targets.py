"""Where tests may be sent: refused targets send nothing (not one connection), listed ones are tested,
the service's own database and broker never are, names are resolved once per run, and runs that
refer to environment variables they may not read fail before sending (in-process; the same through
a real worker in test_run_safety.py)."""
from __future__ import annotations

import ipaddress
import socket

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.outbound import TargetRefused, target_parse
from testgen.crypto import secret_encrypt
from testgen.models import TestingEnvironment, TestRun
from testgen.runner import tests_run
from testgen.services import RunEnvironment, test_run_execute
from testgen.targets import AllowedTargets, TargetGuard, service_endpoints
from tests.testgen.conftest import run_command
from tests.support.receiver import Answer, Receiver

pytestmark = pytest.mark.django_db
DB = {"default": {"ENGINE": "django.db.backends.postgresql", "HOST": "127.0.0.1", "PORT": "5432"}}
PROBE = {"id": "t", "name": "probe", "endpoint": "/probe", "method": "GET", "templateName": "CUSTOM",
         "requests": [{"description": "a", "url": "{{baseUrl}}/a"}, {"description": "b", "url": "{{baseUrl}}/b"},
                      {"description": "c", "url": "{{baseUrl}}/c"}],
         "assertions": [{"type": "status", "field": "", "condition": "equals", "value": 200}]}


@pytest.fixture
def dns(monkeypatch) -> dict:
    """Names this test resolves itself: name -> list of addresses (one answer per call, the last repeats)."""
    answers: dict[str, list[str]] = {}
    calls: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            calls.append(host)
            queue = answers[host]
            if not queue:
                raise socket.gaierror("no such name")
            address = queue.pop(0) if len(queue) > 1 else queue[0]
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    answers["__calls__"] = calls
    return answers


def guard(*allowed: str, brokers=()) -> TargetGuard:
    return TargetGuard(AllowedTargets.parse(list(allowed)), service_endpoints(databases=DB, broker_urls=list(brokers)))


def environment(base_url: str) -> RunEnvironment:
    return RunEnvironment(base_url=base_url, values={"baseUrl": base_url}, timeout_ms=2000, retries=0)


class TestPolicy:
    def test_allowed_targets_are_host_names_and_cidrs(self):
        allowed = AllowedTargets.parse(["Staging.Internal.", "10.0.0.0/8", "[::1]", " 192.168.1.5 ", ""])
        assert allowed.hosts == {"staging.internal"}
        assert [str(n) for n in allowed.networks] == ["10.0.0.0/8", "::1/128", "192.168.1.5/32"]
        assert allowed.allows("STAGING.internal", ipaddress.ip_address("10.9.9.9"))
        assert allowed.allows("x", ipaddress.ip_address("10.1.2.3"))
        assert not allowed.allows("x", ipaddress.ip_address("172.16.0.1"))

    @pytest.mark.parametrize("entry", ["http://10.0.0.1", "10.0.0.0/33", "a b", "*.internal"])
    def test_an_entry_that_is_no_host_or_cidr_is_a_configuration_error(self, entry):
        with pytest.raises(ImproperlyConfigured, match="TESTING_ALLOWED_TARGETS"):
            AllowedTargets.parse([entry])

    @pytest.mark.parametrize("host", ["", "/var/run/postgresql", "localhost", "127.0.0.1", "::1"])
    def test_a_loopback_or_socket_database_host_protects_every_loopback_address(self, host):
        [db] = service_endpoints(databases={"default": {"ENGINE": "django.db.backends.postgresql", "HOST": host,
                                                        "PORT": ""}}, broker_urls=[])
        assert db.port == 5432
        for address in ("127.0.0.1", "127.0.0.53", "::1", "0.0.0.0"):
            assert any(ipaddress.ip_address(address) in net for net in db.networks), address

    @pytest.mark.parametrize("db_host", ["", "127.0.0.1", "10.9.8.7"])
    def test_a_database_on_this_machine_is_protected_on_every_address_of_the_machine(self, dns, db_host):
        # A server on this machine may listen on all its addresses: loopback and its own ones.
        dns[socket.gethostname()] = ["10.9.8.7"]
        [db] = service_endpoints(databases={"default": {"ENGINE": "x.postgresql", "HOST": db_host, "PORT": "5432"}},
                                 broker_urls=[])
        for address in ("127.0.0.1", "::1", "10.9.8.7"):
            with pytest.raises(TargetRefused, match="own database"):
                TargetGuard(AllowedTargets.parse(["0.0.0.0/0", "::/0"]), [db]).vet(
                    target_parse(f"http://[{address}]:5432/" if ":" in address else f"http://{address}:5432/"))

    def test_a_local_database_is_protected_on_every_interface_address_whatever_the_host_name_says(
            self, dns, monkeypatch):
        # The host name may resolve to loopback only (it does here) while PostgreSQL listens on
        # 0.0.0.0: every interface address of the machine counts as the database's.
        from core import protected

        dns[socket.gethostname()] = ["127.0.0.1"]
        monkeypatch.setattr(protected, "interface_addresses",
                            lambda: {ipaddress.ip_address("192.0.2.2"), ipaddress.ip_address("fd00::2")})
        [db] = service_endpoints(databases={"default": {"ENGINE": "x.postgresql", "HOST": "", "PORT": "5432"}},
                                 broker_urls=[])
        for url in ("http://192.0.2.2:5432/", "http://[fd00::2]:5432/", "http://[::ffff:192.0.2.2]:5432/"):
            with pytest.raises(TargetRefused, match="own database"):
                TargetGuard(AllowedTargets.parse(["0.0.0.0/0", "::/0"]), [db]).vet(target_parse(url))

    def test_this_machines_interface_addresses_are_read(self):
        from core.protected import interface_addresses

        assert ipaddress.ip_address("127.0.0.1") in interface_addresses()  # the loopback interface

    def test_brokers_are_protected_at_their_port_and_files_and_sqlite_have_no_address(self, dns):
        dns["redis.internal"] = ["10.0.0.7"]
        found = service_endpoints(
            databases={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "x.sqlite3"}},
            broker_urls=[("broker", "redis://redis.internal:6380/0"), ("Redis", "filesystem://"), ("x", "")])
        assert [(p.what, p.port, [str(n) for n in p.networks]) for p in found] == [
            ("broker", 6380, ["10.0.0.7/32"])]

    def test_a_database_name_that_does_not_resolve_here_is_protected_by_name(self, dns):
        dns["db.internal"] = []
        [db] = service_endpoints(databases={"default": {"ENGINE": "x.postgresql", "HOST": "db.internal",
                                                        "PORT": "5433"}}, broker_urls=[])
        assert (db.name, db.port, db.networks) == ("db.internal", 5433, ())
        dns["db.internal"] = ["10.1.1.1"]
        with pytest.raises(TargetRefused, match="own database"):
            TargetGuard(AllowedTargets.parse(["db.internal"]), [db]).vet(target_parse("http://db.internal:5433/"))


class TestRefusedTargets:
    @pytest.mark.parametrize(("base_url", "reason"), [
        ("http://127.0.0.1:{port}", "127.0.0.1:{port} is a loopback address"),
        ("http://[::ffff:127.0.0.1]:{port}", "::ffff:127.0.0.1:{port} is a loopback address"),
        ("http://[::127.0.0.1]:{port}", "is an IPv6 form of 127.0.0.1 (a loopback address)"),
        ("http://[64:ff9b::7f00:1]:{port}", "is an IPv6 form of 127.0.0.1 (a loopback address)"),
        ("http://[64:ff9b:1::7f00:1]:{port}", "is an IPv6 form of 127.0.0.1 (a loopback address)"),
        ("http://[2002:7f00:1::]:{port}", "is an IPv6 form of 127.0.0.1 (a loopback address)"),
        ("http://169.254.169.254:{port}", "169.254.169.254:{port} is a cloud metadata address"),
        ("http://[fd00:ec2::254]:{port}", "is a cloud metadata address"),
        ("http://10.1.2.3:{port}", "10.1.2.3:{port} is a private address"),
        ("http://100.64.0.1:{port}", "is a shared (CGNAT) address"),
        ("http://[fd12::1]:{port}", "is a private (unique local) address"),
        ("http://0.0.0.0:{port}", "is an unspecified address"),
    ])
    def test_a_refused_base_url_sends_nothing_at_all(self, receiver, connections, base_url, reason):
        url = base_url.format(port=receiver.port)
        with pytest.raises(TargetRefused) as refused:
            tests_run(tests=[PROBE], environment=environment(url), guard=guard())
        assert reason.format(port=receiver.port) in str(refused.value)
        assert "TESTING_ALLOWED_TARGETS" in str(refused.value)
        assert (receiver.connections, connections) == (0, [])

    def test_a_listed_target_is_tested(self, receiver):
        results = tests_run(tests=[PROBE], environment=environment(f"http://127.0.0.1:{receiver.port}"),
                            guard=guard("127.0.0.0/8"))
        assert results[0].outcome == "PASSED", results[0].message
        assert receiver.connections == 3

    def test_a_listed_name_is_tested_whatever_it_resolves_to(self, receiver, dns):
        dns["staging.internal"] = ["127.0.0.1"]
        results = tests_run(tests=[PROBE], environment=environment(f"http://staging.internal:{receiver.port}"),
                            guard=guard("staging.internal"))
        assert results[0].outcome == "PASSED"
        assert b"Host: staging.internal:" in receiver.raw()

    @pytest.mark.parametrize("base_url", ["http://127.0.0.1:5432", "http://localhost:5432", "http://[::1]:5432",
                                          "http://127.0.0.2:5432", "http://[::ffff:127.0.0.1]:5432",
                                          "http://[64:ff9b::7f00:1]:5432", "http://0.0.0.0:5432"])
    def test_the_own_database_is_refused_even_when_listed(self, connections, base_url):
        with pytest.raises(TargetRefused, match="is this service's own database \\(default\\); it is never tested"):
            tests_run(tests=[PROBE], environment=environment(base_url),
                      guard=guard("localhost", "127.0.0.0/8", "::/0", "0.0.0.0/0"))
        assert connections == []

    def test_the_own_broker_is_refused_even_when_listed(self, receiver, connections):
        # The broker stands at the receiver's address and port: not one byte reaches it.
        brokers = [("broker", f"redis://127.0.0.1:{receiver.port}/3")]
        with pytest.raises(TargetRefused, match="own broker"):
            tests_run(tests=[PROBE], environment=environment(f"http://localhost:{receiver.port}"),
                      guard=guard("localhost", "127.0.0.1", brokers=brokers))
        assert (receiver.connections, connections) == (0, [])

    def test_a_request_to_a_refused_target_stops_the_run_before_it_is_sent(self, receiver, connections):
        # baseUrl is fine; one request of the second test points at the metadata service.
        sneaky = {**PROBE, "id": "t2", "requests": [{"description": "m", "url": "http://169.254.169.254/latest"}]}
        with pytest.raises(TargetRefused, match="cloud metadata"):
            tests_run(tests=[PROBE, sneaky], environment=environment(f"http://127.0.0.1:{receiver.port}"),
                      guard=guard("127.0.0.1"))
        assert receiver.connections == 3 and "169.254.169.254" not in connections

    def test_a_name_is_resolved_once_per_run_and_connected_to_as_vetted(self, receiver, dns, connections):
        # A rebinding name: vetted as 127.0.0.1 (listed), then it would answer the metadata address.
        dns["rebind.test"] = ["127.0.0.1", "169.254.169.254"]
        results = tests_run(tests=[PROBE, PROBE], environment=environment(f"http://rebind.test:{receiver.port}"),
                            guard=guard("127.0.0.1"))
        assert [r.outcome for r in results] == ["PASSED", "PASSED"]
        assert dns["__calls__"] == ["rebind.test"]
        assert set(connections) == {"127.0.0.1"} and receiver.connections == 6

    def test_redirects_are_answers_never_followed(self, connections):
        elsewhere = Receiver()
        redirecting = Receiver(Answer(302, location=f"http://127.0.0.1:{elsewhere.port}/admin"))
        try:
            test = {**PROBE, "assertions": [{"type": "status", "field": "", "condition": "equals", "value": 302}]}
            results = tests_run(tests=[test], environment=environment(f"http://127.0.0.1:{redirecting.port}"),
                                guard=guard("127.0.0.1"))
            assert results[0].outcome == "PASSED"
            assert (redirecting.connections, elsewhere.connections) == (3, 0)
        finally:
            elsewhere.close()
            redirecting.close()


class TestApiRunsInProcess:
    """The worker's side, called directly (the real-worker versions are in test_run_safety.py)."""

    def test_a_refused_base_url_fails_the_run_with_the_reason(self, client, receiver, settings, shop, set_env,
                                                              django_capture_on_commit_callbacks):
        settings.TESTING_ALLOWED_TARGETS = []
        set_env(f"http://127.0.0.1:{receiver.port}")
        with django_capture_on_commit_callbacks(execute=False):
            run_id = client.post("/api/v1/testing/runs", {"host": "shop.test"}, format="json").json()["uuid"]
        run = test_run_execute(run_id=run_id)
        assert run.status == TestRun.Status.FAILED
        assert run.error.startswith(f"Target refused: 127.0.0.1:{receiver.port} is a loopback address")
        assert receiver.connections == 0
        assert client.get(f"/api/v1/testing/runs/{run_id}").json()["error"] == run.error

    def test_an_environment_variable_in_the_environment_fails_the_run(self, client, receiver, shop, set_env,
                                                                      django_capture_on_commit_callbacks):
        set_env(f"http://127.0.0.1:{receiver.port}")
        TestingEnvironment.objects.update(auth_token_encrypted=secret_encrypt("Bearer {{env.SECRET_KEY}}"))
        with django_capture_on_commit_callbacks(execute=False):
            run_id = client.post("/api/v1/testing/runs", {"host": "shop.test"}, format="json").json()["uuid"]
        run = test_run_execute(run_id=run_id)
        assert run.status == TestRun.Status.FAILED
        assert run.error.startswith("The run was not started: {{env.SECRET_KEY}} (in authToken) refers to an "
                                    "environment variable")
        assert receiver.connections == 0


class TestCommandRuns:
    def test_an_allowlisted_variable_is_resolved(self, settings, monkeypatch, shop, serve, set_env):
        settings.TESTING_ENV_ALLOWLIST = ["SHOP_TOKEN"]
        monkeypatch.setenv("SHOP_TOKEN", "tok-alice")
        set_env(serve(vulnerable=False).base_url)
        TestingEnvironment.objects.update(auth_token_encrypted=secret_encrypt("Bearer {{env.SHOP_TOKEN}}"))
        status, output = run_command("--endpoint", "/api/users/{param1}", "--method", "GET", "--type", "BOLA")
        assert status == 0, output  # the own-object precondition needs alice's real token
        assert "1 passed, 0 failed" in output

    def test_a_variable_not_in_the_allowlist_is_an_error_naming_it(self, settings, monkeypatch, shop, receiver,
                                                                    set_env, tmp_path):
        settings.TESTING_ENV_ALLOWLIST = ["SHOP_TOKEN"]
        monkeypatch.setenv("SHOP_TOKEN", "tok-alice")
        monkeypatch.setenv("SECRET_KEY", "the-real-secret-value")
        set_env(f"http://127.0.0.1:{receiver.port}")
        tests = tmp_path / "tests.json"
        tests.write_text('{"id": "x", "name": "x", "endpoint": "/x", "method": "GET", "requests": [{"description": '
                         '"d", "headers": {"X-A": "{{env.SHOP_TOKEN}}", "X-B": "{{env.SECRET_KEY}}"}}]}')
        from django.core.management.base import CommandError

        with pytest.raises(CommandError) as error:
            run_command("--file", str(tests))
        assert str(error.value) == ("The run was not started: {{env.SECRET_KEY}} (in test x) is not in "
                                    "TESTING_ENV_ALLOWLIST; list the variable there to let run_security_tests read "
                                    "it. Nothing was sent.")
        assert receiver.connections == 0
        run = TestRun.objects.get()
        assert (run.source, run.status, run.error) == ("CLI", "FAILED", str(error.value))
