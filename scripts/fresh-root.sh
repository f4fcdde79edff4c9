#!/bin/bash
# Proves that the README's set-up and first run work on a fresh Debian 12 machine: builds a
# minimal bookworm root filesystem with mmdebstrap (variant minbase, nothing added but
# ca-certificates for https sources; debootstrap if mmdebstrap cannot be installed, or with
# KFORGE_FRESH_BOOTSTRAP=debootstrap) from the Debian sources this machine's apt uses, copies
# the repository's files into it (tracked and untracked-but-not-ignored, so uncommitted
# changes are tested too), enters it with chroot and
# runs `scripts/demo.sh` there exactly as a new user would (it installs the packages through
# scripts/install-deps.sh, builds, and evaluates the CPU ReLU example), then requires the
# verdict's status to be `ok`. A package missing from scripts/install-deps.sh fails here,
# where it would fail for a new user, instead of passing on a machine that happens to have it.
#
#   scripts/fresh-root.sh [WORKDIR]     (root only; WORKDIR also from $KFORGE_FRESH_ROOT,
#                                        default /var/tmp/kforge-fresh-root)
#
# WORKDIR holds the root file system (WORKDIR/rootfs) and is deleted at the end, also after a
# failure or Ctrl-C (KFORGE_FRESH_KEEP=1 keeps it); a WORKDIR left by an interrupted run is
# deleted first. Downloaded .deb files are kept in $KFORGE_FRESH_CACHE/debs (default
# /var/cache/kforge-fresh-root/debs), bind-mounted on the root's /var/cache/apt/archives, so a
# second run downloads little; runs on one machine take turns through $KFORGE_FRESH_CACHE/lock.
# The output of the last demo is kept in $KFORGE_FRESH_CACHE/last-demo.log, and after a
# failure kforge's logs from the root in $KFORGE_FRESH_CACHE/last-kforge-logs.
#
# The repository lives in the root at the same absolute path as on this machine. With
# KFORGE_FRESH_CCACHE=DIR (CI sets it: .ci/run), the root gets ccache (the only package added to
# minbase besides ca-certificates) and its build compiles through the ccache directory DIR, which
# the host's own build of the same clone fills: a file whose preprocessed source, flags and
# compiler are the host's is taken from the cache, anything else (a header that is missing here,
# another compiler) is compiled, or fails, as it would for a new user; linking always runs. The
# hits are printed with the phases.
#
# KFORGE_FRESH_DEMO_NICE=N runs the demo (phase 3: its install, build and eval) at niceness N.
# CI starts this script at nice 19, which suits the download of the root file system, but the
# demo's eval then got 37 s of CPU in its 600 s build limit beside the tests and ended in
# infra_error (2026-12-05); CI raises the demo to 0.
#
# Every mount lives in a private mount namespace (unshare) whose processes are killed when the
# script dies, so nothing stays mounted on the host even after `kill -9`; the chroot side also
# unmounts on exit. Prints the time of each phase and, last, `fresh-root: ok (status ok in N s)`.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
repo=$(cd "$(dirname "$self")/.." && pwd)
suite=bookworm
cache=${KFORGE_FRESH_CACHE:-/var/cache/kforge-fresh-root}
debs=$cache/debs
marker=.kforge-fresh-root   # in WORKDIR: what lets this script delete a WORKDIR it finds

say() { printf 'fresh-root: %s\n' "$*"; }
die() { printf 'fresh-root: FAILED: %s\n' "$*" >&2; exit 1; }
now() { printf '%s' "${EPOCHREALTIME/[.,]/.}"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }

# The chroot side (phase 3), run as pid 1 of its own pid and mount namespaces (in_ns).
mounted=()  # the chroot side's mounts, for its EXIT trap (which runs outside inner_chroot)
inner_chroot() {
  local rootfs=$1 debs=$2 dest=$3 ccache=${4:-}
  unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
      umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" || true
    done
  }
  trap unmount_all EXIT
  trap 'exit 130' INT TERM
  mnt() { mount "$@"; mounted+=("${*: -1}"); }
  # "/" inside the chroot must be a mount point: kforge's sandbox makes "/" private (an
  # unmounted chroot directory gives EINVAL, and the eval an infra_error).
  mnt --bind "$rootfs" "$rootfs"
  mnt -t proc proc "$rootfs/proc"   # this pid namespace's own /proc
  mnt --rbind /sys "$rootfs/sys"
  mnt --bind /dev "$rootfs/dev"
  mnt --bind /dev/pts "$rootfs/dev/pts"
  mnt -t tmpfs -o mode=1777,nosuid,nodev shm "$rootfs/dev/shm"
  mnt --bind "$debs" "$rootfs/var/cache/apt/archives"
  local -a cc_env=()
  if [ -n "$ccache" ]; then
    mkdir -p "$rootfs/var/cache/kforge-ccache"
    mnt --bind "$ccache" "$rootfs/var/cache/kforge-ccache"
    cc_env=(CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR=/var/cache/kforge-ccache
            CCACHE_COMPILERCHECK=content CCACHE_STATSLOG=/var/cache/kforge-ccache/fresh-root.stats)
    # ccache hashes the locale (it changes the compiler's messages): the host's, or nothing
    # would match (LANG=C.UTF-8 there, none in a new root login).
    local v
    for v in LANG LC_ALL LC_CTYPE LC_MESSAGES; do
      [ -n "${!v:-}" ] && cc_env+=("$v=${!v}")
    done
  fi
  cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
  # bash -x traces demo.sh's own commands (not those of the scripts it calls), which is how
  # the outer side times the phases; the environment is a new root login's.
  chroot "$rootfs" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
    TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${cc_env[@]}" \
    /bin/bash -c 'cd "$0" && exec /bin/bash -x scripts/demo.sh' "$dest" </dev/null
}
if [ "${1:-}" = __chroot ]; then
  shift
  inner_chroot "$@"
  exit
fi

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, mount, chroot)"
work=${1:-${KFORGE_FRESH_ROOT:-/var/tmp/kforge-fresh-root}}
case $work in
  /*) ;;
  *) work=$PWD/$work ;;
esac
work=$(realpath -m "$work")
[ "${work#/*/}" != "$work" ] || die "refusing WORKDIR $work (too close to /)"
rootfs=$work/rootfs
log=$cache/last-demo.log
marks=$work/marks

# Mount points at or below $1 in this (the host's) mount namespace, deepest first.
mounts_under() {
  awk -v d="$1" '{ p = $5; gsub(/\\040/, " ", p); if (p == d || index(p, d "/") == 1) print p }' \
    /proc/self/mountinfo | sort -r
}
remove_work() {
  local mp
  [ -e "$work" ] || return 0
  mapfile -t mps < <(mounts_under "$work")
  for mp in "${mps[@]}"; do umount -R "$mp" 2>/dev/null || umount -R -l "$mp" || true; done
  [ -z "$(mounts_under "$work")" ] || die "mounts remain under $work; not deleting it"
  # A killed namespace's processes may still be exiting: one retry.
  rm -rf --one-file-system -- "$work" 2>/dev/null || { sleep 2; rm -rf --one-file-system -- "$work"; }
}

# in_ns FILTER CMD...: runs CMD in the background in a private mount and pid namespace, its
# output through FILTER, and waits for it (wait can be interrupted, so Ctrl-C and TERM reach
# the EXIT trap, which kills unshare by its pid); --kill-child takes the namespace's
# processes, and with them every mount, along with unshare. (In the background, CMD ignores
# Ctrl-C; the trap is what stops it.)
in_ns() {
  local filter=$1
  shift
  (
    bash -c 'echo $$ >"$0"; exec "$@"' "$child_pid_file" \
      unshare --mount --pid --kill-child --propagation private -- "$@" 2>&1 | "$filter"
    exit "${PIPESTATUS[0]}"
  ) &
  local rc=0
  wait $! || rc=$?
  rm -f "$child_pid_file"
  return "$rc"
}

# The Debian archive and security sources of bookworm that this machine's apt reads, as deb822
# stanzas; third-party repositories and backports are left out (a fresh Debian 12 has neither).
debian_sources() {
  local -a files=()
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || return 0
  awk -v suite="$suite" '
    function emit(   n, u, s, i, j, kept) {
      if (types !~ /(^|[ \t])deb([ \t]|$)/ || enabled ~ /^[Nn]o/) return
      if (signed != "" && signed !~ /debian-archive-keyring/) return
      if (comps !~ /(^|[ \t])main([ \t]|$)/) return  # the archive has main; vendors rarely do
      kept = ""
      n = split(suites, s, /[ \t]+/)
      for (i = 1; i <= n; i++)
        if (s[i] == suite || s[i] == suite "-updates" || s[i] == suite "-security")
          kept = kept (kept == "" ? "" : " ") s[i]
      if (kept == "") return
      n = split(uris, u, /[ \t]+/)
      for (j = 1; j <= n; j++) {
        if (u[j] == "" || u[j] !~ /\/debian(-security)?(\/|$)/) continue
        printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: %s\n", u[j], kept, comps
        if (signed != "") printf "Signed-By: %s\n", signed
        printf "\n"
      }
    }
    function reset() { types = uris = suites = comps = signed = enabled = ""; key = "" }
    function trim(x) { sub(/^[ \t]+/, "", x); sub(/[ \t]+$/, "", x); return x }
    FNR == 1 { if (deb822) emit(); reset(); deb822 = (FILENAME ~ /\.sources$/) }
    deb822 {
      if ($0 ~ /^#/) next
      if ($0 ~ /^[ \t]*$/) { emit(); reset(); next }
      if ($0 ~ /^[ \t]/) { if (key == "signed-by") signed = ""; next }  # inline key: not ours
      key = tolower(substr($0, 1, index($0, ":") - 1)); val = trim(substr($0, index($0, ":") + 1))
      if (key == "types") types = val; else if (key == "uris") uris = val
      else if (key == "suites") suites = val; else if (key == "components") comps = val
      else if (key == "signed-by") signed = val; else if (key == "enabled") enabled = val
      next
    }
    {
      line = $0; sub(/#.*/, "", line); line = trim(line)
      if (line !~ /^deb[ \t]/) next
      reset(); types = "deb"; sub(/^deb[ \t]+/, "", line)
      if (line ~ /^\[/) {
        opts = substr(line, 2, index(line, "]") - 2); line = trim(substr(line, index(line, "]") + 1))
        n = split(opts, o, /[ \t]+/)
        for (i = 1; i <= n; i++) if (o[i] ~ /^signed-by=/) signed = substr(o[i], 11)
      }
      n = split(line, w, /[ \t]+/)
      uris = w[1]; suites = w[2]; comps = ""
      for (i = 3; i <= n; i++) comps = comps (comps == "" ? "" : " ") w[i]
      emit(); reset()
    }
    END { if (deb822) emit() }
  ' "${files[@]}"
}

# apt settings of this machine that concern reaching its mirror (not what gets installed):
# a mirror that serves an old snapshot needs Check-Valid-Until off, a proxy must be used.
host_aptopts() {
  local key v
  for key in Acquire::Check-Valid-Until Acquire::Check-Date Acquire::http::Proxy \
             Acquire::https::Proxy; do
    v=""
    eval "$(apt-config shell v "$key")"
    [ -z "$v" ] || printf '%s "%s"\n' "$key" "$v"
  done
}

declare -A took=()
phase_order=()
record() { took[$1]=$2; phase_order+=("$1"); }
summary() {
  local p
  for p in "${phase_order[@]}"; do printf 'fresh-root: %-12s %5s s\n' "$p" "${took[$p]}"; done
}

# --- the run -------------------------------------------------------------------------------
t_start=$(now)
t_demo=""
mkdir -p "$debs"
exec 9>"$cache/lock"
if ! flock -n 9; then
  say "another run holds $cache/lock; waiting"
  flock 9
fi

# The end of every run, whatever its outcome.
drop_work() {
  if [ "${KFORGE_FRESH_KEEP:-0}" = 1 ]; then
    say "kept $work (KFORGE_FRESH_KEEP=1; chroot into $rootfs; the next run deletes it)"
  else
    remove_work
  fi
}
finished=0
on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "${child_pid_file:-}" ] && [ -s "$child_pid_file" ]; then
    local pid
    pid=$(cat "$child_pid_file")
    # unshare blocks TERM and INT while it waits, so KILL; --kill-child then kills the
    # namespace's init, which takes the namespace's processes and mounts along.
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = unshare ]; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait 2>/dev/null || true
  drop_work || rc=1
  [ "$finished" = 1 ] || say "FAILED after $(secs "$t_start" "$(now)") s${t_demo:+ (demo output: $log)}" >&2
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A WORKDIR we made before (an interrupted run) goes; anything else is not ours to delete.
if [ -e "$work" ]; then
  if [ -e "$work/$marker" ] || [ -z "$(ls -A "$work")" ]; then
    say "removing the leftover $work"
    remove_work
  else
    trap - EXIT
    die "$work exists and was not made by this script; remove it or pick another WORKDIR"
  fi
fi
mkdir -p "$work"
touch "$work/$marker"
child_pid_file=$work/unshare.pid

# --- phase 1: the root file system ----------------------------------------------------------
debian_sources >"$work/debian.sources"
[ -s "$work/debian.sources" ] || die "no Debian $suite sources in this machine's apt configuration"
# (suites only: CI logs should not carry mirror addresses)
say "sources: $(awk '/^Suites:/ { $1 = ""; printf "%s%s", sep, substr($0, 2); sep = ", " }' "$work/debian.sources") from this machine's apt"
mapfile -t aptopts < <(host_aptopts)
aptopts+=('APT::Keep-Downloaded-Packages "true"')  # apt-get's default; `apt` would delete them
include=()
grep -q '^URIs: https:' "$work/debian.sources" && include=(--include=ca-certificates)
ccache_dir=${KFORGE_FRESH_CCACHE:-}
if [ -n "$ccache_dir" ]; then
  [ -d "$ccache_dir" ] || die "KFORGE_FRESH_CCACHE=$ccache_dir is not a directory"
  include+=(--include=ccache)
  rm -f "$ccache_dir/fresh-root.stats"
fi

t0=$(now)
bootstrap=${KFORGE_FRESH_BOOTSTRAP:-mmdebstrap}
if [ "$bootstrap" = mmdebstrap ] && ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap on this machine"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends mmdebstrap >/dev/null 2>&1 ||
    { apt-get -o DPkg::Lock::Timeout=900 update -qq && apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends mmdebstrap >/dev/null; } ||
    { say "mmdebstrap cannot be installed; falling back to debootstrap"; bootstrap=debootstrap; }
fi
if [ "$bootstrap" = debootstrap ] && ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends debootstrap >/dev/null
fi
mkdir "$rootfs"
# In a private namespace (in_ns): the cache's bind mount and the bootstrapper's /proc, /sys,
# /dev mounts can never outlive the script on the host. bash stays pid 1 there (it reaps
# orphans) and mounts the namespace's own /proc.
# Its output names mirrors by scheme only (CI logs should not carry mirror addresses).
hide_hosts() { sed -u -E 's#(https?|ftp)://[^/ ]+#\1://<mirror>#g'; }
in_ns_sh() { in_ns hide_hosts bash -c 'mount -t proc proc /proc && "$@"; exit $?' bootstrap "$@"; }
if [ "$bootstrap" = mmdebstrap ]; then
  opt_args=()
  for o in "${aptopts[@]}"; do opt_args+=("--aptopt=$o"); done
  # The cache is the root's /var/cache/apt/archives from the start (download and install
  # steps), with essential/unlink skipped so mmdebstrap keeps what it downloaded; unmounted
  # before mmdebstrap's cleanup, so the root ends as a fresh one: no package lists, no .debs.
  in_ns_sh mmdebstrap --variant=minbase --mode=root "${include[@]}" "${opt_args[@]}" \
    --skip=essential/unlink \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
    --setup-hook="mount --bind '$debs' \"\$1/var/cache/apt/archives\"" \
    --customize-hook='umount "$1/var/cache/apt/archives"' \
    "$suite" "$rootfs" "$work/debian.sources"
else
  main_uri=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / '"$suite"'( |$)/ { print u; exit }' "$work/debian.sources")
  in_ns_sh debootstrap --variant=minbase --cache-dir="$debs" "${include[@]}" "$suite" "$rootfs" "$main_uri"
  rm -f "$rootfs/etc/apt/sources.list"
  cp "$work/debian.sources" "$rootfs/etc/apt/sources.list.d/debian.sources"
  printf '%s;\n' "${aptopts[@]}" >"$rootfs/etc/apt/apt.conf.d/99kforge-fresh-root"
  rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/archives/"*.deb
fi
# Nothing may delete what apt downloads into the cache (docker-clean style hooks).
if grep -rlsE 'Post-Invoke.*(archives|clean)' "$rootfs/etc/apt/apt.conf.d"; then
  die "an apt hook in the root deletes downloaded packages"
fi
record "$bootstrap" "$(secs "$t0" "$(now)")"
say "$bootstrap: $(du -sh --one-file-system "$rootfs" | cut -f1) in ${took[$bootstrap]} s; cache $(du -sh "$debs" | cut -f1)"

# --- phase 2: the repository, as a clean clone plus uncommitted changes ----------------------
t0=$(now)
dest=$rootfs$repo
mkdir -p "$dest"
git -C "$repo" ls-files -z --cached --others --exclude-standard |
  (cd "$repo" && while IFS= read -r -d '' f; do
     if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi  # a deleted tracked file is left out
   done) |
  tar -C "$repo" --null --no-recursion -T - -cf - | tar -C "$dest" -xf -
record copy "$(secs "$t0" "$(now)")"
say "copied $(find "$dest" -type f | wc -l) files of $repo to the same path in the root"

# --- phase 3: the README's demo inside the root ---------------------------------------------
mkdir -p "$(dirname "$log")"
: >"$log"
: >"$marks"
# Copies the demo's output to stdout and the log, noting when each command demo.sh runs (the
# lines bash -x traces) starts.
stamp() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$line"
    printf '%s\n' "$line" >>"$log"
    case $line in '+'*) printf '%s\t%s\n' "$(now)" "$line" >>"$marks" ;; esac
  done
}
say "running scripts/demo.sh in the root (output also in $log)"
if [ -n "${KFORGE_FRESH_DEMO_NICE:-}" ]; then
  renice -n "$KFORGE_FRESH_DEMO_NICE" -p $$ >/dev/null ||
    say "could not set the demo's niceness to $KFORGE_FRESH_DEMO_NICE; it runs at $(nice)"
fi
t_demo=$(now)
demo_rc=0
in_ns stamp bash "$self" __chroot "$rootfs" "$debs" "$repo" "$ccache_dir" || demo_rc=$?
t_end=$(now)

# Phases: each traced command of demo.sh lasts until the next one starts (the last until the end).
while IFS=$'\t' read -r name value; do record "$name" "$value"; done < <(
  awk -F'\t' -v start="$t_demo" -v end="$t_end" '
    { t[NR] = $1; c[NR] = $2 }
    END {
      if (NR) s["other"] += t[1] - start
      for (i = 1; i <= NR; i++) {
        d = (i < NR ? t[i + 1] : end) - t[i]; k = "other"
        if (c[i] ~ /kforge eval/) k = "eval"
        else if (c[i] ~ /install-deps/) k = "install"
        else if (c[i] ~ /build\.sh|cmake|ninja/) k = "build"
        s[k] += d
      }
      n = split("install build eval other", order, " ")
      for (i = 1; i <= n; i++) if (order[i] in s) printf "demo %s\t%.0f\n", order[i], s[order[i]]
      printf "demo total\t%.0f\n", end - start
    }' "$marks")

# awk reads to the end (no `exit`): sed would die of SIGPIPE otherwise, which pipefail turns
# into this script's failure whenever awk wins the race (seen: rc 141 after an ok demo).
status=$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
  awk '/^\+ .*kforge eval/ { e = 1 } e && !found && /^status:/ { print $2; found = 1 }')
summary
if [ -n "$ccache_dir" ]; then
  # One line per compile in the stats log: its counters (direct_cache_hit, cache_miss, ...).
  awk '/^#/ { n++ } /cache_hit/ { h++ } END { printf "fresh-root: ccache      %d of %d compiles taken from the host'"'"'s build\n", h, n }' \
    "$ccache_dir/fresh-root.stats" 2>/dev/null || say "ccache: no statistics"
fi
if [ "$demo_rc" != 0 ] || [ "$status" != ok ]; then
  # kforge's own logs (runner, build worker) die with the root: keep them, show their ends.
  rm -rf "$cache/last-kforge-logs"
  if [ -d "$rootfs/root/.cache/kforge/logs" ]; then
    cp -r "$rootfs/root/.cache/kforge/logs" "$cache/last-kforge-logs"
    for f in "$cache/last-kforge-logs"/*; do
      [ -f "$f" ] || continue
      printf -- '--- last lines of %s\n' "$f" >&2
      tail -n 25 "$f" >&2
    done
  fi
fi
[ "$demo_rc" = 0 ] || die "scripts/demo.sh exited with $demo_rc in the fresh root (see $log)"
[ -n "$status" ] || die "no verdict (status: line) in the demo's output (see $log)"
[ "$status" = ok ] || die "the demo's verdict is '$status', not ok (see $log)"

finished=1
trap - EXIT
t0=$(now)
drop_work
record cleanup "$(secs "$t0" "$(now)")"
printf 'fresh-root: %-12s %5s s\n' cleanup "${took[cleanup]}"
say "ok (status ok in $(secs "$t_start" "$(now)") s)"
