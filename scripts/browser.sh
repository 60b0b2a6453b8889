# Sourced by the test script: Debian's chromium for the console's browser test
# (tests/console/test_browser.py drives /usr/bin/chromium with Playwright, which never downloads
# a browser of its own). Installed with apt-get when missing and running as root, as CI does;
# elsewhere the test is skipped and says why.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing chromium for the browser test (apt-get)"
  if ! apt-get install -y -qq chromium >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq chromium >/dev/null 2>&1 || echo "!! chromium could not be installed: the browser test will be skipped" >&2
  fi
fi
