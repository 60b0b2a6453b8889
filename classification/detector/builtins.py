"""The built-in data classes and the mapping from Metlo's class names.

SPEC.md lists ten built-ins with their severities; DECISIONS.md §5 adds
``passport_number``, ``mac_address``, ``user_id`` and ``password``. The order below is the
order GET /data-class should list them in (SPEC's table first).
"""

from __future__ import annotations

__all__ = ["BUILTIN_CLASSES", "METLO_CLASS_NAMES", "normalize_class_name"]

# className -> (severity, shortName)
BUILTIN_CLASSES: dict[str, tuple[str, str]] = {
    "email": ("MEDIUM", "Email"),
    "ssn": ("HIGH", "SSN"),
    "credit_card": ("HIGH", "Credit Card"),
    "phone_number": ("MEDIUM", "Phone Number"),
    "ip_address": ("LOW", "IP Address"),
    "driver_license": ("HIGH", "Driver License"),
    "dob": ("MEDIUM", "Date of Birth"),
    "address": ("MEDIUM", "Address"),
    "api_key": ("HIGH", "API Key"),
    "authentication_token": ("HIGH", "Auth Token"),
    "passport_number": ("HIGH", "Passport Number"),
    "mac_address": ("LOW", "MAC Address"),
    "user_id": ("LOW", "User ID"),
    "password": ("HIGH", "Password or secret"),
}

# Metlo's display-style class names, as older agents and exported data carry
# them (DECISIONS.md §9), mapped to ours.
METLO_CLASS_NAMES: dict[str, str] = {
    "Email": "email",
    "Credit Card Number": "credit_card",
    "Social Security Number": "ssn",
    "Phone Number": "phone_number",
    "IP Address": "ip_address",
    "Driver License Number": "driver_license",
    "Date of Birth": "dob",
    "Address": "address",
}


def normalize_class_name(name: str) -> str:
    """Return our className for ``name``.

    Guarantees: a Metlo name (exact spelling, as listed in
    :data:`METLO_CLASS_NAMES`) becomes our name; any other string, including our
    own names and custom class names, is returned unchanged.
    """
    return METLO_CLASS_NAMES.get(name, name)
