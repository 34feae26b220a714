#!/usr/bin/env bash
# Installs what the hub-only accounts test (tests/hub/test_accounts.py) attacks through when it is
# missing: Debian's openssh-server, cron and at, the services a department's machine usually runs
# and through which a student's password used to start processes outside the hub's limits (issue 37).
# Their daemons are not needed and not started (the test starts its own sshd on a loopback port;
# crontab and at check their deny files themselves). Needs root (CI runs as root); otherwise says what to run,
# and the test reports itself skipped.
set -u
missing=()
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
[ -x /usr/bin/crontab ] || missing+=(cron)
[ -x /usr/bin/at ] || missing+=(at)
[ ${#missing[@]} = 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "Installing ${missing[*]} for the class server's account tests..." >&2
  # Debian's policy-rc.d hook: the packages' scripts start no daemon (no sshd listening on port 22 of a
  # CI machine); a policy already there (containers have one) is left as it is
  policy=/usr/sbin/policy-rc.d
  own_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && own_policy=1
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
      --no-install-recommends "${missing[@]}" >/dev/null) \
    || echo "warning: could not install ${missing[*]}; their checks will be skipped" >&2
  [ -n "$own_policy" ] && rm -f "$policy"
else
  echo "note: ${missing[*]} missing and not root: run 'sudo apt-get install ${missing[*]}' for the hub tests" >&2
fi
exit 0
