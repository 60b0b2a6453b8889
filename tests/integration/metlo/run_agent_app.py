#!/usr/bin/env python3
"""Run a tiny Flask or Django app instrumented with a Metlo Python agent under
gunicorn, fire a fixed set of sample requests at it, wait for the agent to
flush, then shut everything down.

Stdlib only; run it with any Python 3.8+ (the agent runs inside VENV).

  run_agent_app.py --venv /tmp/venv-v2 --kind v2 --framework flask \
      --collector-url http://127.0.0.1:5055 --api-key KEY --port 8001 \
      [--collector-log /tmp/collector.jsonl] [--workers 1]

--kind v1   metlo 0.0.17: one POST /api/v1/log-request/single per request,
            sent from a thread pool right after the response (no handshake).
--kind v2   metlo 0.1.x: GET /api/v1, /api/v1/verify, /api/v1/agent-config at
            worker start, then POST /api/v2/log-request/batch once a second.

When --collector-log points at the JSONL file written by fake_collector.py the
script polls it (handshake seen, all traces received) instead of sleeping for
fixed times. Exit status 0 when every sample request got its expected status
(and, with --collector-log, every trace arrived); 1 otherwise. A JSON summary
is printed on stdout.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(HERE, "apps")

# (method, path, headers, body, expected status). Keep in sync with apps/.
SAMPLE_REQUESTS = [
    ("GET", "/users/42", {"Accept": "application/json"}, None, 200),
    ("POST", "/login", {"Content-Type": "application/json"},
     json.dumps({"username": "alice", "password": "hunter2",
                 "email": "alice@example.com"}).encode(), 200),
    ("GET", "/search?q=bob%40example.com&page=2",
     {"Authorization": "Bearer sample-token-123"}, None, 200),
    ("POST", "/login", {"Content-Type": "application/x-www-form-urlencoded"},
     b"username=bob&password=pw123", 200),
    ("GET", "/does-not-exist", {}, None, 404),
]

APP_TARGET = {"flask": "flask_app:app", "django": "django_app:application"}


def wait_port(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True  # connect only: sends no HTTP request, makes no trace
        except OSError:
            time.sleep(0.1)
    return False


def read_log(path):
    out = []
    if not path or not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def count_traces(entries, kind, since):
    n = 0
    for e in entries:
        if e["ts"] < since or e["method"] != "POST":
            continue
        if kind == "v1" and e["path"].startswith("/api/v1/log-request/single"):
            n += 1
        elif kind == "v2" and e["path"].startswith("/api/v2/log-request/batch"):
            n += len(e.get("json") or [])
    return n


def handshakes(entries, since):
    return sum(1 for e in entries
               if e["ts"] >= since and e["method"] == "GET"
               and e["path"].startswith("/api/v1/agent-config"))


def send(port, method, path, headers, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                 method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--kind", choices=["v1", "v2"], required=True)
    ap.add_argument("--framework", choices=["flask", "django"], default="flask")
    ap.add_argument("--collector-url", required=True,
                    help="http[s]://host:port of the service (v2: the port is "
                         "passed as BACKEND_PORT/COLLECTOR_PORT)")
    ap.add_argument("--api-key", required=True)
    ap.add_argument("--port", type=int, default=8001, help="port for the app")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--collector-log", help="fake_collector.py JSONL; enables polling")
    ap.add_argument("--startup-wait", type=float, default=None,
                    help="seconds to let the v2 handshake finish when not polling "
                         "(default 2.0 for v2, 0 for v1)")
    ap.add_argument("--spacing", type=float, default=None,
                    help="seconds between sample requests (default 0.6 for v2 so "
                         "every trace gets analysisType=full, 0.05 for v1)")
    ap.add_argument("--flush-wait", type=float, default=None,
                    help="max seconds to wait for the agent to flush (default 3.0 "
                         "for v2 - it flushes every 1 s -, 1.5 for v1)")
    ap.add_argument("--log-level", default="INFO", help="v2 agent log level (TRACE..ERROR)")
    ap.add_argument("--gunicorn-log", default=None, help="file for gunicorn stdout/stderr")
    ap.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                    help="a header added to every sample request (e.g. a security-test run's marker)")
    args = ap.parse_args()
    extra_headers = dict(h.split(":", 1) for h in args.header)

    v2 = args.kind == "v2"
    startup_wait = args.startup_wait if args.startup_wait is not None else (2.0 if v2 else 0.0)
    spacing = args.spacing if args.spacing is not None else (0.6 if v2 else 0.05)
    flush_wait = args.flush_wait if args.flush_wait is not None else (3.0 if v2 else 1.5)

    env = dict(os.environ)
    env.update({
        "METLO_COLLECTOR_URL": args.collector_url,
        "METLO_API_KEY": args.api_key,
        "METLO_AGENT_KIND": args.kind,
        "METLO_LOG_LEVEL": args.log_level,
        "PYTHONUNBUFFERED": "1",
    })
    cmd = [os.path.join(args.venv, "bin", "gunicorn"),
           "--chdir", APPS,
           "--workers", str(args.workers),
           "--bind", f"127.0.0.1:{args.port}",
           "--graceful-timeout", "5",
           "--access-logfile", "-",
           APP_TARGET[args.framework]]
    # Note: no --preload. The v2 agent starts its background runtime when the
    # app module is imported; with --preload that happens in the gunicorn
    # master and the forked workers never send anything.

    t_start = time.time()
    log_fh = open(args.gunicorn_log, "ab") if args.gunicorn_log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, env=env, stdout=log_fh, stderr=subprocess.STDOUT,
                            start_new_session=True)
    summary = {"kind": args.kind, "framework": args.framework, "requests": [],
               "ok": True}
    try:
        if not wait_port(args.port, 30):
            raise SystemExit("app did not start listening")
        if v2:
            if args.collector_log:
                deadline = time.time() + 15
                while handshakes(read_log(args.collector_log), t_start) < args.workers:
                    if time.time() > deadline:
                        summary["ok"] = False
                        summary["error"] = "v2 handshake (GET /api/v1/agent-config) not seen"
                        break
                    time.sleep(0.1)
                time.sleep(0.2)  # config is applied right after the GET returns
            else:
                time.sleep(startup_wait)
        elif startup_wait:
            time.sleep(startup_wait)

        t_req = time.time()
        for method, path, headers, body, expected in SAMPLE_REQUESTS:
            status = send(args.port, method, path, {**headers, **extra_headers}, body)
            summary["requests"].append({"method": method, "path": path,
                                        "status": status, "expected": expected})
            if status != expected:
                summary["ok"] = False
            time.sleep(spacing)

        # Flush: v1 posts each trace from a thread right after the response;
        # v2 buffers and posts everything buffered once per second.
        if args.collector_log:
            want = len(SAMPLE_REQUESTS)
            deadline = time.time() + flush_wait + 5
            got = 0
            while time.time() < deadline:
                got = count_traces(read_log(args.collector_log), args.kind, t_req)
                if got >= want:
                    break
                time.sleep(0.1)
            summary["traces_received"] = got
            if got < want:
                summary["ok"] = False
                summary["error"] = f"only {got}/{want} traces reached the collector"
        else:
            time.sleep(flush_wait)
    finally:
        # SIGTERM = gunicorn graceful stop. v1 finishes queued posts on worker
        # exit; v2 does NOT flush its buffer on exit (hence the wait above).
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if log_fh is not subprocess.DEVNULL:
            log_fh.close()
    summary["seconds"] = round(time.time() - t_start, 2)
    print(json.dumps(summary, indent=1))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
