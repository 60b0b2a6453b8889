"""The monitored app of ``bench/hostile.py``: a Flask app answering every path, with Metlo 0.0.17's agent.

Run by the agent's own virtualenv (never this project's): ``gunicorn hostile_app:app`` with
``METLO_COLLECTOR_URL`` and ``METLO_API_KEY`` set. Every request it answers is relayed by the agent
as one ``POST /api/v1/log-request/single``, as it would be for any app an outsider can reach.
"""
import os

from flask import Flask, jsonify, request
from metlo.flask import MetloFlask

app = Flask(__name__)
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


@app.route("/", defaults={"path": ""}, methods=METHODS)
@app.route("/<path:path>", methods=METHODS)
def any_path(path):
    return jsonify({"ok": True, "path": "/" + path, "size": len(request.get_data())})


MetloFlask(app, os.environ["METLO_COLLECTOR_URL"], os.environ["METLO_API_KEY"])
