"""Tiny Flask app instrumented with the Metlo agent (either version)."""
from flask import Flask, jsonify, request

from metlo.flask import MetloFlask

import agent_settings as cfg

app = Flask(__name__)


@app.get("/users/<int:user_id>")
def get_user(user_id):
    return jsonify({"user": {"id": user_id, "name": "Alice", "email": "alice@example.com",
                             "tags": ["admin", "beta"]}})


@app.post("/login")
def login():
    data = request.get_json(silent=True) or {}
    return jsonify({"ok": True, "token": "tok_" + str(data.get("username", "")),
                    "contact": "support@example.com"})


@app.get("/search")
def search():
    return jsonify({"q": request.args.get("q"), "results": []})


if cfg.KIND == "v2":
    MetloFlask(app, cfg.COLLECTOR_URL, cfg.API_KEY, **cfg.v2_options())
else:
    MetloFlask(app, cfg.COLLECTOR_URL, cfg.API_KEY)
