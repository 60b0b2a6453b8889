"""core.outbound: the address rules shared by webhooks and the test runner, one case per form."""
from __future__ import annotations

import pytest

from core.outbound import Target, address_refusal, embedded_ipv4, ip_normalize, request_head
from webhooks import http

REFUSED = [
    # (address, reason)
    ("127.0.0.1", "a loopback address"),
    ("127.8.9.10", "a loopback address"),
    ("::1", "a loopback address"),
    ("10.0.0.1", "a private address"),
    ("172.16.5.4", "a private address"),
    ("192.168.1.1", "a private address"),
    ("100.64.0.1", "a shared (CGNAT) address"),
    ("fc00::1", "a private (unique local) address"),
    ("fd12:3456::1", "a private (unique local) address"),
    ("169.254.1.1", "a link-local address"),
    ("fe80::1", "a link-local address"),
    ("fe80::1%eth0", "a link-local address"),
    ("169.254.169.254", "a cloud metadata address"),
    ("fd00:ec2::254", "a cloud metadata address"),
    ("168.63.129.16", "a cloud metadata address"),
    ("100.100.100.200", "a cloud metadata address"),
    ("0.0.0.0", "an unspecified address"),
    ("::", "an unspecified address"),
    ("224.0.0.1", "a multicast address"),
    ("ff02::1", "a multicast address"),
    ("255.255.255.255", "a reserved address"),
    ("192.0.2.1", "a documentation address"),
    ("2001:db8::1", "a documentation address"),
    # IPv4-mapped: the very IPv4 address.
    ("::ffff:127.0.0.1", "a loopback address"),
    ("::ffff:169.254.169.254", "a cloud metadata address"),
    ("::ffff:10.0.0.1", "a private address"),
]
EMBEDDED = [
    # (IPv6 form, the IPv4 address it carries)
    ("::ffff:0:7f00:1", "127.0.0.1"),  # IPv4-translated (SIIT)
    ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible
    ("::a00:1", "10.0.0.1"),
    ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64 well-known prefix
    ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
    ("64:ff9b:1::7f00:1", "127.0.0.1"),  # local-use NAT64 (RFC 8215)
    ("64:ff9b:1:2:3:4:c0a8:101", "192.168.1.1"),
    ("2002:7f00:1::1", "127.0.0.1"),  # 6to4
    ("2002:a9fe:a9fe::", "169.254.169.254"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),  # Teredo (client address obfuscated)
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1"),
]
PUBLIC = ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
          "2002:808:808::1"]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_non_public_addresses_are_refused_with_their_reason(address, reason):
    assert address_refusal(address) == reason
    assert http.address_is_private(address)  # the webhooks' guard is the same rule


@pytest.mark.parametrize(("address", "ipv4"), EMBEDDED)
def test_ipv6_forms_embedding_a_refused_ipv4_address_are_refused_as_it(address, ipv4):
    from ipaddress import ip_address

    assert str(embedded_ipv4(ip_address(address))) == ipv4
    reason = address_refusal(address)
    assert reason.startswith(f"an IPv6 form of {ipv4} (")
    assert reason == f"an IPv6 form of {ipv4} ({address_refusal(ipv4)})"
    assert http.address_is_private(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_and_their_ipv6_forms_are_allowed(address):
    assert address_refusal(address) is None
    assert not http.address_is_private(address)


@pytest.mark.parametrize("address", ["64:ff9b:1::808:808", "::8.8.8.8", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"])
def test_non_global_ipv6_prefixes_are_refused_whatever_they_embed(address):
    # Local-use NAT64, IPv4-compatible (deprecated) and Teredo are not global destinations.
    assert address_refusal(address) in ("a local-use NAT64 address", "a reserved address",
                                        "a reserved (IETF protocol) address")


def test_an_ipv4_mapped_address_is_the_ipv4_address_it_maps():
    assert str(ip_normalize("::ffff:127.0.0.1")) == "127.0.0.1"
    assert str(ip_normalize("fe80::1%eth0")) == "fe80::1"


@pytest.mark.parametrize(("method", "headers"), [
    ("GET", [("X-A", "line\r\nInjected: 1")]),
    ("GET", [("Bad Name", "v")]),
    ("GET", [("X-A", "nul\0")]),
    ("GE T", []),
])
def test_a_request_that_cannot_be_sent_as_written_is_refused_before_connecting(method, headers):
    target = Target("http", "example.com", 80, "/", "example.com", None)
    with pytest.raises(ValueError):
        request_head(method, target, headers, None)
