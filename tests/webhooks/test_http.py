"""webhooks.http: the SSRF guard's address rules, URL handling, and the whole-request deadline."""
from __future__ import annotations

import base64
import socket
import threading
import time

import pytest

from webhooks import http


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd00:ec2::254",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::1", "fe80::1%eth0",
])
def test_non_public_addresses_are_private(address):
    assert http.address_is_private(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_not_private(address):
    assert not http.address_is_private(address)


def test_target_keeps_path_query_port_and_host_header():
    target = http.target_parse("https://Hooks.Example.com:8443/a/b?x=1&y=2")
    assert (target.scheme, target.host, target.port) == ("https", "hooks.example.com", 8443)
    assert target.request_target == "/a/b?x=1&y=2"
    assert target.host_header == "hooks.example.com:8443"


def test_default_port_is_left_out_of_the_host_header():
    assert http.target_parse("http://example.com").host_header == "example.com"
    assert http.target_parse("http://example.com").request_target == "/"
    assert http.target_parse("http://[2001:db8::1]/x").host_header == "[2001:db8::1]"


def test_credentials_in_the_url_become_basic_auth():
    target = http.target_parse("https://user:p%40ss@example.com/hook")
    assert target.authorization == "Basic " + base64.b64encode(b"user:p@ss").decode()


@pytest.mark.parametrize("url", ["ftp://example.com/", "http:///x", "http://example.com/\r\nX: y", "http://ex ample.com/"])
def test_bad_urls_are_refused(url):
    with pytest.raises(http.TargetError):
        http.target_parse(url)


def test_private_target_is_refused_at_send_without_the_switch(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    result = http.post_json("http://localhost:9/hook", b"{}", headers={}, timeout=0.25)
    assert result.status_code is None
    assert result.error.startswith("Target refused: localhost resolves to a loopback")


def test_the_services_own_broker_is_refused_at_send_even_with_the_switch(settings):
    # A webhook row written around the API (admin, database) still never reaches Redis.
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    result = http.post_json("http://127.0.0.1:6379/hook", b"{}", headers={}, timeout=0.25)
    assert result.status_code is None
    assert result.error.startswith("Target refused: 127.0.0.1:6379 is this service's own broker")


@pytest.fixture
def slow_drip_server():
    """Answers one byte of the status line every 100 ms: each read succeeds within a per-read
    timeout, but the whole answer takes seconds."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    stop = threading.Event()

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                if stop.is_set():
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    stop.set()
    server.close()


def test_the_deadline_covers_the_whole_request_not_each_read(settings, slow_drip_server):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True

    result = http.post_json(slow_drip_server, b"{}", headers={}, timeout=0.25)

    assert result.timed_out
    assert result.status_code is None
    assert result.duration_ms < 1000  # the drip takes about 4 s; per-read timeouts would wait for all of it
