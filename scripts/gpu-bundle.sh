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
#   scripts/gpu-bundle.sh [OUT] [BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.devnet}
build=${2:-$root/build-gpu}
cd "$root"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKFORGE_TESTS=OFF -DKFORGE_NET=ON \
  -DCMAKE_BUILD_RPATH='$ORIGIN/lib' -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >/dev/null
cmake --build "$build" --target kforge kforge_sandbox
rm -rf "$out"
mkdir -p "$out/lib"
strip -o "$out/kforge" "$build/kforge"
strip -o "$out/libkforge_sandbox.so" "$build/libkforge_sandbox.so"
# glibc's own libraries stay the machine's: a second copy of libc in one process breaks it.
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|linux-vdso)\.so'
ldd "$build/kforge" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
  if [[ $name =~ $glibc ]]; then continue; fi
  cp -L "$path" "$out/lib/$name"
done
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
n=$(ls "$out/lib" | wc -l)
echo "gpu-bundle: $out/kforge with $n libraries in $out/lib ($(du -sh "$out" | cut -f1)):"
ldd "$out/kforge" | awk '$3 ~ /^\// { print "  " $1 " -> " $3 }'
