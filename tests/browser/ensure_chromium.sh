#!/usr/bin/env bash
# Installs what the real-browser test needs when it is missing: Debian's Chromium and a CJK
# font (fonts-noto-cjk), without which the Chinese notebooks would show empty boxes in the
# browser and could not be judged. Needs root (CI runs as root); otherwise says what to run
# and lets the browser test report itself as skipped with that reason.
set -u
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
fc-list 2>/dev/null | grep -qi "Noto Sans CJK" || missing+=(fonts-noto-cjk)
[ ${#missing[@]} = 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "Installing ${missing[*]} for the browser test..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
      "${missing[@]}" >/dev/null) \
    || echo "warning: could not install ${missing[*]}; the browser test will be skipped" >&2
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "warning: could not install ${missing[*]}; the browser test will be skipped" >&2
else
  echo "note: ${missing[*]} missing and not root: run 'sudo apt-get install ${missing[*]}' for the browser test" >&2
fi
exit 0
