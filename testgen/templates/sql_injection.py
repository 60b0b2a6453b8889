"""SQL_INJECTION: inputs must not reach SQL unescaped (error-, boolean- and time-based).

For each input (path parameters, query parameters, scalar body fields; at most
``TESTGEN_MAX_INPUTS``), the endpoint's example request is sent first with the
input's observed value (the baseline), then with that input replaced by:

* error-based payloads (``v'``, ``v"``, ``v')``): no answer may carry database
  error text (MySQL, PostgreSQL, SQLite, SQL Server, Oracle, ORM messages);
* boolean-based pairs, in a string context, a ``LIKE`` context (query parameters)
  and (for numeric inputs) a numeric context: a true condition that keeps the query's
  meaning (``v' AND '1'='1' -- ``) and a false one (``v' AND '1'='2' -- ``). It is a
  finding only when the true one is answered like the baseline (same status, similar
  body) while the false one is answered differently: an injectable query returns the
  same rows for the first and none for the second, a safe one looks both up as text.
  Bodies are compared with ``compare: similar`` after decoding HTML and URL escapes
  (an error page echoing ``&#39;`` differs from the raw ``'`` only in form);
* time-based payloads (MySQL ``SLEEP``, PostgreSQL ``pg_sleep``, SQL Server
  ``WAITFOR DELAY``) of ``TESTGEN_SQLI_DELAY_SECONDS``, with one control per context (the
  MySQL shape sleeping 0 s): a finding only when a sleep answer took 80 % of the delay
  more than the baseline while the control took less than 40 % of it more. These requests get a
  timeout of the delay plus 10 s. In writes the sleep is joined with ``AND``, not ``OR``: a
  vulnerable UPDATE/DELETE must still touch only the object the value names.

Writes name the test identity's own objects (``own_writes.py``): payloads in an object's path slot
are built on the own object's id, so the rest of the statement's condition still names it.

A request that fails before the attack proves nothing (DECISIONS §8): an input's payloads are sent
only when its baseline — the example request as traffic showed it — was accepted; a refused or
failing baseline (a unique title reused, a 500 on its own) leaves the test INCONCLUSIVE. Credential
flows are the exception: their example names a user that does not exist, so their baseline is refused
by design and the payloads are sent anyway. Database error text counts only in answers to payloads.
"""
from __future__ import annotations

from ..ownership import WRITES, is_credential_flow
from ..profile import EndpointProfile, Input
from ._base import (GenerationContext, SecurityTemplate, accepted, assertion, distinct_names, input_label,
                    inputs_named, register, request_with_input)

# Text that only a database (driver/ORM) error puts in an answer. Matched case-insensitively.
DB_ERROR_SIGNATURES = [
    "You have an error in your SQL syntax",
    "SQL syntax",
    "mysql_fetch",
    "MySqlException",
    "com.mysql.jdbc",
    "syntax error at or near",
    "unterminated quoted string",
    "PG::SyntaxError",
    "psycopg2.errors",
    "psycopg.errors",
    "org.postgresql.util.PSQLException",
    "sqlite3.OperationalError",
    "SQLiteException",
    "SQLITE_ERROR",
    "unrecognized token",
    ": syntax error",
    "SQLSTATE",
    "Unclosed quotation mark",
    "Microsoft OLE DB Provider",
    "ODBC SQL Server Driver",
    "quoted string not properly terminated",
    "ORA-00933",
    "ORA-01756",
    "SequelizeDatabaseError",
    "QueryFailedError",
]
ERROR_SUFFIXES = ("'", '"', "')")
THROTTLED = [429, 503]


def boolean_pairs(value: str, numeric: bool, like: bool) -> list[tuple[str, str, str]]:
    """(context, true payload, false payload): both keep the baseline's value, so a true
    condition injected into the SQL selects what the baseline selected."""
    pairs = [("string", f"{value}' AND '1'='1' -- ", f"{value}' AND '1'='2' -- ")]
    if like:
        pairs.append(("string, LIKE", f"{value}%' AND '1'='1' -- ", f"{value}%' AND '1'='2' -- "))
    if numeric:
        pairs.append(("numeric", f"{value} AND 1=1 -- ", f"{value} AND 1=2 -- "))
    return pairs


def time_payloads(value: str, delay: int, numeric: bool, join: str = "OR") -> list[tuple[str, str, str]]:
    """(database, context, payload) causing a delay of ``delay`` seconds when injected. ``join`` is
    ``AND`` for writes: an injectable UPDATE/DELETE then still touches only the row the value names
    (the test identity's own object), where ``OR`` would make its condition true for every row."""
    payloads = [
        ("MySQL", "string", f"{value}' {join} (SELECT 1 FROM (SELECT SLEEP({delay}))x)=1 -- "),
        ("PostgreSQL", "string", f"{value}' {join} (SELECT 1 FROM pg_sleep({delay}))=1 -- "),
        ("SQL Server", "string", f"{value}'; WAITFOR DELAY '0:0:{delay}' -- "),
    ]
    if numeric:
        payloads += [
            ("MySQL", "numeric", f"{value} {join} (SELECT 1 FROM (SELECT SLEEP({delay}))x)=1 -- "),
            ("PostgreSQL", "numeric", f"{value} {join} (SELECT 1 FROM pg_sleep({delay}))=1 -- "),
            ("SQL Server", "numeric", f"{value}; WAITFOR DELAY '0:0:{delay}' -- "),
        ]
    return payloads


def _response(index: int, part: str) -> str:
    return f"{{{{responses[{index}].{part}}}}}"


def unlike_baseline(true_index: int, baseline: int) -> dict:
    """Passes when the true condition's answer differs from the baseline's (status or body), or
    when the false one was throttled (429/503: a rate limit, not the query, decided it)."""
    throttled = assertion("status", "in", THROTTLED, request=true_index + 1,
                          description="the false condition was throttled (no proof)")
    return assertion("status", "notEquals", _response(baseline, "status"), request=true_index,
                     description="the true condition is answered unlike the plain value (status)",
                     otherwise=assertion("body", "notEquals", _response(baseline, "body"), request=true_index,
                                         compare="similar", otherwise=throttled,
                                         description="the true condition is answered unlike the plain value (body)"))


def boolean_assertions(label: str, context_name: str, true_index: int, baseline: int) -> list[dict]:
    false_index = true_index + 1
    return [
        assertion("status", "equals", _response(true_index, "status"), request=false_index,
                  otherwise=unlike_baseline(true_index, baseline),
                  description=f"{label}: true and false conditions ({context_name}) get the same status"),
        assertion("body", "equals", _response(true_index, "body"), request=false_index, compare="similar",
                  otherwise=unlike_baseline(true_index, baseline),
                  description=f"{label}: true and false conditions ({context_name}) get similar bodies"),
    ]


def timing_assertion(label: str, database: str, delay: int, sleep_index: int, baseline: int,
                     control: int) -> dict:
    """Passes unless the sleep answer is late by 80 % of the delay over the baseline while the
    control (a payload of the same shape sleeping 0 s) is not late by 40 %."""
    return assertion(
        "duration", "lessThan", _response(baseline, "duration"), request=sleep_index, plus=int(delay * 800),
        description=f"{label}: no delay from a time-based payload ({database}, {delay} s)",
        otherwise=assertion("duration", "greaterThan", _response(baseline, "duration"), request=control,
                            plus=int(delay * 400),
                            description="its control without the sleep is slow as well (no proof)"),
    )


def input_checks(profile: EndpointProfile, item: Input, delay: int, first: int) -> tuple[list[dict], list[dict]]:
    """The requests and assertions fuzzing one input; ``first`` is its first request's index (the
    baseline: the payloads are sent only when it was accepted, outside credential flows)."""
    label = input_label(item)
    value = "" if item.example is None else str(item.example)
    numeric = item.looks_numeric
    requests = [request_with_input(profile, f"{label}: baseline (the observed value)", item, value, payload=value)]
    assertions: list[dict] = []
    gate = None if is_credential_flow(profile.path) else first
    if gate is not None:
        assertions.append(accepted(first, f"{label}: the example request alone is accepted (else a payload's answer "
                                          "proves nothing)", inconclusive=True))

    def with_input(description: str, payload: str, **extensions) -> dict:
        return request_with_input(profile, description, item, payload, payload=payload, onlyIfAccepted=gate,
                                  **extensions)

    for suffix in ERROR_SUFFIXES:
        payload = f"{value}{suffix}"
        requests.append(with_input(f"{label}: error-based payload {payload!r}", payload))
    for context_name, true_payload, false_payload in boolean_pairs(value, numeric, item.location == "query"):
        assertions += boolean_assertions(label, context_name, first + len(requests), first)
        requests.append(with_input(f"{label}: always-true condition ({context_name})", true_payload))
        requests.append(with_input(f"{label}: always-false condition ({context_name})", false_payload))
    controls: dict[str, int] = {}  # one control per context: the first payload's shape, sleeping 0 s
    join = "AND" if profile.method in WRITES else "OR"
    for database, context_name, payload in time_payloads(value, 0, numeric, join):
        if context_name not in controls:
            controls[context_name] = first + len(requests)
            requests.append(with_input(f"{label}: control ({database}, {context_name}, 0 s)", payload,
                                       timeout=(delay + 10) * 1000))
    for database, context_name, payload in time_payloads(value, delay, numeric, join):
        assertions.append(timing_assertion(label, database, delay, first + len(requests), first,
                                           controls[context_name]))
        requests.append(with_input(f"{label}: time-based payload ({database}, {delay} s)", payload,
                                   timeout=(delay + 10) * 1000))
    return requests, assertions


@register
class SqlInjection(SecurityTemplate, name="SQL_INJECTION", priority=40, title="SQL injection"):
    def applies(self, profile: EndpointProfile) -> bool:
        return bool(profile.inputs)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        delay = context.sqli_delay_seconds
        requests: list[dict] = []
        assertions: list[dict] = []
        baselines: list[int] = []
        inputs: list[Input] = profile.inputs[: context.max_inputs]
        for item in inputs:
            baselines.append(len(requests))
            item_requests, item_assertions = input_checks(profile, item, delay, len(requests))
            requests += item_requests
            assertions += item_assertions
        payloads = [i for i in range(len(requests)) if i not in baselines]
        assertions.insert(0, assertion("body", "notContains", DB_ERROR_SIGNATURES, ignoreCase=True, request=payloads,
                                       description="No answer to a payload carries database error text"))
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: SQL injection payloads in each input ({inputs_named(inputs)}) must not "
                "produce database errors, a true condition answered like the plain value with a false one answered "
                "differently, or delays that a control without the sleep does not show."
            ),
            requests=distinct_names(requests),
            assertions=assertions,
        )
