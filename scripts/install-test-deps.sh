#!/bin/bash
# Packages only the tests need, beyond scripts/install-deps.sh (which the demo, CI's fresh-root
# stage and a new user's set-up run, and which therefore stays free of them): Debian's chromium,
# driven headless through its DevTools protocol by the web UI's browser test (tests/web; no npm,
# no driver). Called by scripts/test.sh. Safe to run again.
set -euo pipefail
packages=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq
  $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}"
fi
