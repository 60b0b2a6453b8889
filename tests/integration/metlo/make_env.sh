#!/usr/bin/env bash
# Create a virtualenv with one of the Metlo Python agents plus a tiny-app stack.
#
#   make_env.sh VENV_DIR AGENT_VERSION
#
# AGENT_VERSION: 0.0.17 (pure-Python agent, "v1": POST /api/v1/log-request/single)
#                0.1.5  (Rust-backed agent,  "v2": POST /api/v2/log-request/batch)
# Any other 0.0.x / 0.1.x version is installed the same way, untested.
#
# Env: PYTHON (default python3; needs >= 3.10 because of Django 5.2),
#      PIP_EXTRA_ARGS (e.g. "--no-cache-dir").
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 VENV_DIR AGENT_VERSION" >&2
    exit 2
fi
VENV_DIR=$1
AGENT_VERSION=$2
PYTHON=${PYTHON:-python3}

# Pinned app stack (the versions the captures in ../metlo-samples were made with).
APP_PINS=(
    "Flask==3.0.3"
    "Werkzeug==3.1.9"
    "Jinja2==3.1.6"
    "MarkupSafe==3.0.4"
    "itsdangerous==2.2.0"
    "click==8.5.1"
    "blinker==1.9.0"
    "Django==5.2.19"
    "asgiref==3.13.0"
    "sqlparse==0.6.1"
    "gunicorn==23.0.0"
    "packaging==25.0"
)

case "$AGENT_VERSION" in
    0.0.*) AGENT_PINS=("metlo==$AGENT_VERSION") ;;
    # metlo 0.1.x declares the exact bindings version it needs; pin it anyway.
    0.1.5) AGENT_PINS=("metlo==0.1.5" "metlo-python-agent-bindings-common==0.0.2") ;;
    0.1.*) AGENT_PINS=("metlo==$AGENT_VERSION") ;;
    *) echo "unsupported AGENT_VERSION: $AGENT_VERSION" >&2; exit 2 ;;
esac

start=$(date +%s.%N)
"$PYTHON" -m venv "$VENV_DIR"
"$VENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check ${PIP_EXTRA_ARGS:-} \
    "${AGENT_PINS[@]}" "${APP_PINS[@]}"
end=$(date +%s.%N)

# Sanity: the agent modules import (0.1.x also loads the compiled bindings).
"$VENV_DIR/bin/python" - "$AGENT_VERSION" <<'PY'
import sys, importlib
importlib.import_module("metlo.flask")  # needs flask
if sys.argv[1].startswith("0.1."):
    import metlo_python_agent_bindings_common as b
    assert hasattr(b, "setup") and hasattr(b, "process_trace")
print("metlo", sys.argv[1], "ok")
PY
"$PYTHON" -c 'import sys; print("venv %s ready in %.1f s" % (sys.argv[1], float(sys.argv[3]) - float(sys.argv[2])))' "$VENV_DIR" "$start" "$end"
