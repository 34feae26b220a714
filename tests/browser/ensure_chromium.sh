#!/usr/bin/env bash
# Installs Debian's Chromium for the real-browser test when it is missing.
# Needs root (CI runs as root); otherwise says what to run and lets the
# browser test report itself as skipped with that reason.
set -u
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = 0 ]; then
  echo "Installing Debian's chromium for the browser test..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will be skipped" >&2
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will be skipped" >&2
else
  echo "note: /usr/bin/chromium missing and not root: run 'sudo apt-get install chromium' for the browser test" >&2
fi
exit 0
