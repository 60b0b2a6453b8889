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
    REQUEST_QUERY = "REQUEST_QUERY"
    REQUEST_HEADER = "REQUEST_HEADER"
    REQUEST_BODY = "REQUEST_BODY"
    RESPONSE_HEADER = "RESPONSE_HEADER"
    RESPONSE_BODY = "RESPONSE_BODY"


# The webhook payload and the v2 agents use Metlo's short section names.
SECTION_SHORT = {
    DataSection.REQUEST_QUERY: "reqQuery",
    DataSection.REQUEST_HEADER: "reqHeaders",
    DataSection.REQUEST_BODY: "reqBody",
    DataSection.RESPONSE_HEADER: "resHeaders",
    DataSection.RESPONSE_BODY: "resBody",
}
SHORT_SECTION = {short: section for section, short in SECTION_SHORT.items()}
SECTION_LABEL = {
    DataSection.REQUEST_QUERY: "Request Query",
    DataSection.REQUEST_HEADER: "Request Headers",
    DataSection.REQUEST_BODY: "Request Body",
    DataSection.RESPONSE_HEADER: "Response Headers",
    DataSection.RESPONSE_BODY: "Response Body",
}


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
    NEW_ENDPOINT = "New Endpoint Detected"
    PII_DATA = "PII Data Detected"
    OPENAPI_SPEC_DIFF = "Open API Spec Diff"
    QUERY_SENSITIVE = "Sensitive Data in Query Params"
    PATH_SENSITIVE = "Sensitive Data in Path Params"
    BASIC_AUTH = "Basic Authentication Detected"
    UNSECURED_ENDPOINT = "Endpoint not secured by SSL"
    UNAUTHENTICATED_SENSITIVE = "Unauthenticated Endpoint returning Sensitive Data"


class AlertStatus(models.TextChoices):
    OPEN = "Open"
    RESOLVED = "Resolved"
    IGNORED = "Ignored"
