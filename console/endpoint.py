"""The endpoint page an operator works from (the endpoint's change page in the console): fields by
section with their classes, recent traces (as stored: redacted), alerts with resolve / ignore,
daily usage, the generated tests with a "run" action and the last results, the spec section."""
from __future__ import annotations

import datetime as dt
import json
import re
import uuid

from django.utils import timezone

from classification.models import DataField
from core.enums import DataSection
from detections.models import Alert, OpenApiSpec
from inventory.models import ApiTrace, Endpoint, UsageDay

from .svg import daily_bars_svg

USAGE_DAYS = 30
TRACES = 10
RESULTS = 10
TRACE_TEXT = 2000


def _sections(endpoint: Endpoint) -> list[tuple[str, list[DataField]]]:
    by_section: dict[str, list[DataField]] = {}
    for field in DataField.objects.filter(endpoint=endpoint).order_by("data_section", "status_code", "data_path"):
        by_section.setdefault(field.data_section, []).append(field)
    return [(DataSection(section).label, by_section[section]) for section in DataSection.values
            if section in by_section]


def _usage_svg(endpoint: Endpoint):
    today = timezone.now().astimezone(dt.timezone.utc).date()
    days = [today - dt.timedelta(days=back) for back in range(USAGE_DAYS - 1, -1, -1)]
    counts = dict(UsageDay.objects.filter(endpoint=endpoint, day__gte=days[0]).values_list("day", "count"))
    rows = [(day, counts.get(day, 0)) for day in days]
    return daily_bars_svg(rows, labels=("requests",), title="daily requests"), sum(c for _, c in rows)


def _traces(endpoint: Endpoint) -> list[dict]:
    traces = []
    for trace in ApiTrace.objects.filter(endpoint=endpoint).order_by("-created_at")[:TRACES]:
        traces.append({
            "trace": trace,
            "request_headers": "\n".join(f"{h.get('name')}: {h.get('value')}" for h in trace.request_headers
                                         if isinstance(h, dict)),
            "request_body": trace.request_body[:TRACE_TEXT],
            "response_body": trace.response_body[:TRACE_TEXT],
        })
    return traces


def _pattern_regex(path: str) -> re.Pattern:
    return re.compile("^" + re.sub(r"\\\{[^/]*?\\\}", "[^/]+", re.escape(path)) + "$")


def spec_section(endpoint: Endpoint) -> str | None:
    """The linked spec's operation for this endpoint as JSON text (None when not linked or not found):
    a spec path whose literal segments equal the endpoint's (parameters match any segment)."""
    if not endpoint.openapi_spec_name:
        return None
    spec = OpenApiSpec.objects.filter(name=endpoint.openapi_spec_name).values_list("spec", flat=True).first()
    if not isinstance(spec, dict):
        return None
    concrete = re.sub(r"\{[^/]*\}", "x", endpoint.path)
    for path, item in (spec.get("paths") or {}).items():
        operation = item.get(endpoint.method.lower()) if isinstance(item, dict) else None
        if operation is not None and _pattern_regex(path).match(concrete):
            return json.dumps({path: {endpoint.method.lower(): operation}}, indent=2)[:20000]
    return None


def _tests(endpoint: Endpoint) -> tuple[list[dict], list]:
    from testgen.models import TestRunResult
    from testgen.services.generation import tests_generate_every

    generated = [item for item in tests_generate_every(endpoints=[endpoint]) if item.get("success")]
    results = list(TestRunResult.objects.filter(host=endpoint.host.name, method=endpoint.method,
                                                endpoint=endpoint.path)
                   .select_related("run").order_by("-run__created_at", "position")[:RESULTS])
    return generated, results


def endpoint_page_context(request, endpoint_id) -> dict:
    try:
        key = uuid.UUID(str(endpoint_id))
    except ValueError:
        return {}  # the admin answers its own "does not exist" for it
    endpoint = Endpoint.objects.select_related("host").filter(uuid=key).first()
    if endpoint is None:
        return {}
    usage_svg, usage_total = _usage_svg(endpoint)
    generated, results = _tests(endpoint)
    return {
        "console_endpoint": endpoint,
        "sections": _sections(endpoint),
        "recent_traces": _traces(endpoint),
        "endpoint_alerts": list(Alert.objects.filter(endpoint=endpoint).order_by("status", "-created_at")),
        "usage_svg": usage_svg,
        "usage_total": usage_total,
        "generated_tests": generated,
        "test_results": results,
        "spec_section": spec_section(endpoint),
        "can_change_alerts": request.user.has_perm("detections.change_alert"),
        "can_run_tests": request.user.has_perm("testgen.add_testrun"),
    }
