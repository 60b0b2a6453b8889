"""Public yardsticks of issue #26: run apiscope's generated security tests against a deliberately
vulnerable public API that is already running, the way a new user would, and print what they found.

    python bench/realworld/run.py vampi --target http://127.0.0.1:5102 --mode vulnerable \
        --apiscope http://127.0.0.1:8126 --key-file KEYFILE --db sqlite:////path/to/vampi/database/database.db

Steps: play the target's ordinary traffic (recorded as Metlo-agent traces) -> ``POST
/api/v1/log-request/batch`` -> wait for the worker -> snapshot the target's data -> ``PUT
/api/v1/testing/global-env`` as docs/testgen.md says (login recipes, a second identity, objectIds) with
``baseUrl`` pointing at an audit proxy in front of the target -> ``POST /api/v1/testing/runs {host}``
(every applicable template) -> when the results ask for objectIds the target can provide, set them and
run once more -> snapshot again -> print the table and the details, and write them to
``bench/realworld/results/<target>-<mode>.{txt,json}``.

See bench/realworld/README.md for how each target is started by hand.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (HERE, Apiscope, AuditProxy, Evaluation, FlawList, Recorder, Snapshot,  # noqa: E402
                    asked_object_ids, diff, forbidden_requests, print_table, request_log, save)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="vampi, capital, vapi or dvga (a module of bench/realworld)")
    parser.add_argument("--target", dest="url", help="the running target's base URL")
    parser.add_argument("--judge-again", action="store_true", help="send nothing: judge the saved results of "
                        "<target>-<mode> again with the current flaw list and verdicts (after checking FAILED by hand)")
    parser.add_argument("--mode", default="vulnerable", help="vulnerable, secure…: a label (a target may read a "
                        "suffix, e.g. vampi's '-noreset'); 'secure…' counts every FAILED not explained by a flaw the "
                        "secure mode keeps as false")
    parser.add_argument("--apiscope", default="http://127.0.0.1:8000")
    parser.add_argument("--key", help="an admin API key")
    parser.add_argument("--key-file", help="a file holding the admin key")
    parser.add_argument("--db", help="the target's database (sqlite:///ABS/PATH or postgres://…) for the data diff")
    parser.add_argument("--host", help="the host name traffic is reported under (default: <target>-<mode>.local; "
                        "apiscope keys hosts by name without port, so two targets on one address need names)")
    parser.add_argument("--rounds", type=int, default=2, help="runs at most (a second one when the results ask "
                        "for objectIds the target can provide)")
    parser.add_argument("--results", default=str(HERE / "results"))
    args = parser.parse_args(argv)

    if args.judge_again:
        return _judge_again(args)
    if not args.url:
        parser.error("--target is required")
    key = args.key or Path(args.key_file).read_text().strip()
    module = importlib.import_module(args.target)
    target = module.Target(**({"mode": args.mode} if "mode" in module.Target.__init__.__code__.co_varnames else {}))
    api = Apiscope(args.apiscope, key)
    flaws = FlawList.load(target.name)

    started = time.monotonic()
    recorder = Recorder(args.url, host=args.host or f"{target.name}-{args.mode}.local")
    api.request("DELETE", "/api/v1/hosts", {"hosts": [recorder.host]})  # a rerun starts from a fresh inventory
    target.play(recorder)
    print(f"traffic: {len(recorder.traces)} exchanges with {recorder.host}", flush=True)
    endpoints = api.ingest(recorder.traces, recorder.host)
    print(f"inventory: {endpoints} endpoints of {recorder.host}", flush=True)
    for e in sorted(api.endpoints(recorder.host), key=lambda e: (e["path"], e["method"])):
        print(f"  {e['method']:6} {e['path']}  authenticated={e.get('isAuthenticatedDetected')}")

    snapshot = Snapshot(args.db, target.tables) if args.db else None
    before = snapshot.take() if snapshot else None
    proxy = AuditProxy(args.url)
    runs = []
    try:
        if hasattr(target, "plan"):
            # One environment per part of the API (a target whose parts take different credentials: the
            # testing environment holds one credential per identity, so each part is run on its own).
            inventory = api.endpoints(recorder.host)
            for env, endpoint, method in target.plan(proxy.url, inventory):
                api.set_environment(env)
                run = api.run(recorder.host, endpoint=endpoint, method=method)
                runs.append(run)
                print(f"run {run['uuid']} {method} {endpoint}: {run['status']} tests={run['numTests']} "
                      f"failed={run['numFailed']} errors={run['numErrors']} inconclusive={run['numInconclusive']} "
                      f"{run.get('error') or ''}", flush=True)
            env = {"perEndpoint": True}
        else:
            env = target.environment(proxy.url)
            for round_no in range(1, args.rounds + 1):
                api.set_environment(env)
                run = api.run(recorder.host)
                runs.append(run)
                print(f"round {round_no}: run {run['uuid']} {run['status']} tests={run['numTests']} "
                      f"passed={run['numPassed']} failed={run['numFailed']} errors={run['numErrors']} "
                      f"inconclusive={run['numInconclusive']} {run.get('error') or ''}", flush=True)
                added = _provide(target, env, asked_object_ids(run.get("results") or []))
                if not added or round_no == args.rounds:
                    break
                print(f"  the results ask for objectIds; set: {', '.join(added)}", flush=True)
    finally:
        proxy.stop()
    after = snapshot.take() if snapshot else None
    changes = diff(before, after, target.owner_of) if snapshot else []
    evaluation = Evaluation(
        target=target.name, mode=args.mode, run=_measured(runs, hasattr(target, "plan")), flaws=flaws, secure=args.mode.split("-")[0] == "secure",
        changes=changes, traffic_users=target.traffic_users, test_users=target.test_users, sent=proxy.sent,
        harmful_requests=forbidden_requests(proxy.sent, traffic_names=target.traffic_names(),
                                            destructive=target.destructive,
                                            traffic_paths=getattr(target, "traffic_paths", lambda: [])()),
        extra={"rounds": [{k: r.get(k) for k in ("uuid", "status", "numTests", "numPassed", "numFailed", "numErrors",
                                                 "numInconclusive", "error")} for r in runs],
               "environment": _masked(env), "dataDiffMeasured": bool(snapshot),
               "requestLog": request_log(proxy.sent), "trafficExchanges": len(recorder.traces), "endpoints": endpoints,
               "minutes": round((time.monotonic() - started) / 60, 1)})
    print()
    print(evaluation.report())
    if not snapshot:
        print("(no --db given: the target's data was not diffed)")
    print()
    print(print_table([evaluation.summary_row()]))
    save(evaluation, Path(args.results))
    return 0


def _judge_again(args) -> int:
    results_dir = Path(args.results)
    saved = json.loads((results_dir / f"{args.target}-{args.mode}.json").read_text())
    run = dict(saved["run"], results=saved["results"])
    for r in run["results"]:
        r.setdefault("checks", [])
    evaluation = Evaluation(target=args.target, mode=args.mode, run=run, flaws=FlawList.load(args.target),
                            secure=args.mode.split("-")[0] == "secure", changes=[], traffic_users=set(), test_users=set(), sent=[],
                            harmful_requests=saved.get("harmfulRequests", []),
                            extra={k: v for k, v in saved.items()
                                   if k not in ("summary", "run", "results", "harmfulChanges", "harmfulRequests")},
                            saved=saved)
    print(evaluation.report())
    print()
    print(print_table([evaluation.summary_row()]))
    save(evaluation, results_dir)
    return 0


def _measured(runs: list[dict], per_endpoint: bool) -> dict:
    """The run the table is about: the last round, or every per-endpoint run put together."""
    if not per_endpoint:
        return runs[-1]
    merged = {"uuid": f"{len(runs)} runs", "status": ",".join(sorted({r["status"] for r in runs})),
              "error": "; ".join(r["error"] for r in runs if r.get("error")) or None, "results": []}
    for key in ("numTests", "numPassed", "numFailed", "numErrors", "numInconclusive", "numNotGenerated"):
        merged[key] = sum(r.get(key) or 0 for r in runs)
    for r in runs:
        merged["results"] += r.get("results") or []
    return merged


def _provide(target, env: dict, asked: set[str]) -> list[str]:
    """Sets the objectIds entries the results asked for that the target can provide and that are not set."""
    added = []
    for entry in sorted(asked):
        parts = entry.split(".")
        if parts[0] == "identities":
            name, resource = parts[1], parts[3]
            holder = next((i for i in env.get("identities", []) if i["name"] == name), None)
            identity = "second"
        else:
            resource, holder, identity = parts[1], env, "primary"
        if holder is None or resource in (holder.get("objectIds") or {}):
            continue
        value = target.object_ids(resource, identity)
        if value is not None:
            holder.setdefault("objectIds", {})[resource] = value
            added.append(f"{entry}={value}")
    return added


def _masked(env: dict) -> dict:
    """The environment as configured, login passwords left out of the saved results."""
    def walk(value, key=""):
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return "***" if "password" in key.lower() else value
    return walk(env)


if __name__ == "__main__":
    sys.exit(main())
