"""Enumerations shared across apps (wire values are SPEC's)."""
from django.db import models


class RiskScore(models.TextChoices):
    NONE = "NONE"
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"


# Ordering weight: HIGH first when sorted descending.
RISK_RANK = {RiskScore.NONE: 0, RiskScore.LOW: 1, RiskScore.MEDIUM: 2, RiskScore.HIGH: 3}
RANK_RISK = {rank: risk for risk, rank in RISK_RANK.items()}


def max_risk(scores) -> str:
    """The highest of the given risk scores (NONE for none)."""
    return RANK_RISK[max((RISK_RANK[s] for s in scores), default=0)]


class DataSection(models.TextChoices):
    # Labels: SPEC's display strings (the console shows them).
    REQUEST_QUERY = "REQUEST_QUERY", "Request Query"
    REQUEST_HEADER = "REQUEST_HEADER", "Request Headers"
    REQUEST_BODY = "REQUEST_BODY", "Request Body"
    RESPONSE_HEADER = "RESPONSE_HEADER", "Response Headers"
    RESPONSE_BODY = "RESPONSE_BODY", "Response Body"


# The webhook payload and the v2 agents use Metlo's short section names.
SECTION_SHORT = {
    DataSection.REQUEST_QUERY: "reqQuery",
    DataSection.REQUEST_HEADER: "reqHeaders",
    DataSection.REQUEST_BODY: "reqBody",
    DataSection.RESPONSE_HEADER: "resHeaders",
    DataSection.RESPONSE_BODY: "resBody",
}
SHORT_SECTION = {short: section for section, short in SECTION_SHORT.items()}
SECTION_LABEL = {section: section.label for section in DataSection}


class HttpMethod(models.TextChoices):
    GET = "GET"
    POST = "POST"
    PUT = "PUT"
    PATCH = "PATCH"
    DELETE = "DELETE"
    HEAD = "HEAD"
    OPTIONS = "OPTIONS"


class HostType(models.TextChoices):
    ANY = "ANY"
    EXTERNAL = "EXTERNAL"
    INTERNAL = "INTERNAL"


class AlertType(models.TextChoices):
    # The value is SPEC's display string, and so is the label (the console shows labels).
    NEW_ENDPOINT = "New Endpoint Detected", "New Endpoint Detected"
    PII_DATA = "PII Data Detected", "PII Data Detected"
    OPENAPI_SPEC_DIFF = "Open API Spec Diff", "Open API Spec Diff"
    QUERY_SENSITIVE = "Sensitive Data in Query Params", "Sensitive Data in Query Params"
    PATH_SENSITIVE = "Sensitive Data in Path Params", "Sensitive Data in Path Params"
    BASIC_AUTH = "Basic Authentication Detected", "Basic Authentication Detected"
    UNSECURED_ENDPOINT = "Endpoint not secured by SSL", "Endpoint not secured by SSL"
    UNAUTHENTICATED_SENSITIVE = ("Unauthenticated Endpoint returning Sensitive Data",
                                 "Unauthenticated Endpoint returning Sensitive Data")


class AlertStatus(models.TextChoices):
    OPEN = "Open"
    RESOLVED = "Resolved"
    IGNORED = "Ignored"
