#!/bin/bash
# Installs what kforge needs from Debian's packages (Debian 12). Safe to run again.
# Recommends stay off, so everything the build, the CPU backend and the tests use is named here:
# torch's load_inline compiles against libtorch-dev's headers, pybind11-dev's and python3-dev's
# Python.h; python3-torch alone has none of them. torch.utils.cpp_extension imports setuptools,
# which python3-torch does not depend on (without python3-setuptools the build worker dies).
set -euo pipefail
packages=(g++ make cmake ninja-build pkg-config git ca-certificates openssl
          nlohmann-json3-dev libcli11-dev libsqlite3-dev libssl-dev libgtest-dev libgmock-dev
          libhiredis-dev libcpp-httplib-dev redis-server
          python3 python3-dev python3-setuptools python3-torch libtorch-dev pybind11-dev)
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
