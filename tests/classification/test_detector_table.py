"""Table tests for classification.detector: positives and near misses per data class.

Pure Python (no Django): the detector is framework-free so it can be tested and
benchmarked on its own.
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from stdnum import luhn

from classification.detector import (
    AGENT_PATTERNS,
    BUILTIN_CLASSES,
    METLO_CLASS_NAMES,
    CustomRule,
    Detector,
    key_hints,
    normalize_class_name,
    normalize_key,
)

ALL = Detector(BUILTIN_CLASSES)


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _with_luhn(digits: str) -> str:
    """``digits`` plus the check digit that makes it pass Luhn."""
    return digits + luhn.calc_check_digit(digits)


JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
JWE = ".".join([_b64url({"alg": "RSA-OAEP", "enc": "A256GCM"}), "OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZ",
                "48V1_ALb6US04U3b", "5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6ji",
                "XFBoMYUZodetZdvTiFvSkQ"])
JWT_WITHOUT_ALG = ".".join([_b64url({"typ": "JWT"}), _b64url({"sub": "1"}), "c2lnbmF0dXJl"])
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
UUID = "550e8400-e29b-41d4-a716-446655440000"

# (class, key, value): ``class`` must be among the detected classes.
POSITIVES: list[tuple[str, str | None, object]] = [
    # email
    ("email", "email", "john.doe@example.com"),
    ("email", None, "a+tag@sub.example.co.uk"),
    ("email", "from", "Jane Doe <jane@example.org>"),
    ("email", "message", "contact me at bob_smith@mail.example.com, thanks"),
    ("email", "contact", "o'brien@example.ie"),
    ("email", None, "user@xn--80ak6aa92e.com"),
    # ssn
    ("ssn", None, "123-45-6789"),
    ("ssn", "notes", "536-90-4399"),
    ("ssn", "ssn", "123456789"),
    ("ssn", "socialSecurityNumber", "123 45 6789"),
    ("ssn", "SSN", 123456789),
    ("ssn", "social_security_number", 12345678),  # leading zero lost in JSON: 012-34-5678
    # credit_card
    ("credit_card", None, "4111111111111111"),
    ("credit_card", None, "4111 1111 1111 1111"),
    ("credit_card", None, "5555-5555-5555-4444"),
    ("credit_card", None, "2223003122003222"),  # Mastercard 2-series
    ("credit_card", None, "378282246310005"),  # Amex
    ("credit_card", None, "3782 822463 10005"),
    ("credit_card", None, "6011111111111117"),  # Discover
    ("credit_card", None, "3530111333300000"),  # JCB
    ("credit_card", None, "30569309025904"),  # Diners
    ("credit_card", None, "4222222222222"),  # Visa, 13 digits
    ("credit_card", None, 4012888888881881),  # sent as a JSON number
    ("credit_card", "cardNumber", _with_luhn("606282678627663")),  # Hipercard: unknown issuer, card key
    ("credit_card", "card-number", "5105 1051 0510 5100"),
    ("credit_card", None, " ".join([_with_luhn("411111111111111111")[i:i + 4] for i in range(0, 19, 4)])),
    ("credit_card", "pan", _with_luhn("411111111111111111")),  # 19 digits, undivided, card key
    # phone_number
    ("phone_number", None, "+1 650-253-0000"),
    ("phone_number", None, "(650) 253-0000"),
    ("phone_number", None, "650-253-0000"),
    ("phone_number", None, "650.253.0000"),
    ("phone_number", None, "+44 20 7946 0958"),
    ("phone_number", None, "+33 1 42 68 53 00"),
    ("phone_number", None, "+16502530000"),
    ("phone_number", "phone", "6502530000"),
    ("phone_number", "mobileNumber", 6502530000),
    ("phone_number", "phone", "+1 (650) 253-0000 ext. 123"),
    ("phone_number", "customer_phone", "447911123456"),  # international without "+"
    ("phone_number", None, "(650) 253-0000 ext. 123"),
    ("phone_number", None, "+44 207 946 0958"),  # non-canonical grouping is fine after "+"
    # ip_address
    ("ip_address", None, "192.168.0.1"),
    ("ip_address", "client", "8.8.8.8"),
    ("ip_address", None, "2001:db8::1"),
    ("ip_address", None, "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("ip_address", None, "fe80::1%eth0"),
    ("ip_address", None, "::ffff:192.0.2.128"),
    ("ip_address", "X-Forwarded-For", "203.0.113.7, 10.0.0.1"),
    ("ip_address", "host", "10.0.0.1:8080"),
    ("ip_address", None, "[2001:db8::1]:443"),
    # mac_address
    ("mac_address", None, "00:1A:2B:3C:4D:5E"),
    ("mac_address", None, "00-1a-2b-3c-4d-5e"),
    ("mac_address", None, "001a.2b3c.4d5e"),
    ("mac_address", "mac", "a4:83:e7:12:34:56"),
    # authentication_token
    ("authentication_token", None, JWT),
    ("authentication_token", None, JWE),
    ("authentication_token", "Authorization", "Bearer " + JWT),
    ("authentication_token", "Authorization", "Bearer mF_9.B5f-4.1JqM"),
    ("authentication_token", "Authorization", "Basic dXNlcjpwYXNzd29yZA=="),
    ("authentication_token", "Cookie", f"session={JWT}; Path=/; HttpOnly"),
    ("authentication_token", "access_token", "2YotnFZFEjr1zCsicMWpAA"),
    ("authentication_token", "refreshToken", "tGzv3JOkF0XG5Qx2TlKWIA"),
    ("authentication_token", "session_id", "8f14e45fceea167a5a36dedd4bea2543"),
    ("authentication_token", "X-Auth-Token", "a1b2c3d4e5f6g7h8i9j0k1l2"),
    ("authentication_token", "Cookie", "theme=dark; sessionid=8f14e45fceea167a5a36dedd4bea2543"),
    ("authentication_token", "Set-Cookie", "JSESSIONID=1A2B3C4D5E6F7A8B9C0D1E2F; Path=/; HttpOnly"),
    # api_key
    ("api_key", None, "AKIAIOSFODNN7EXAMPLE"),
    ("api_key", None, "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("api_key", None, "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
    ("api_key", None, "rk_live_51H8xYzAbCdEfGhIjKlMnOp"),
    ("api_key", None, GITHUB_TOKEN),
    ("api_key", None, "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("api_key", None, "AIzaSyD-1234567890abcdefghijklmnopqrstu"),
    ("api_key", None, "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("api_key", "config", "key=AKIAIOSFODNN7EXAMPLE;region=us-east-1"),
    ("api_key", "Authorization", "Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("api_key", "X-API-Key", "3f9a7c2e8b1d4f6a9c0e2b4d6f8a1c3e"),
    ("api_key", "client_secret", "Zr8Kq2mNvX7pLw4sTy6uB1cD"),
    ("api_key", "pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"),
    # dob
    ("dob", "dob", "1990-05-17"),
    ("dob", "dateOfBirth", "05/17/1990"),
    ("dob", "birth_date", "17.05.1990"),
    ("dob", "birthday", "May 17, 1990"),
    ("dob", "DOB", "17 May 1990"),
    ("dob", "birthDate", 19900517),
    ("dob", "date_of_birth", "1990-05-17T00:00:00.000Z"),
    ("dob", "dob", "01/02/90"),
    # address
    ("address", "address", "123 Main St"),
    ("address", "street", "Baker Street"),
    ("address", "shippingAddress", "1600 Amphitheatre Parkway, Mountain View, CA 94043"),
    ("address", "address_line_1", "221B Baker Street"),
    ("address", "addr", "Flat 4, 10 Downing Street"),
    ("address", None, "1600 Pennsylvania Avenue NW, Washington, DC 20500"),
    ("address", "note", "Ship to 742 Evergreen Terrace, Springfield"),
    # driver_license
    ("driver_license", "driverLicense", "D1234567"),
    ("driver_license", "drivers_license_number", "A123-4567-8901"),
    ("driver_license", "driving_licence", "MORGA753116SM9IJ"),
    ("driver_license", "DriverLicenseNo", "S12345678"),
    ("driver_license", "dl_number", 123456789),
    # passport_number
    ("passport_number", "passportNumber", "X1234567"),
    ("passport_number", "passport", "123456789"),
    ("passport_number", "passport_no", "C01X00T47"),
    ("passport_number", "passport", 123456789),
    # user_id
    ("user_id", "user_id", 12345),
    ("user_id", "userId", "usr_8f3k2"),
    ("user_id", "customerId", UUID),
    ("user_id", "uid", "1a2b3c"),
    ("user_id", "accountId", "acct_1032D82eZvKYlo2C"),
    ("user_id", "UserID", "42"),
    # password (DECISIONS §5: a non-empty, non-placeholder value under a password/secret/hash-like key)
    ("password", "password", "hunter2"),
    ("password", "userPassword", "correct horse battery staple"),
    ("password", "password_hash", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
    ("password", "secret", "s3cr3t!"),
    ("password", "pwd", 123456),
    ("password", "notes", "migrated hash $2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW ok"),
    # free text (DECISIONS §5): the whole-value validators on values embedded in a longer string
    ("credit_card", "note", "Customer paid with 4111 1111 1111 1111, refund pending"),
    ("ssn", "comment", "SSN on file: 536-90-4399 (verified)"),
    ("ssn", None, "123.45.6789"),  # dotted
    ("ssn", "note", "social security number 123 45 6789"),
    ("phone_number", "description", "Call us at (650) 253-0000 between 9 and 5"),
    ("ip_address", "message", "login failed from 203.0.113.7 at 10:22:33"),
    ("ip_address", "X-Forwarded-For", "203.0.113.7, hello"),  # was a near miss before free-text search
]

# (class, key, value): ``class`` must NOT be among the detected classes.
NEAR_MISSES: list[tuple[str, str | None, object]] = [
    # email
    ("email", None, "hello world"),
    ("email", None, "john.doe@"),
    ("email", None, "@example.com"),
    ("email", None, "a@b"),
    ("email", None, "user@localhost"),
    ("email", None, "a@@example.com"),
    ("email", None, "user@example.c"),
    ("email", "src", "icon@2x.png"),
    ("email", "handle", "@jdoe"),
    # ssn
    ("ssn", None, "000-12-3456"),
    ("ssn", None, "666-12-3456"),
    ("ssn", None, "900-12-3456"),
    ("ssn", None, "123-00-4567"),
    ("ssn", None, "123-45-0000"),
    ("ssn", None, "078-05-1120"),  # the Woolworth wallet number
    ("ssn", None, "123456789"),  # nine digits without an SSN key
    ("ssn", "zip", 123456789),
    ("ssn", "order_id", "123456789"),
    ("ssn", "ssn", "12-345-6789"),
    # credit_card
    ("credit_card", None, "4111111111111112"),  # fails Luhn
    ("credit_card", None, "1234567812345678"),
    ("credit_card", None, "0000000000000000"),
    ("credit_card", None, _with_luhn("911111111111111")),  # Luhn-valid, no issuer
    ("credit_card", None, _with_luhn("4111111111111")),  # Luhn-valid Visa prefix, 14 digits
    ("credit_card", None, "4111-1111-1111-1111-1111"),
    ("credit_card", "order_id", "4111111111111111"),
    ("credit_card", "orderNumber", 4111111111111111),
    ("credit_card", None, UUID),
    ("credit_card", None, "4111 1111 1111 111"),
    ("credit_card", None, _with_luhn("411111111111111111")),  # undivided 19 digits: an int64 id
    ("credit_card", "ids", int(_with_luhn("411111111111111111"))),
    # phone_number
    ("phone_number", None, "6502530000"),  # bare digits, no phone key
    ("phone_number", None, 6502530000),
    ("phone_number", "order_id", 6502530000),
    ("phone_number", None, "2023-01-15"),
    ("phone_number", None, "12/05/2023"),
    ("phone_number", None, "192.168.100.200"),
    ("phone_number", None, "123-456-7890"),  # no such area code
    ("phone_number", None, "4111 1111 1111 1111"),
    ("phone_number", None, "123-45-6789"),
    ("phone_number", None, UUID),
    ("phone_number", None, "1.2.3"),
    ("phone_number", "phone", "12345"),
    ("phone_number", None, "2404-49-2473"),  # valid digits, but not grouped like a phone
    ("phone_number", None, "650-25-30000"),
    # ip_address
    ("ip_address", None, "1.2.3"),
    ("ip_address", None, "256.1.1.1"),
    ("ip_address", None, "01.02.03.04"),
    ("ip_address", None, "1.2.3.4.5"),
    ("ip_address", "version", "1.2.3.4"),
    ("ip_address", "appVersion", "10.0.0.1"),
    ("ip_address", None, "12:30:45"),
    ("ip_address", None, "dead::beef"),
    ("ip_address", None, "00:1A:2B:3C:4D:5E"),
    ("ip_address", "X-Forwarded-For", "203.0.113, hello"),
    ("ip_address", None, "2024-01-31T12:00:00.000Z"),
    # mac_address
    ("mac_address", None, "00:1A:2B:3C:4D"),
    ("mac_address", None, "00:1A-2B:3C:4D:5E"),
    ("mac_address", None, "00:00:00:00:00:00"),
    ("mac_address", None, "ff:ff:ff:ff:ff:ff"),
    ("mac_address", None, "0G:1A:2B:3C:4D:5E"),
    ("mac_address", None, "12:30:45"),
    # authentication_token
    ("authentication_token", None, "eyJhbGciOiJIUzI1NiJ9.not a token"),
    ("authentication_token", None, JWT_WITHOUT_ALG),
    ("authentication_token", "token_type", "Bearer"),
    ("authentication_token", "access_token", "abc"),
    ("authentication_token", "access_token", "this-is-not-a-secret-value"),
    ("authentication_token", "next_page_token", "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA"),
    ("authentication_token", "NextToken", "AAAAAKDUYGRCY2ZmMmM5YjQzOTg0NWJj"),
    ("authentication_token", "csrf_token", "k3J9xQ2mV8pL4wT6yB1nC5dF"),
    ("authentication_token", "max_tokens", 1024),
    ("authentication_token", "Authorization", "Basic notbase64!!"),
    ("authentication_token", "Authorization", "Basic aGVsbG8gd29ybGQ="),  # no "user:" part
    ("authentication_token", "Authorization", "Bearer short"),
    ("authentication_token", "Authorization", "Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc"),  # an API key
    ("authentication_token", "description", "a.b.c"),
    ("authentication_token", "session_id", True),
    ("authentication_token", "Cookie", "theme=dark; lang=en; _ga=GA1.2.1234567890.1700000000"),
    ("authentication_token", "Cookie", "csrftoken=k3J9xQ2mV8pL4wT6yB1nC5dF"),
    # api_key
    ("api_key", None, "AKIAIOSFODNN7EXAMPL"),
    ("api_key", None, "XAKIAIOSFODNN7EXAMPLE"),
    ("api_key", None, "pk_live_4eC39HqLyjWDarjtT1zdp7dc"),  # publishable, meant to be public
    ("api_key", None, "sk-some-very-long-kebab-case-identifier-here"),
    ("api_key", "api_key", "changeme"),
    ("api_key", "apiKey", "your-api-key-goes-here-please"),
    ("api_key", "secret_question", "What is your pet's name 2?"),
    ("api_key", "secret", True),
    ("api_key", "access_token", JWT),
    # dob
    ("dob", "createdAt", "1990-05-17"),
    ("dob", None, "1990-05-17"),
    ("dob", "updated_at", "2024-01-31T12:00:00.000Z"),
    ("dob", "dob", "2999-01-01"),
    ("dob", "dob", "1990-13-45"),
    ("dob", "dob", "1850-01-01"),
    ("dob", "dob", "not a date"),
    ("dob", "birth_year", 1990),
    ("dob", "dob_verified", True),
    # address
    ("address", "emailAddress", "john@example.com"),
    ("address", "ipAddress", "192.168.0.1"),
    ("address", "walletAddress", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"),
    ("address", "address", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"),
    ("address", "remote_address", "10.0.0.1:5000"),
    ("address", "address", "N/A"),
    ("address", "address", "unknown"),
    ("address", None, "I walked 3 miles down the road"),
    ("address", None, "hello world"),
    ("address", "description", "Version 2 of the API"),
    # driver_license
    ("driver_license", "driverLicense", "ABCDEFG"),
    ("driver_license", "driverLicense", "D12"),
    ("driver_license", "driverLicense", "D1234567890123456789012"),
    ("driver_license", "license", "D1234567"),
    ("driver_license", "driver_id", "D1234567"),
    ("driver_license", None, "D1234567"),
    # passport_number
    ("passport_number", "passportNumber", "12345"),
    ("passport_number", "passport", "ABCDEFGHI"),
    ("passport_number", "passport", "1234567890"),
    ("passport_number", "passportExpiry", "2030-01-01"),
    ("passport_number", "passportCountry", "US"),
    ("passport_number", None, "X1234567"),
    # user_id
    ("user_id", "id", 12345),
    ("user_id", "orderId", 12345),
    ("user_id", None, 12345),
    ("user_id", "userName", "jdoe"),
    ("user_id", "user_id", "john"),
    ("user_id", "user_id", "not an id 123"),
    ("user_id", "user_id", True),
    # password
    ("password", "password", "********"),
    ("password", "password", "[REDACTED]"),
    ("password", "password", "{{password}}"),
    ("password", "password", "This field is required."),
    ("password", "passwordChangedAt", "2024-01-31T12:00:00Z"),
    ("password", "boarding_pass", "M1DOE/JOHN EABC123 SFOJFKUA 0123"),
    ("password", "hasPassword", True),
    ("password", "client_secret", "Zr8Kq2mNvX7pLw4sTy6uB1cD"),  # an API key, not a password
    # free text: near misses of the embedded values
    ("credit_card", "note", "Order 4111111111111112 shipped"),
    ("ssn", "note", "ticket 123 45 6789 reopened"),
    ("phone_number", "log", "2024-01-15 10:22:33 job 4521 done"),
    ("ip_address", "description", "Upgraded to version 10.2.0.1 today"),
]

# Ordinary API values that must not be classified at all.
CLEAN: list[tuple[str | None, object]] = [
    ("greeting", "hello world"),
    ("id", 18342),
    ("order_id", 1234567890123),
    ("orderId", "ORD-2024-000123"),
    ("id", UUID),
    (None, UUID),
    ("createdAt", "2024-01-31T12:00:00.000Z"),
    ("date", "2024-01-31"),
    ("timestamp", 1706702400000),
    ("price", 19.99),
    ("ratio", 3.14),
    ("enabled", True),
    ("deleted", False),
    ("middleName", None),
    ("name", ""),
    ("name", "   "),
    ("version", "1.2.3"),
    (None, "1.2.3"),
    ("Content-Type", "application/json"),
    ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"),
    ("url", "https://example.com/products/18342?ref=home"),
    ("status", "active"),
    (None, "18342"),
    ("count", 3),
    ("hash", "d41d8cd98f00b204e9800998ecf8427e"),
    ("title", "Top 10 places to visit in 2024"),
    ("negative", -4111111111111111),
    ("huge", 10**400),
    ("items", [1, 2, 3]),
    ("obj", {"a": 1}),
]


def _case_id(case: tuple) -> str:
    text = " ".join(repr(part) for part in case)
    return text if len(text) <= 70 else text[:67] + "..."


@pytest.mark.parametrize("cls,key,value", POSITIVES, ids=[_case_id(c) for c in POSITIVES])
def test_positive_example_is_detected(cls: str, key: str | None, value: object) -> None:
    assert cls in ALL.detect(key, value)


@pytest.mark.parametrize("cls,key,value", NEAR_MISSES, ids=[_case_id(c) for c in NEAR_MISSES])
def test_near_miss_is_not_detected(cls: str, key: str | None, value: object) -> None:
    assert cls not in ALL.detect(key, value)


@pytest.mark.parametrize("key,value", CLEAN, ids=[_case_id(c) for c in CLEAN])
def test_ordinary_value_has_no_class(key: str | None, value: object) -> None:
    assert ALL.detect(key, value) == set()


def test_every_builtin_class_has_positive_and_near_miss_examples() -> None:
    for cls in BUILTIN_CLASSES:
        assert sum(1 for c, _, _ in POSITIVES if c == cls) >= 3, cls
        assert sum(1 for c, _, _ in NEAR_MISSES if c == cls) >= 3, cls


def test_vendor_key_sent_as_bearer_is_only_an_api_key() -> None:
    assert ALL.detect("Authorization", "Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc") == {"api_key"}


def test_a_value_can_carry_several_classes() -> None:
    found = ALL.detect("log", "login from 203.0.113.7 by jane@example.com")
    assert "email" in found
    found = ALL.detect("X-API-Key", GITHUB_TOKEN)
    assert found == {"api_key"}


def test_detect_returns_a_fresh_set() -> None:
    first = ALL.detect("email", "john.doe@example.com")
    first.add("mutated")
    assert ALL.detect("email", "john.doe@example.com") == {"email"}


@pytest.mark.parametrize(
    "value",
    [
        _b64url({"alg": "x"})[:-2] + "." + "a" * 10 + ".",  # broken base64 header
        "eyJ" + "W" * 5000 + ".e30.",  # huge header
        base64.urlsafe_b64encode(b'{"a":' * 50000).decode().rstrip("=") + ".e30.sig",  # deep nesting
        "x" * 1_000_000,
        "1" * 100_000,
        "\ud800@example.com",  # lone surrogate
        "Bearer " + "=" * 50,
        "Basic " + "A" * 4097,
        "::",
        "[",
        "+",
        "(",
    ],
    ids=lambda v: repr(v)[:30],
)
@pytest.mark.parametrize("key", [None, "token", "address", "phone", "dob", "Cookie", "\u00e9l\u00e9ment"])
def test_pathological_values_do_not_raise(key: str | None, value: str) -> None:
    assert isinstance(ALL.detect(key, value), set)


def test_surrounding_whitespace_is_ignored() -> None:
    assert ALL.detect("email", "  john.doe@example.com\n") == {"email"}


# ------------------------------------------------------------------ field-name hints


@pytest.mark.parametrize(
    "spellings",
    [
        ("cardNumber", "card_number", "card-number", "CardNumber", "CARD_NUMBER"),
        ("dateOfBirth", "date_of_birth", "date-of-birth", "DateOfBirth", "DATE_OF_BIRTH"),
        ("userId", "user_id", "user-id", "UserID", "USER_ID", "userID"),
        ("xApiKey", "x_api_key", "X-API-Key", "X-Api-Key"),
    ],
)
def test_key_spellings_normalise_to_the_same_hints(spellings: tuple[str, ...]) -> None:
    assert len({normalize_key(k) for k in spellings}) == 1
    hints = {key_hints(k) for k in spellings}
    assert len(hints) == 1 and hints != {frozenset()}


@pytest.mark.parametrize("key", ["cardNumber", "card_number", "card-number", "CARD_NUMBER"])
def test_card_key_spellings_all_relax_the_issuer_check(key: str) -> None:
    assert "credit_card" in ALL.detect(key, _with_luhn("606282678627663"))


def test_unhinted_unknown_issuer_is_not_a_card() -> None:
    assert "credit_card" not in ALL.detect("value", _with_luhn("606282678627663"))


# ------------------------------------------------------------- enabled and custom


def test_disabled_builtins_are_not_reported() -> None:
    only_email = Detector(["email"])
    assert only_email.detect("ssn", "123-45-6789") == set()
    assert only_email.detect(None, "4111111111111111") == set()
    assert only_email.detect("email", "john.doe@example.com") == {"email"}
    assert Detector([]).detect("email", "john.doe@example.com") == set()


def test_disabled_api_key_does_not_turn_a_vendor_bearer_into_an_auth_token() -> None:
    auth_only = Detector(["authentication_token"])
    assert auth_only.detect("Authorization", "Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc") == set()
    assert auth_only.detect("Authorization", "Bearer " + JWT) == {"authentication_token"}


def test_enabled_accepts_metlo_names_and_ignores_unknown_names() -> None:
    detector = Detector(["Email", "Credit Card Number", "no_such_class", "employee_id"])
    assert detector.enabled == {"email", "credit_card"}
    assert detector.detect(None, "john.doe@example.com") == {"email"}


def test_custom_value_regex_matches_values() -> None:
    detector = Detector([], [CustomRule("employee_id", r"^E[0-9]{6}$", None)])
    assert detector.detect("anything", "E123456") == {"employee_id"}
    assert detector.detect(None, "E123456") == {"employee_id"}
    assert detector.detect("anything", "E12") == set()
    assert detector.detect("anything", "xE123456") == set()


def test_custom_value_regex_sees_integers_as_decimal_text() -> None:
    detector = Detector([], [CustomRule("badge", r"^[0-9]{6}$", None)])
    assert detector.detect("badge_no", 123456) == {"badge"}
    assert detector.detect("badge_no", 12345) == set()
    assert detector.detect("badge_no", 123456.0) == set()


def test_custom_key_regex_matches_field_names() -> None:
    detector = Detector([], [CustomRule("internal_note", None, r"(?i)^internal")])
    assert detector.detect("internalNote", "anything at all") == {"internal_note"}
    assert detector.detect("InternalScore", 7.5) == {"internal_note"}
    assert detector.detect("note", "anything at all") == set()
    assert detector.detect(None, "internal") == set()


def test_custom_rule_matches_on_either_pattern() -> None:
    detector = Detector([], [CustomRule("tenant", r"^tn_[a-z0-9]{8}$", r"(?i)tenant")])
    assert detector.detect("tenantRef", "whatever") == {"tenant"}
    assert detector.detect("owner", "tn_ab12cd34") == {"tenant"}
    assert detector.detect("owner", "whatever") == set()


def test_custom_rules_never_match_booleans_or_nulls() -> None:
    detector = Detector([], [CustomRule("internal_note", r".*", r".*")])
    assert detector.detect("internalNote", None) == set()
    assert detector.detect("internalNote", True) == set()
    assert detector.detect("internalNote", False) == set()


def test_custom_rule_without_patterns_never_matches() -> None:
    assert Detector([], [CustomRule("empty", None, None)]).detect("empty", "x") == set()


def test_custom_and_builtin_classes_combine() -> None:
    detector = Detector(["email"], [CustomRule("staff_email", r"@corp\.example$", None)])
    assert detector.detect("email", "ann@corp.example") == {"email", "staff_email"}
    assert detector.detect("email", "ann@other.example") == {"email"}
    assert detector.detect("ssn", "123-45-6789") == set()


def test_invalid_custom_regex_is_rejected_with_its_name() -> None:
    with pytest.raises(ValueError, match="broken"):
        Detector([], [CustomRule("broken", "([unclosed", None)])


# ---------------------------------------------------------------- class tables


def test_builtin_classes_match_the_spec() -> None:
    assert {name: sev for name, (sev, _) in BUILTIN_CLASSES.items()} == {
        "email": "MEDIUM", "ssn": "HIGH", "credit_card": "HIGH", "phone_number": "MEDIUM",
        "ip_address": "LOW", "driver_license": "HIGH", "dob": "MEDIUM", "address": "MEDIUM",
        "api_key": "HIGH", "authentication_token": "HIGH", "passport_number": "HIGH",
        "mac_address": "LOW", "user_id": "LOW", "password": "HIGH",
    }
    assert all(short for _, short in BUILTIN_CLASSES.values())


@pytest.mark.parametrize(
    "metlo,ours",
    [
        ("Email", "email"),
        ("Credit Card Number", "credit_card"),
        ("Social Security Number", "ssn"),
        ("Phone Number", "phone_number"),
        ("IP Address", "ip_address"),
        ("Driver License Number", "driver_license"),
        ("Date of Birth", "dob"),
        ("Address", "address"),
    ],
)
def test_metlo_class_names_map_to_ours(metlo: str, ours: str) -> None:
    assert METLO_CLASS_NAMES[metlo] == ours
    assert normalize_class_name(metlo) == ours
    assert ours in BUILTIN_CLASSES


@pytest.mark.parametrize("name", ["email", "credit_card", "My Custom Class", "", "email "])
def test_other_names_pass_through_unchanged(name: str) -> None:
    assert normalize_class_name(name) == name


# ---------------------------------------------------------------- agent patterns

# Rust's regex crate has no lookaround or backreferences; JavaScript has no inline
# flags; neither has Python-style named groups or possessive quantifiers.
_NON_PORTABLE = re.compile(r"\(\?<|\(\?=|\(\?!|\(\?P|\(\?[aiLmsux]|\\[1-9]|[*+?}]\+")


def test_agent_patterns_cover_exactly_the_builtins() -> None:
    assert set(AGENT_PATTERNS) == set(BUILTIN_CLASSES)
    for name, entry in AGENT_PATTERNS.items():
        assert set(entry) == {"regex", "keyRegex"}, name
        assert entry["regex"] or entry["keyRegex"], name


@pytest.mark.parametrize("cls", sorted(AGENT_PATTERNS))
def test_agent_patterns_are_portable_and_compile(cls: str) -> None:
    for pattern in AGENT_PATTERNS[cls].values():
        if pattern is not None:
            assert not _NON_PORTABLE.search(pattern), pattern
            re.compile(pattern)


@pytest.mark.parametrize("cls", sorted(AGENT_PATTERNS))
def test_agent_patterns_match_a_positive_example(cls: str) -> None:
    # Agents search ``regex`` in string values and ``keyRegex`` in the field's path.
    examples = [(key, value) for c, key, value in POSITIVES if c == cls]
    entry = AGENT_PATTERNS[cls]
    if entry["regex"]:
        value_re = re.compile(entry["regex"])
        assert any(isinstance(val, str) and value_re.search(val) for _, val in examples), cls
    if entry["keyRegex"]:
        key_re = re.compile(entry["keyRegex"])
        assert any(key and key_re.search(f"reqBody.user.{key}") for key, _ in examples), cls
        assert any(key and key_re.search(key) for key, _ in examples), cls


@pytest.mark.parametrize(
    "cls,path",
    [
        ("address", "resBody.emailAddress"),
        ("address", "resBody.ipAddress"),
        ("authentication_token", "resBody.token_type"),
        ("authentication_token", "resBody.next_page_token"),
        ("phone_number", "reqBody.phone_verified"),
        ("dob", "reqBody.createdAt"),
        ("user_id", "resBody.id"),
        ("passport_number", "resBody.passportExpiry"),
    ],
)
def test_agent_key_regexes_skip_lookalike_fields(cls: str, path: str) -> None:
    assert not re.search(AGENT_PATTERNS[cls]["keyRegex"], path)


@pytest.mark.parametrize(
    "cls,value",
    [
        ("ssn", "000-12-3456"),
        ("ssn", "666-12-3456"),
        ("ip_address", "1.2.3"),
        ("ip_address", "256.1.1.1"),
        ("phone_number", "6502530000"),
        ("email", "icon@2x"),
        ("credit_card", "1234567812345678"),
    ],
)
def test_agent_value_regexes_skip_near_misses(cls: str, value: str) -> None:
    assert not re.search(AGENT_PATTERNS[cls]["regex"], value)
