"""SQL_INJECTION: inputs must not reach SQL unescaped (error-, boolean- and time-based).

For each input (path parameters, query parameters, scalar body fields; at most
``TESTGEN_MAX_INPUTS``), the endpoint's example request is sent with that input
replaced by:

* error-based payloads (``v'``, ``v"``, ``v')``): no answer may carry database
  error text (MySQL, PostgreSQL, SQLite, SQL Server, Oracle, ORM messages);
* boolean-based pairs, in a string and (for numeric inputs) a numeric context:
  an always-true condition (``v' OR '1'='1' -- ``) and an always-false one
  (``v' AND '1'='2' -- ``): both must be answered alike - same status and a
  similar body (``compare: similar``: the same JSON structure, or the same
  text once the payload and digits are left out). A vulnerable query returns
  rows for one and none for the other;
* time-based payloads (MySQL ``SLEEP``, PostgreSQL ``pg_sleep``, SQL Server
  ``WAITFOR DELAY``) of ``TESTGEN_SQLI_DELAY_SECONDS``: no answer may take 80 % of
  that delay or more. These requests get a timeout of the delay plus 10 s.
"""
from __future__ import annotations

from ..profile import EndpointProfile, Input
from ._base import (GenerationContext, SecurityTemplate, assertion, input_label, inputs_named, register,
                    request_with_input)

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


def boolean_pairs(value: str, numeric: bool) -> list[tuple[str, str, str]]:
    """(context, true payload, false payload)."""
    pairs = [("string", f"{value}' OR '1'='1' -- ", f"{value}' AND '1'='2' -- ")]
    if numeric:
        pairs.append(("numeric", f"{value} OR 1=1 -- ", f"{value} AND 1=2 -- "))
    return pairs


def time_payloads(value: str, delay: int, numeric: bool) -> list[tuple[str, str]]:
    """(database, payload) causing a delay of ``delay`` seconds when injected."""
    payloads = [
        ("MySQL", f"{value}' OR (SELECT 1 FROM (SELECT SLEEP({delay}))x)=1 -- "),
        ("PostgreSQL", f"{value}' OR (SELECT 1 FROM pg_sleep({delay}))=1 -- "),
        ("SQL Server", f"{value}'; WAITFOR DELAY '0:0:{delay}' -- "),
    ]
    if numeric:
        payloads += [
            ("MySQL", f"{value} OR (SELECT 1 FROM (SELECT SLEEP({delay}))x)=1 -- "),
            ("PostgreSQL", f"{value} OR (SELECT 1 FROM pg_sleep({delay}))=1 -- "),
            ("SQL Server", f"{value}; WAITFOR DELAY '0:0:{delay}' -- "),
        ]
    return payloads


@register
class SqlInjection(SecurityTemplate, name="SQL_INJECTION", priority=40, title="SQL injection"):
    def applies(self, profile: EndpointProfile) -> bool:
        return bool(profile.inputs)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        delay = context.sqli_delay_seconds
        requests: list[dict] = []
        assertions: list[dict] = []
        inputs: list[Input] = profile.inputs[: context.max_inputs]
        for item in inputs:
            label = input_label(item)
            value = "" if item.example is None else str(item.example)
            numeric = item.looks_numeric
            for suffix in ERROR_SUFFIXES:
                payload = f"{value}{suffix}"
                requests.append(request_with_input(profile, f"{label}: error-based payload {payload!r}", item,
                                                   payload, payload=payload))
            for context_name, true_payload, false_payload in boolean_pairs(value, numeric):
                true_index = len(requests)
                requests.append(request_with_input(profile, f"{label}: always-true condition ({context_name})",
                                                   item, true_payload, payload=true_payload))
                requests.append(request_with_input(profile, f"{label}: always-false condition ({context_name})",
                                                   item, false_payload, payload=false_payload))
                false_index = true_index + 1
                assertions.append(assertion(
                    "status", "equals", f"{{{{responses[{true_index}].status}}}}", request=false_index,
                    description=f"{label}: true and false conditions ({context_name}) get the same status",
                ))
                assertions.append(assertion(
                    "body", "equals", f"{{{{responses[{true_index}].body}}}}", request=false_index, compare="similar",
                    description=f"{label}: true and false conditions ({context_name}) get similar bodies",
                ))
            for database, payload in time_payloads(value, delay, numeric):
                requests.append(request_with_input(profile, f"{label}: time-based payload ({database}, {delay} s)",
                                                   item, payload, payload=payload, timeout=(delay + 10) * 1000))
        assertions.insert(0, assertion(
            "body", "notContains", DB_ERROR_SIGNATURES, ignoreCase=True,
            description="No answer carries database error text",
        ))
        assertions.insert(1, assertion(
            "duration", "lessThan", int(delay * 1000 * 0.8),
            description=f"No answer is delayed by a time-based payload ({delay} s)",
        ))
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: SQL injection payloads in each input ({inputs_named(inputs)}) must not "
                "produce database errors, different answers for true and false conditions, or delays."
            ),
            requests=requests,
            assertions=assertions,
        )
