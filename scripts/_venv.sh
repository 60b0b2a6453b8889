# Sourced by the run and test scripts: make sure .venv exists and holds the
# project's pinned dependencies (reinstalled only when pyproject.toml changes).
VENV="${VENV:-$PWD/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating virtualenv $VENV"
  python3 -m venv "$VENV"
fi
stamp="$VENV/.apiscope-installed"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "==> installing dependencies into $VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip >/dev/null
  "$VENV/bin/pip" install --quiet -e ".[dev]"
  echo "$want" > "$stamp"
fi
export PATH="$VENV/bin:$PATH"
