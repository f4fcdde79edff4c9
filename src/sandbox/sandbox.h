// Isolation for untrusted code that runs in processes forked by the Python runner (a candidate
// host, a compiler run). Built as libkforge_sandbox.so with a C ABI so the runner loads it with
// ctypes right after fork, before any untrusted code runs; the C++ supervisor only tells it
// where the library is (SandboxLibraryPath). See steps.h for what each step enforces and why.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Applies the policy to the calling process and everything it starts. Call it in a process
// with one thread (right after fork). Returns 0 and a one-line summary of what is enforced in
// `err`, or -1 with the reason in `err` (the process may then be partly confined: end it).
// With "new_pid_namespace" the call forks: the caller's process becomes a relay that waits for
// the child and ends with the child's exit code or signal, and never returns; the call returns
// in the child, which is pid 1 of a new pid namespace.
// policy_json: {"writable": [paths], "network": false, "max_file_bytes": N, "cpu_seconds": N,
//   "max_processes": N, "max_open_files": N, "new_pid_namespace": true,
//   "filesystem": "auto"|"landlock"|"mount"|"none", "seccomp": true, "own_proc": true,
//   "drop_capabilities": true}
// CUDA needs "/proc/self" writable (with own_proc that is this process alone).
__attribute__((visibility("default"))) int kforge_sandbox_enter(const char* policy_json, char* err,
                                                                size_t err_len);

// Writes what this kernel and process support as a JSON object into `out`. Returns 0, or -1
// when `out` is too small.
__attribute__((visibility("default"))) int kforge_sandbox_probe(char* out, size_t out_len);

#ifdef __cplusplus
}

#include <string>

namespace kf {
// libkforge_sandbox.so next to the running executable (/proc/self/exe); empty when absent.
std::string SandboxLibraryPath();
}  // namespace kf
#endif
