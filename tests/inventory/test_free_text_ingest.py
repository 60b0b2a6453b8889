"""Free-text detection through the ingestion route and the analysis task (issue #14 point 6)."""
from __future__ import annotations

import pytest

from inventory.ingest.classes import class_config_load
from inventory.models import Endpoint

from .ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

UK_NOTE = {"note": "UK customer, landline 020 7946 0958, prefers afternoons."}


def test_values_inside_notes_are_classified_and_prose_is_not(ingest):
    ingest(raw_trace(path="/tickets/open", response_body=[
        {"id": 1, "note": "Card 4111 1111 1111 1111 declined, customer SSN 536-90-4399 on file."},
        {"id": 2, "note": "Customer called from (650) 253-0000; login failed from 203.0.113.7."},
        {"id": 3, "note": "Shipped 2024-01-15 via UPS 1Z999AA10123456784, version 4.12.3, ISBN 978-0-306-40615-7."}]),
        raw_trace(path="/products/featured", response_body={"description": "Ergonomic chair, 42-52 cm, max 120 kg.",
                                                          "price": "$1,299.99", "sku": "4006381333931"}))
    assert Endpoint.objects.get(path="/tickets/open").data_classes == [
        "credit_card", "ip_address", "phone_number", "ssn"]
    assert Endpoint.objects.get(path="/products/featured").data_classes == []


def test_a_text_body_is_sampled_to_its_end_not_cut(ingest):
    log = "GET /health 200 in 3 ms\n" * 20_000 + "payment retry for SSN 512-44-1098 failed\n"
    ingest(raw_trace(path="/logs/tail", response_headers={"Content-Type": "text/plain"}, response_body=log))
    assert Endpoint.objects.get(path="/logs/tail").data_classes == ["ssn"]


def test_phone_regions_setting_reaches_the_analysis(ingest, settings):
    ingest(raw_trace(path="/uk/default", response_body=UK_NOTE))
    assert Endpoint.objects.get(path="/uk/default").data_classes == []
    settings.PHONE_REGIONS = ["US", "GB"]
    assert class_config_load().detector.detect("note", UK_NOTE["note"]) == {"phone_number"}
    ingest(raw_trace(path="/uk/configured", response_body=UK_NOTE))
    assert Endpoint.objects.get(path="/uk/configured").data_classes == ["phone_number"]
