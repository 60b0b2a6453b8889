"""Value validators, one family per built-in data class, one module per family.

Every function here is pure, takes an already stripped, non-empty string (plus,
where the class needs it, whether the field name hinted the class) and answers
a yes/no question precisely: a cheap shape check first (compiled once, at import)
and the expensive validator (Luhn, ``phonenumbers``, ``ipaddress``, base64/JSON
decoding) only on values of the right shape.

Functions never raise on any ``str`` input.

Modules: ``cards`` (payment cards), ``national_ids`` (SSN, driver's licence,
passport), ``contact`` (e-mail, phone, street address), ``network`` (IP, MAC),
``credentials`` (JWT, ``Authorization`` values, API keys, opaque secrets),
``dates`` (dates of birth), ``passwords`` (passwords, secrets and password hashes),
``text`` (values embedded in free text, and the sampling of long values), ``common``
(shared shapes, record identifiers).
The detector calls them through this package (``validators.is_email``).
"""

from .cards import is_credit_card
from .common import TEXT_SCAN_LIMIT, is_id_like, is_uuid
from .contact import find_email, is_address, is_email, is_phone_number
from .credentials import (
    find_api_key,
    find_jwt,
    is_api_key_format,
    is_auth_scheme_credential,
    is_jwt,
    is_opaque_secret,
)
from .dates import parse_past_date
from .national_ids import is_driver_license, is_passport_number, is_ssn
from .network import is_ip_address, is_mac_address
from .passwords import find_password_hash, is_password_hash, is_password_value
from .text import (
    find_card_in_text,
    find_ip_in_text,
    find_phone_in_text,
    find_ssn_in_text,
    has_long_number,
    is_free_text,
    may_hold_ip,
    sample_text,
)

__all__ = [
    "TEXT_SCAN_LIMIT",
    "find_api_key",
    "find_card_in_text",
    "find_email",
    "find_ip_in_text",
    "find_jwt",
    "find_password_hash",
    "find_phone_in_text",
    "find_ssn_in_text",
    "has_long_number",
    "is_address",
    "is_api_key_format",
    "is_auth_scheme_credential",
    "is_credit_card",
    "is_driver_license",
    "is_email",
    "is_id_like",
    "is_ip_address",
    "is_jwt",
    "is_mac_address",
    "is_opaque_secret",
    "is_free_text",
    "may_hold_ip",
    "is_passport_number",
    "is_password_hash",
    "is_password_value",
    "is_phone_number",
    "is_ssn",
    "is_uuid",
    "parse_past_date",
    "sample_text",
]
