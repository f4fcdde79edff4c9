// The sandbox's steps, in the order kforge_sandbox_enter applies them. Each returns "" or the
// reason it failed (with errno's text). Internal to src/sandbox.
//
// What is enforced where:
// - limits: no core dumps, RLIMIT_FSIZE/CPU/NOFILE, SIGXFSZ ignored (an oversized write fails
//   with EFBIG instead of killing), no_new_privs. Everywhere.
// - network: a new network namespace (only a down loopback). Root: unshare(CLONE_NEWNET);
//   others: a user namespace that maps the caller's own uid/gid, then the network namespace.
//   Descriptors opened before (the supervisor's socketpair) keep working.
// - processes: a new pid namespace whose init is the confined process; its parent stays
//   outside as a relay. Killing the relay kills init (PDEATHSIG), and the kernel then kills
//   every process in the namespace, so a fork bomb ends with the supervisor's kill. The count
//   is bounded by the namespace's own pid_max (Linux >= 6.14) and, for non-root callers, by
//   RLIMIT_NPROC (not enforced for root). On older kernels as root the count is unbounded
//   until the kill.
// - filesystem: Landlock (ABI >= 1) makes every path read-only except `writable`; ABI >= 4
//   also denies TCP bind/connect, ABI >= 5 device ioctls outside `writable`, ABI >= 6 signals
//   to processes outside the sandbox. Without Landlock, as root: a mount namespace with every
//   mount remounted read-only except bind mounts of `writable`. Otherwise not confined.
// - privileges: an own /proc (outside processes invisible), then no capabilities at all.
// - seccomp: a deny list (EPERM) of syscalls that reach outside the process: ptrace,
//   process_vm_*, kexec, mounts, bpf, perf, modules, reboot, swap, setns/unshare and
//   namespace flags of clone, keyrings, userfaultfd, open_by_handle_at, pidfd_getfd, iopl.
#pragma once

#include <string>

#include "sandbox/policy.h"

namespace kf::sandbox {

std::string ApplyLimits(const Policy& p);
std::string EnterNetNamespace();
// Forks: returns only in the child (init of the new pid namespace); the parent relays the
// child's end as its own. `bound` says how the count of processes is limited.
std::string EnterPidNamespace(const Policy& p, std::string* bound);
// Landlock ABI version, 0 when unavailable.
int LandlockAbi();
std::string ApplyLandlock(const Policy& p, int abi);
std::string ApplyReadOnlyMounts(const Policy& p);
std::string ApplySeccomp();
// A new mount namespace with a /proc of the current pid namespace only: outside processes
// (the judge, the supervisor) cannot be named through /proc/<pid>/{mem,root,fd}.
std::string MountOwnProc();
// Empties every capability set and the bounding set: root keeps its uid (files it owns stay
// readable) but loses CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_DAC_OVERRIDE..., also across exec.
std::string DropCapabilities();

// errno's text after `what`: "unshare(CLONE_NEWNET): Operation not permitted".
std::string Errno(const std::string& what);
// Linux version as major * 1000 + minor.
int KernelVersion();

}  // namespace kf::sandbox
