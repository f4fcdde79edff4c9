#!/bin/bash
# A kforge with everything, HTTP included (serve, worker, the model client), for a GPU machine
# that has none of our Debian libraries: the static build (KFORGE_STATIC) leaves HTTP out, since
# Debian ships cpp-httplib only as a shared library. This builds kforge dynamically in
# BUILD (default build-gpu, Release, no tests) with an RPATH of $ORIGIN/lib (DT_RPATH, so the
# libraries' own dependencies are found there too), and copies into OUT (default .devnet):
#
#   OUT/kforge, OUT/libkforge_sandbox.so   the binaries (stripped)
#   OUT/lib/                              every shared library kforge needs except glibc's
#                                         own (libc, libm, the loader, ...): libstdc++,
#                                         cpp-httplib, OpenSSL, SQLite, zlib, brotli
#
# glibc is the GPU machine's: it must be at least this machine's (Debian 12: 2.36). The
# sandbox library needs only glibc. Python children never see OUT/lib (an RPATH is not
# inherited, unlike LD_LIBRARY_PATH), so the machine's own torch keeps its libstdc++.
# Carry OUT to the machine (the device's `carry`), then `OUT/kforge doctor`.
#
# --redis also copies Debian's redis-server (for `kforge serve --redis` and its workers on a
# machine without one) to OUT/redis-server, and the libraries it needs but glibc's to OUT/lib.
# It has no RPATH: run it as `LD_LIBRARY_PATH=OUT/lib OUT/redis-server ...`, that one command
# alone (never export the variable: python and torch must keep the machine's own libraries).
# --redis-only adds that to an existing OUT and builds nothing.
#
#   scripts/gpu-bundle.sh [--redis | --redis-only] [OUT] [BUILD]
set -euo pipefail
with_redis=0
with_kforge=1
case "${1:-}" in
  --redis) with_redis=1; shift ;;
  --redis-only) with_redis=1; with_kforge=0; shift ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.devnet}
build=${2:-$root/build-gpu}
cd "$root"
# glibc's own libraries stay the machine's: a second copy of libc in one process breaks it.
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|linux-vdso)\.so'

# "name path" of every library `binary` loads (as ldd resolves it) but glibc's own; one that
# is not found is left out here and caught by the checks below.
libs_of() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
    [[ $name =~ $glibc ]] || echo "$name $path"
  done
}

bundle_kforge() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKFORGE_TESTS=OFF -DKFORGE_NET=ON \
    -DCMAKE_BUILD_RPATH='$ORIGIN/lib' -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >/dev/null
  cmake --build "$build" --target kforge kforge_sandbox
  rm -rf "$out"
  mkdir -p "$out/lib"
  strip -o "$out/kforge" "$build/kforge"
  strip -o "$out/libkforge_sandbox.so" "$build/libkforge_sandbox.so"
  libs_of "$build/kforge" | while read -r name path; do cp -L "$path" "$out/lib/$name"; done
  # The bundle must resolve every library from OUT/lib (the RPATH), none from this machine's.
  if ! readelf -d "$out/kforge" | grep -q 'RPATH.*\[\$ORIGIN/lib\]'; then
    readelf -d "$out/kforge" | grep -i path >&2
    echo "gpu-bundle: $out/kforge has no RPATH of \$ORIGIN/lib" >&2
    exit 1
  fi
  if ldd "$out/kforge" | grep -q 'not found'; then
    ldd "$out/kforge" >&2
    echo "gpu-bundle: a library is missing from $out/lib" >&2
    exit 1
  fi
}

bundle_redis() {
  local src
  src=$(command -v redis-server) || {
    echo "gpu-bundle: --redis needs redis-server here (apt-get install redis-server)" >&2
    exit 1
  }
  mkdir -p "$out/lib"
  # /usr/bin/redis-server links to redis-check-rdb, which acts by the name it is run as.
  cp -L "$src" "$out/redis-server"
  strip "$out/redis-server"
  libs_of "$out/redis-server" | while read -r name path; do
    [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done
  # Through LD_LIBRARY_PATH every library but glibc's must come from OUT/lib, and it starts.
  local elsewhere
  elsewhere=$(LD_LIBRARY_PATH=$out/lib libs_of "$out/redis-server" | grep -v " $out/lib/" || true)
  if [ -n "$elsewhere" ]; then
    echo "$elsewhere" >&2
    echo "gpu-bundle: $out/redis-server takes the libraries above from elsewhere" >&2
    exit 1
  fi
  local version
  if ! version=$(LD_LIBRARY_PATH=$out/lib "$out/redis-server" --version); then
    echo "gpu-bundle: $out/redis-server does not start" >&2
    exit 1
  fi
  echo "gpu-bundle: $out/redis-server ($(echo "$version" | cut -d' ' -f3)); run it with" \
       "LD_LIBRARY_PATH=$out/lib, for that command alone"
}

[ $with_kforge = 1 ] && bundle_kforge
[ $with_redis = 1 ] && bundle_redis
n=$(ls "$out/lib" | wc -l)
echo "gpu-bundle: $out with $n libraries in $out/lib ($(du -sh "$out" | cut -f1))"
if [ -x "$out/kforge" ]; then
  echo "$out/kforge:"
  ldd "$out/kforge" | awk '$3 ~ /^\// { print "  " $1 " -> " $3 }'
fi
