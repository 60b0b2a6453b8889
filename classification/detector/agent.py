"""Patterns handed to Metlo agents in agent-config's ``sensitiveDataList``.

v2 agents detect data classes themselves and only report findings
(DECISIONS.md §9). They cannot run our validators, so they get plain regexes
approximating them. How Metlo's agents use them (a fact to be compatible with):

* ``regex`` is *searched* in every string value (JSON strings, header and
  query-parameter values);
* ``keyRegex`` is searched in the field's full path, e.g.
  ``reqBody.user.dateOfBirth`` or ``reqHeaders.x-api-key``, whatever the value;
* a class is reported when *either* matches.

Because of the "either", each class gets the one pattern that is precise on its
own: value regexes (anchored) for classes recognisable by shape, key regexes
(anchored at the last path component) for classes that need a field name. The
regexes use only syntax shared by Rust's ``regex`` crate, JavaScript and Python:
no lookaround, backreferences, named groups, possessive quantifiers or inline
flags; case-insensitivity is spelled out with character classes.
"""

from __future__ import annotations

__all__ = ["AGENT_PATTERNS"]


def _ci(word: str) -> str:
    # "dob" -> "[dD][oO][bB]": case-insensitive without an inline flag, which JS lacks.
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in word)


def _key_regex(names: tuple[str, ...], prefixes: tuple[str, ...] = ()) -> str:
    """A path regex matching when the last component is one of ``names``.

    Names are given in snake_case; the words may be joined by ``_``, ``-`` or
    nothing and in any case, so ``date_of_birth`` matches ``dateOfBirth``,
    ``DATE_OF_BIRTH`` and ``date-of-birth``. An optional prefix word from
    ``prefixes`` (``billing`` in ``billingAddress``) and a trailing number
    (``phone2``) are allowed.
    """
    def words(name: str) -> str:
        return "[_-]?".join(_ci(w) for w in name.split("_"))

    body = "|".join(words(n) for n in names)
    prefix = f"(?:(?:{'|'.join(words(p) for p in prefixes)})[_-]?)?" if prefixes else ""
    return f"(?:^|\\.){prefix}(?:{body})(?:[_-]?[0-9]+)?$"


_PEOPLE = ("user", "customer", "contact", "billing", "shipping", "home", "work", "primary",
           "secondary", "emergency", "personal", "mailing", "patient", "employee", "member")

_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_H4 = "[0-9A-Fa-f]{1,4}"

AGENT_PATTERNS: dict[str, dict[str, str | None]] = {
    "email": {
        "regex": r"^[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$",
        "keyRegex": None,
    },
    "ssn": {
        # Area 001-899 except 666, group 01-99, serial 0001-9999.
        "regex": r"^(?:00[1-9]|0[1-9][0-9]|[1-578][0-9]{2}|6[0-57-9][0-9]|66[0-57-9])"
                 r"-(?:0[1-9]|[1-9][0-9])-(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})$",
        "keyRegex": _key_regex(("ssn", "social_security_number", "social_security", "social_security_no")),
    },
    "credit_card": {
        # Issuer prefixes and lengths, undivided or in 4-4-4-4 / Amex 4-6-5 groups. No Luhn.
        "regex": r"^(?:4[0-9]{12}(?:[0-9]{3}){0,2}|5[1-5][0-9]{14}"
                 r"|2(?:22[1-9]|2[3-9][0-9]|[3-6][0-9]{2}|7[01][0-9]|720)[0-9]{12}"
                 r"|3[47][0-9]{13}|6(?:011|5[0-9]{2}|4[4-9][0-9])[0-9]{12,15}"
                 r"|35(?:2[89]|[3-8][0-9])[0-9]{12,15}|3(?:0[0-5]|[689][0-9])[0-9]{11,16}"
                 r"|(?:4[0-9]{3}|5[1-5][0-9]{2}|2[2-7][0-9]{2}|6[0-9]{3}|35[0-9]{2})"
                 r"(?:[ -][0-9]{4}){3}|3[47][0-9]{2}[ -][0-9]{6}[ -][0-9]{5})$",
        "keyRegex": None,
    },
    "phone_number": {
        # International with "+" (E.164 or grouped), or a formatted North American number.
        "regex": r"^(?:\+[1-9][0-9]{7,14}|\+[1-9][0-9]{0,3}(?:[ .-]?\(?[0-9]{1,5}\)?){2,6}"
                 r"|(?:\+?1[ .-]?)?\(?[2-9][0-9]{2}\)?[ .-]?[2-9][0-9]{2}[ .-][0-9]{4})$",
        "keyRegex": _key_regex(
            ("phone", "phone_number", "phone_no", "telephone", "tel", "mobile", "mobile_number",
             "mobile_phone", "cell", "cell_phone", "cellphone", "fax", "msisdn"),
            _PEOPLE,
        ),
    },
    "ip_address": {
        "regex": rf"^(?:{_OCTET}\.){{3}}{_OCTET}$"
                 rf"|^(?:{_H4}:){{7}}{_H4}$"
                 rf"|^(?:{_H4}:){{0,6}}(?:{_H4})?::(?:{_H4}:){{0,6}}(?:{_H4})?$",
        "keyRegex": None,
    },
    "mac_address": {
        "regex": r"^(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$|^(?:[0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}$"
                 r"|^[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}$",
        "keyRegex": None,
    },
    "authentication_token": {
        # A JWT (optionally after "Bearer"), or any Bearer credential.
        "regex": r"^(?:[Bb]earer +)?eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$"
                 r"|^[Bb]earer +[A-Za-z0-9._~+/-]{8,}=*$",
        "keyRegex": _key_regex(
            ("access_token", "refresh_token", "id_token", "auth_token", "session_token", "bearer_token",
             "session_id", "sessionid", "jwt", "authorization", "x_auth_token", "x_access_token")
        ),
    },
    "api_key": {
        "regex": r"\b(?:(?:AKIA|ASIA)[0-9A-Z]{16}|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,247}"
                 r"|gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255}|AIza[0-9A-Za-z_-]{35}"
                 r"|xox[abposre]-[0-9A-Za-z-]{10,250}|glpat-[0-9A-Za-z_-]{20,}|npm_[A-Za-z0-9]{36}"
                 r"|SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43})\b"
                 r"|-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",
        "keyRegex": _key_regex(
            ("api_key", "apikey", "x_api_key", "api_secret", "api_token", "client_secret", "secret_key",
             "secret_access_key", "aws_secret_access_key", "private_key", "app_secret", "secret",
             "subscription_key", "ocp_apim_subscription_key")
        ),
    },
    "dob": {
        "regex": None,
        "keyRegex": _key_regex(
            ("dob", "date_of_birth", "birth_date", "birthdate", "birthday", "bday", "birth_day"), _PEOPLE
        ),
    },
    "address": {
        "regex": None,
        "keyRegex": _key_regex(
            ("address", "street_address", "street", "address_line", "addr", "postal_address",
             "mailing_address", "home_address", "billing_address", "shipping_address"),
            _PEOPLE,
        ),
    },
    "driver_license": {
        "regex": None,
        "keyRegex": _key_regex(
            ("driver_license", "drivers_license", "driving_license", "driver_licence", "drivers_licence",
             "driving_licence", "driver_license_number", "drivers_license_number", "dl_number", "dln")
        ),
    },
    "passport_number": {
        "regex": None,
        "keyRegex": _key_regex(("passport", "passport_number", "passport_no", "passport_num", "passport_id")),
    },
    "password": {
        # Agents report key matches in every section; the server keeps them only outside the
        # credential channel (response sections and query parameters).
        "regex": None,
        "keyRegex": _key_regex(
            ("password", "passwd", "passphrase", "pwd", "passcode", "password_hash", "hashed_password",
             "password_digest", "encrypted_password", "secret", "user_secret"),
            ("user", "new", "old", "current", "temp", "temporary", "initial", "default", "account", "admin"),
        ),
    },
    "user_id": {
        "regex": None,
        "keyRegex": _key_regex(
            ("user_id", "userid", "uid", "customer_id", "account_id", "member_id", "profile_id",
             "subscriber_id", "patient_id", "employee_id", "user_uuid", "customer_number")
        ),
    },
}
