"""What every public-yardstick driver shares (issue #26, "Public yardsticks you run yourselves").

A driver plays the traffic a real user of a running target would make, records each exchange the way
a Metlo agent reports it, feeds the traces to apiscope (``POST /api/v1/log-request/batch``), sets the
testing environment as docs/testgen.md says, runs every applicable template through the runs API and
prints what it found against the target's own list of documented flaws (``flaws/<target>.json``).

Everything here talks HTTP to processes that are already running; nothing installs, builds or starts
a target. Standard library only, plus ``psycopg`` (already in apiscope's environment) when a target's
data is read from PostgreSQL.

Harm is measured twice, independently:
- ``Snapshot``: the target's data (its database, read directly) before the tests and after them; every
  row of a user seen in traffic who is not a test identity that changed or disappeared is a harmful
  effect, and so is a table that was emptied or re-seeded;
- ``AuditProxy``: the runner is pointed at a loopback proxy in front of the target, which logs every
  request the tests sent, so that requests naming users or objects of traffic in a write, and calls
  of state-resetting routes, are listed by what was sent, not only by their effect.
"""
from __future__ import annotations

import http.client
import json
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode, urlsplit

HERE = Path(__file__).resolve().parent


# ---------------------------------------------------------------------------------------------- HTTP

@dataclass
class Answer:
    status: int
    headers: dict
    text: str

    def json(self):
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def http_call(base_url: str, method: str, path: str, *, headers: dict | None = None, body: bytes | None = None,
              timeout: float = 30) -> Answer:
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        raw = response.read()
        return Answer(response.status, {k: v for k, v in response.getheaders()}, raw.decode("utf-8", "replace"))
    finally:
        connection.close()


class Recorder:
    """A client of the target that keeps every exchange as a Metlo-agent trace (the shape of
    DECISIONS §9: request url/headers/body/method, response status/headers/body, meta)."""

    USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) realworld-client/1.0"

    def __init__(self, base_url: str, host: str | None = None):
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self.host = host or parts.netloc
        self.port = parts.port or 80
        self.traces: list[dict] = []
        self._client_port = 40000

    def call(self, method: str, path: str, *, token: str | None = None, scheme: str = "Bearer",
             json_body=None, form: dict | None = None, query: dict | None = None, headers: dict | None = None,
             record: bool = True) -> Answer:
        sent = {"Accept": "application/json", "User-Agent": self.USER_AGENT, **(headers or {})}
        if token:
            sent["Authorization"] = f"{scheme} {token}".strip()
        body = b""
        if json_body is not None:
            body = json.dumps(json_body).encode()
            sent["Content-Type"] = "application/json"
        elif form is not None:
            body = urlencode(form).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        target = path + (("?" + urlencode(query)) if query else "")
        answer = http_call(self.base_url, method, target, headers=sent, body=body or None)
        if record:
            self._client_port += 1
            self.traces.append({
                "request": {
                    "url": {"host": self.host, "path": path,
                            "parameters": [{"name": k, "value": str(v)} for k, v in (query or {}).items()]},
                    "headers": [{"name": k, "value": v} for k, v in sent.items()],
                    "body": body.decode(), "method": method},
                "response": {"status": answer.status,
                             "headers": [{"name": k, "value": v} for k, v in answer.headers.items()],
                             "body": answer.text},
                "meta": {"incoming": True, "source": "127.0.0.1", "sourcePort": str(self._client_port),
                         "destination": "127.0.0.1", "destinationPort": str(self.port)},
            })
        return answer


# ------------------------------------------------------------------------------------------ apiscope

class Apiscope:
    """apiscope's public API, with an admin key (the runs API and the environment need one)."""

    def __init__(self, base_url: str, key: str):
        self.base_url, self.key = base_url.rstrip("/"), key

    def request(self, method: str, path: str, body=None) -> Answer:
        headers = {"Authorization": self.key, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        answer = http_call(self.base_url, method, path, headers=headers, body=data, timeout=120)
        if answer.status >= 400:
            raise RuntimeError(f"apiscope {method} {path} answered {answer.status}: {answer.text[:500]}")
        return answer

    def ingest(self, traces: list[dict], host: str, *, settle_seconds: float = 8, timeout: float = 300) -> int:
        """Posts the traces in batches and waits until the worker has analysed them (the host's endpoint
        list and their last activity stop changing). Answers the number of endpoints."""
        for start in range(0, len(traces), 500):
            self.request("POST", "/api/v1/log-request/batch", traces[start:start + 500])
        deadline, last, stable_since = time.monotonic() + timeout, None, time.monotonic()
        while time.monotonic() < deadline:
            items = self.endpoints(host)
            state = sorted((e["method"], e["path"], e.get("lastActive")) for e in items)
            if state != last:
                last, stable_since = state, time.monotonic()
            elif items and time.monotonic() - stable_since >= settle_seconds:
                return len(items)
            time.sleep(1)
        raise RuntimeError(f"traffic of {host} not analysed within {timeout} s")

    def endpoints(self, host: str) -> list[dict]:
        return self.request("GET", f"/api/v1/endpoints?hosts={host}&limit=500").json() or []

    def set_environment(self, env: dict) -> None:
        self.request("PUT", "/api/v1/testing/global-env", env)

    def run(self, host: str, *, endpoint: str | None = None, method: str | None = None, timeout: float = 3600) -> dict:
        """Every applicable template of every endpoint of the host, or of one endpoint (a run without
        ``type``); the run's detail."""
        body = {"host": host} | ({"endpoint": endpoint, "method": method} if endpoint else {})
        run = self.request("POST", "/api/v1/testing/runs", body).json()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            detail = self.request("GET", f"/api/v1/testing/runs/{run['uuid']}").json()
            if detail["status"] in ("DONE", "FAILED"):
                return detail
            time.sleep(3)
        raise RuntimeError(f"run {run['uuid']} not finished within {timeout} s")


# ------------------------------------------------------------------------------------ audit proxy

@dataclass
class Sent:
    method: str
    path: str
    headers: dict
    body: str
    status: int | None

    @property
    def marker(self) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == "x-apiscope-test"), None)


class AuditProxy:
    """A loopback reverse proxy in front of the target: every request the test runner sends goes
    through it and is logged (method, path with query, headers, body, the target's status)."""

    def __init__(self, target_url: str):
        self.target_url = target_url.rstrip("/")
        self.sent: list[Sent] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "connection", "content-length")}
                record = Sent(self.command, self.path, headers, body.decode("utf-8", "replace"), None)
                proxy.sent.append(record)
                try:
                    answer = http_call(proxy.target_url, self.command, self.path, headers=headers,
                                       body=body or None, timeout=60)
                except OSError as exc:
                    self.send_error(502, f"target unreachable: {exc}")
                    return
                record.status = answer.status
                payload = answer.text.encode()
                self.send_response(answer.status)
                for k, v in answer.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------------------- snapshots

class Snapshot:
    """Every row of every listed table, keyed by primary key, from SQLite (``sqlite:///path``),
    PostgreSQL (``postgres://…``, optionally ``?schema=``) or MariaDB/MySQL (not supported here)."""

    def __init__(self, url: str, tables: dict[str, str]):
        self.url, self.tables = url, tables  # table -> the column that identifies a row (a natural key
        # where the target has one, so that a re-seeded table shows as rows removed, not as rows changed)

    def _mysql(self) -> dict[str, dict]:
        return {t: {_key(row, pk): row for row in _mysql_rows(self.url, t)} for t, pk in self.tables.items()}

    def take(self) -> dict[str, dict]:
        if self.url.startswith("sqlite:///"):
            path = "/" + self.url[len("sqlite:///"):].lstrip("/")
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            connection.row_factory = sqlite3.Row
            try:
                return {t: {_key(row, pk): dict(row) for row in connection.execute(f'SELECT * FROM "{t}"')}
                        for t, pk in self.tables.items()}
            finally:
                connection.close()
        if self.url.startswith("mysql://"):
            return self._mysql()
        import psycopg
        from psycopg.rows import dict_row

        with psycopg.connect(self.url, row_factory=dict_row) as connection:
            out = {}
            for t, pk in self.tables.items():
                rows = connection.execute(f'SELECT * FROM "{t}"').fetchall()
                out[t] = {_key(row, pk): {k: _plain(v) for k, v in row.items()} for row in rows}
            return out


def _mysql_rows(url: str, table: str) -> list[dict]:
    """Rows of a MariaDB/MySQL table through the ``mysql`` client (batch mode: tab-separated, escaped)."""
    import subprocess
    parts = urlsplit(url)
    command = ["mysql", "-h", parts.hostname or "127.0.0.1", "-P", str(parts.port or 3306), "-u", parts.username or "root",
               "--batch", "-e", f"SELECT * FROM `{table}`", parts.path.lstrip("/")]
    env = {"MYSQL_PWD": parts.password or "", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout.splitlines()
    if not out:
        return []
    names = out[0].split("\t")

    def unescape(v):
        return None if v == "NULL" else v.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
    return [dict(zip(names, map(unescape, line.split("\t")))) for line in out[1:]]


def _key(row, pk):
    return tuple(row[c] for c in pk) if isinstance(pk, tuple) else row[pk]


def _plain(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


@dataclass
class Change:
    table: str
    key: object
    kind: str  # changed | removed | added
    owner: str | None
    before: dict | None
    after: dict | None

    def describe(self) -> str:
        if self.kind == "changed":
            diff = {k: (self.before[k], self.after.get(k)) for k in self.before if self.before[k] != self.after.get(k)}
            shown = ", ".join(f"{k}: {_short(a)} -> {_short(b)}" for k, (a, b) in diff.items())
            return f"{self.table} {self.key} (owner {self.owner}) changed: {shown}"
        return f"{self.table} {self.key} (owner {self.owner}) {self.kind}"


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def diff(before: dict, after: dict, owner_of) -> list[Change]:
    changes = []
    for table, rows in before.items():
        now = after.get(table, {})
        for key, row in rows.items():
            if key not in now:
                changes.append(Change(table, key, "removed", owner_of(table, row, before), row, None))
            elif now[key] != row:
                changes.append(Change(table, key, "changed", owner_of(table, row, before), row, now[key]))
        for key, row in now.items():
            if key not in rows:
                changes.append(Change(table, key, "added", owner_of(table, row, after), None, row))
    return changes


# ---------------------------------------------------------------------------------------- evaluation

@dataclass
class Flaw:
    id: str
    title: str
    owasp: str
    templates: list[str]
    endpoint: str  # regex on "METHOD /path/pattern"
    in_reach: bool = True
    why_out_of_reach: str = ""
    present_in_secure_mode: bool = False
    message: str = ""  # regex the result's message or a failed check's message must contain
    note: str = ""

    def matches(self, result: dict, *, failed_only: bool = True) -> bool:
        if result["templateName"] not in self.templates:
            return False
        if re.fullmatch(self.endpoint, f"{result['method']} {result['endpoint']}") is None:
            return False
        if self.message and failed_only and result["outcome"] == "FAILED":
            texts = [result.get("message") or ""] + [c.get("message") or "" for c in result.get("checks") or []
                                                     if c.get("outcome") == "FAILED"]
            return any(re.search(self.message, t, re.I) for t in texts)
        return True


@dataclass
class FlawList:
    target: str
    source: str
    flaws: list[Flaw]
    verdicts: list[dict] = field(default_factory=list)  # hand-checked FAILED results no flaw explains

    @classmethod
    def load(cls, name: str) -> "FlawList":
        data = json.loads((HERE / "flaws" / f"{name}.json").read_text())
        return cls(data["target"], data["source"], [Flaw(**f) for f in data["flaws"]], data.get("verdicts", []))

    def verdict(self, result: dict, mode: str) -> dict | None:
        """The hand-checked verdict on a FAILED result: ``{templates, endpoint, mode?, message?,
        verdict: "true"|"false", reason}``; ``mode`` "any" (default) or the run's mode; ``message`` a
        regex the result's message must contain."""
        for v in self.verdicts:
            if v.get("mode", "any") not in ("any", mode, mode.split("-")[0]):
                continue
            if result["templateName"] not in v["templates"]:
                continue
            if not re.fullmatch(v["endpoint"], f"{result['method']} {result['endpoint']}"):
                continue
            if v.get("message") and not re.search(v["message"], result.get("message") or "", re.I):
                continue
            return v
        return None


def label(result: dict) -> str:
    return f"{result['templateName']} {result['method']} {result['endpoint']}"


def first_line(text: str, limit: int = 220) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit] + "…"


def asked_object_ids(results: list[dict]) -> set[str]:
    """The ``objectIds`` entries the results ask to be configured (``objectIds.book``,
    ``identities.bob.objectIds.book``), read from their messages and checks."""
    found = set()
    for r in results:
        texts = [r.get("message") or ""] + [c.get("message") or "" for c in r.get("checks") or []]
        for text in texts:
            found.update(re.findall(r"(?:identities\.[\w-]+\.)?objectIds\.[\w-]+", text))
    return found


@dataclass
class Evaluation:
    target: str
    mode: str
    run: dict
    flaws: FlawList
    secure: bool
    changes: list[Change]
    traffic_users: set[str]
    test_users: set[str]
    sent: list[Sent]
    harmful_requests: list[str]
    extra: dict = field(default_factory=dict)
    saved: dict | None = None  # a saved results file being judged again (its harm figures are kept as measured)

    @property
    def results(self) -> list[dict]:
        return self.run.get("results") or []

    def failed(self) -> list[dict]:
        return [r for r in self.results if r["outcome"] == "FAILED"]

    def classify(self):
        found, true, false, unreviewed = {}, [], [], []
        for r in self.failed():
            verdict = self.flaws.verdict(r, self.mode)
            if verdict:  # checked by hand against the target's source: decides before the flaw list
                if verdict["verdict"] == "true":
                    flaw = next((f for f in self.flaws.flaws if f.id == verdict.get("flaw")), None)
                    if flaw:
                        found.setdefault(flaw.id, []).append(r)
                    true.append((r, verdict["reason"]))
                else:
                    false.append((r, verdict["reason"]))
                continue
            flaw = next((f for f in self.flaws.flaws if f.matches(r)), None)
            if flaw and (not self.secure or flaw.present_in_secure_mode):
                found.setdefault(flaw.id, []).append(r)
                true.append((r, f"documented flaw {flaw.id}"))
            elif self.secure:
                false.append((r, "secure mode: no documented flaw of this mode explains it"))
            else:
                unreviewed.append(r)
        return found, true, false, unreviewed

    def harmful_lines(self) -> list[str]:
        if self.saved is not None:
            return self.saved.get("harmfulChanges", [])
        return [c.describe() for c in self.harmful_changes()]

    def sent_counts(self) -> tuple[int, int]:
        if self.saved is not None:
            return self.saved["summary"]["requestsSent"], self.saved["summary"]["markedRequests"]
        return len(self.sent), sum(1 for s in self.sent if s.marker)

    def harmful_changes(self) -> list[Change]:
        out = []
        for c in self.changes:
            if c.kind == "added":
                continue
            if c.owner in self.test_users:
                continue
            out.append(c)
        return out

    def report(self) -> str:
        found, true, false, unreviewed = self.classify()
        results = self.results
        n = len(results)
        inconclusive = [r for r in results if r["outcome"] == "INCONCLUSIVE"]
        errors = [r for r in results if r["outcome"] == "ERROR"]
        in_reach = [f for f in self.flaws.flaws if f.in_reach and (not self.secure or f.present_in_secure_mode)]
        lines = [f"== {self.target} ({self.mode}) — run {self.run.get('uuid')} status {self.run.get('status')}"
                 + (f": {self.run.get('error')}" if self.run.get("error") else ""),
                 f"flaw list: {self.flaws.source}",
                 f"tests: {n}  passed {sum(r['outcome'] == 'PASSED' for r in results)}  failed {len(self.failed())}  "
                 f"errors {len(errors)}  inconclusive {len(inconclusive)} "
                 f"({(100 * len(inconclusive) / n) if n else 0:.0f}%)  not generated {self.run.get('numNotGenerated')}",
                 ""]
        if not self.secure:
            lines.append(f"in-reach documented flaws found: {sum(f.id in found for f in in_reach)} of {len(in_reach)}")
            for f in in_reach:
                mark = "FOUND " if f.id in found else "missed"
                lines.append(f"  {mark} {f.id}: {f.title} [{f.owasp}] ({'/'.join(f.templates)} on {f.endpoint})")
                for r in found.get(f.id, [])[:2]:
                    lines.append(f"         by {label(r)}: {first_line(r['message'], 160)}")
                if f.id not in found:
                    related = [r for r in results if f.matches(r)]
                    for r in related[:3]:
                        lines.append(f"         {r['outcome']} {label(r)}: {first_line(r['message'], 160)}")
                    if not related:
                        lines.append("         no test of that template was generated for that endpoint")
            out = [f for f in self.flaws.flaws if not f.in_reach]
            if out:
                lines.append("  out of reach:")
                lines += [f"    {f.id}: {f.title} — {f.why_out_of_reach}" for f in out]
        else:
            present = [f for f in in_reach]
            lines.append(f"secure mode: documented flaws still present in this mode: {len(present)}"
                         f" (found {sum(f.id in found for f in present)})")
            for f in present:
                lines.append(f"  {'FOUND ' if f.id in found else 'missed'} {f.id}: {f.title}")
        lines.append("")
        lines.append(f"false findings: {len(false)}")
        lines += [f"  FALSE {label(r)}: {first_line(r['message'], 200)}\n        why false: {why}" for r, why in false]
        if unreviewed:
            lines.append(f"FAILED not explained by a documented flaw and not yet checked by hand: {len(unreviewed)}")
            lines += [f"  ? {label(r)}: {first_line(r['message'], 200)}" for r in unreviewed]
        other_true = [(r, why) for r, why in true if not why.startswith("documented flaw")]
        if other_true:
            lines.append(f"true findings beyond the documented list (checked by hand): {len(other_true)}")
            lines += [f"  TRUE {label(r)}: {why}" for r, why in other_true]
        lines.append("")
        lines.append(f"INCONCLUSIVE: {len(inconclusive)} of {n}")
        lines += [f"  {label(r)}: {first_line(r['message'], 200)}" for r in inconclusive]
        if errors:
            lines.append(f"ERROR: {len(errors)}")
            lines += [f"  {label(r)}: {first_line(r['message'], 200)}" for r in errors]
        asked = sorted(asked_object_ids(results))
        if asked:
            lines.append(f"objectIds the results ask for: {', '.join(asked)}")
        lines.append("")
        harmful = self.harmful_lines()
        lines.append(f"harmful effects in the target's data (rows of users seen in traffic, not test identities): {len(harmful)}")
        lines += [f"  {h}" for h in harmful[:40]]
        if len(harmful) > 40:
            lines.append(f"  … {len(harmful) - 40} more")
        if self.saved is None:
            own = [c for c in self.changes if c.kind != "added" and c.owner in self.test_users]
            lines.append(f"changes to the test identities' own rows (allowed): {len(own)}")
            lines += [f"  {c.describe()}" for c in own[:15]]
            added = [c for c in self.changes if c.kind == "added"]
            lines.append(f"rows added by the tests: {len(added)}")
        lines.append("")
        sent, marked = self.sent_counts()
        lines.append(f"requests sent by the run (audit proxy): {sent}; carrying X-Apiscope-Test: {marked}")
        lines.append(f"harmful or forbidden requests (DECISIONS §8 turn 3): {len(self.harmful_requests)}")
        lines += [f"  {h}" for h in self.harmful_requests[:40]]
        if len(self.harmful_requests) > 40:
            lines.append(f"  … {len(self.harmful_requests) - 40} more")
        return "\n".join(lines)

    def summary_row(self) -> dict:
        found, true, false, unreviewed = self.classify()
        results = self.results
        in_reach = [f for f in self.flaws.flaws if f.in_reach and (not self.secure or f.present_in_secure_mode)]
        inconclusive = sum(r["outcome"] == "INCONCLUSIVE" for r in results)
        return {"target": self.target, "mode": self.mode, "tests": len(results),
                "inReachFound": sum(f.id in found for f in in_reach), "inReach": len(in_reach),
                "missed": [f.id for f in in_reach if f.id not in found],
                "falseFindings": len(false), "unreviewedFailed": len(unreviewed),
                "inconclusive": inconclusive, "inconclusiveShare": round(inconclusive / len(results), 3) if results else 0,
                "errors": sum(r["outcome"] == "ERROR" for r in results),
                "harmfulChanges": len(self.harmful_lines()), "harmfulRequests": len(self.harmful_requests),
                "requestsSent": self.sent_counts()[0], "markedRequests": self.sent_counts()[1]}


def print_table(rows: list[dict]) -> str:
    head = ("| target | mode | tests | in-reach flaws found | false findings | unreviewed FAILED | inconclusive "
            "| errors | harmful data changes | harmful requests |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['target']} | {r['mode']} | {r['tests']} | "
                     + (f"{r['inReachFound']} of {r['inReach']}" if not r["mode"].startswith("secure") else
                        f"({r['inReachFound']} of {r['inReach']} still-present flaws)")
                     + f" | {r['falseFindings']} | {r['unreviewedFailed']} | {r['inconclusive']} "
                       f"({100 * r['inconclusiveShare']:.0f}%) | {r['errors']} | {r['harmfulChanges']} | {r['harmfulRequests']} |")
    return "\n".join(lines)


def save(evaluation: Evaluation, results_dir: Path) -> None:
    results_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{evaluation.target}-{evaluation.mode}"
    (results_dir / f"{stem}.txt").write_text(evaluation.report() + "\n")
    slim = [{k: r.get(k) for k in ("name", "templateName", "method", "endpoint", "outcome", "severity", "message",
                                    "numRequests")} | {"checks": [{k: c.get(k) for k in ("description", "outcome", "message")}
                                                                  for c in r.get("checks") or [] if c.get("outcome") != "PASSED"]}
            for r in evaluation.results]
    (results_dir / f"{stem}.json").write_text(json.dumps({
        "summary": evaluation.summary_row(),
        "run": {k: v for k, v in evaluation.run.items() if k != "results"},
        "results": slim,
        "harmfulChanges": evaluation.harmful_lines(),
        "harmfulRequests": evaluation.harmful_requests,
        **evaluation.extra,
    }, indent=1, default=str) + "\n")


VOCABULARY_KEYS = re.compile(r"(?i)(role|group|scope|permission|type|status|kind|tier|plan)s?$")


def _values(body: str) -> list[str]:
    """The string and number values of a JSON or form body (keys left out, and values under
    vocabulary keys such as ``role``: ``"role": "admin"`` names a role, not the user ``admin``)."""
    try:
        data = json.loads(body)
    except ValueError:
        from urllib.parse import parse_qsl
        pairs = parse_qsl(body)
        return [v for k, v in pairs if not VOCABULARY_KEYS.search(k)] if pairs else ([body] if body else [])
    out = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool) and not VOCABULARY_KEYS.search(key):
            out.append(str(value))
    walk(data)
    return out


def forbidden_requests(sent: list[Sent], *, traffic_names: set[str], destructive: str | None,
                       traffic_paths: list[str] = ()) -> list[str]:
    """Requests DECISIONS §8 (turn 3) says a test never sends: a state-resetting route, or a write
    (POST, PUT, PATCH, DELETE) whose path segments, query values or body values name a user or an
    object of a user seen in traffic who is no test identity (login and registration bodies included:
    a credential flow goes only to test identities or users that do not exist). A name counts when a
    whole value or path segment is that name, or starts with it followed by an injection payload
    (``maria' AND '1'='1``). Each is listed once per (method, path, name)."""
    from urllib.parse import parse_qsl, unquote, urlsplit as split

    out, seen = [], set()
    for s in sent:
        parts = split(s.path)
        if destructive and re.search(destructive, parts.path):
            key = ("destructive", s.method, parts.path)
            if key not in seen:
                seen.add(key)
                out.append(f"state-resetting route called: {s.method} {s.path} -> {s.status}")
            continue
        if s.method in ("GET", "HEAD", "OPTIONS"):
            continue
        owned = next((p for p in traffic_paths if re.fullmatch(p, parts.path)), None)
        if owned:
            key = (s.method, parts.path, owned)
            if key not in seen:
                seen.add(key)
                out.append(f"write to an object of a user seen in traffic: {s.method} {s.path} -> {s.status}; "
                           f"body {first_line(s.body, 120)!r}")
            continue
        places = [("path", unquote(seg)) for seg in parts.path.split("/") if seg]
        places += [("query", v) for _, v in parse_qsl(parts.query)]
        places += [("body", v) for v in _values(s.body)]
        for name in sorted(traffic_names):
            for where, value in places:
                if value == name or (value.startswith(name) and value[len(name):len(name) + 1] in ("'", '"', ")", ";", "%")):
                    key = (s.method, parts.path, name)
                    if key not in seen:
                        seen.add(key)
                        out.append(f"write naming {name!r} (seen in traffic) in its {where}: {s.method} {s.path} "
                                   f"-> {s.status}; body {first_line(s.body, 120)!r}")
                    break
    return out


def request_log(sent: list[Sent]) -> list[str]:
    """What the run sent, grouped: ``count x METHOD path -> statuses``, in first-sent order."""
    from collections import OrderedDict
    groups: OrderedDict = OrderedDict()
    for s in sent:
        path = s.path.split("?")[0]
        groups.setdefault((s.method, path), []).append(s.status)
    return [f"{len(st)} x {m} {p} -> {','.join(sorted({str(x) for x in st}))}" for (m, p), st in groups.items()]
