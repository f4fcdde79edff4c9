#!/bin/bash
# Installs what kforge needs from Debian's packages (Debian 12). Safe to run again.
set -euo pipefail
packages=(g++ cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libsqlite3-dev
          libssl-dev libcpp-httplib-dev libgtest-dev libgmock-dev python3 python3-torch)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
