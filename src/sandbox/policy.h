// The sandbox policy: what a confined process may still do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kf::sandbox {

struct Policy {
  std::vector<std::string> writable;     // everything else is read-only (reads stay allowed)
  bool network = false;                  // false: a new, empty network namespace
  int64_t max_file_bytes = 256ll << 20;  // RLIMIT_FSIZE: a larger write fails with EFBIG
  int64_t cpu_seconds = 600;             // RLIMIT_CPU per process; SIGKILL 5 s later
  int64_t max_processes = 4096;          // processes + threads; 0: no bound (see steps.h for where)
  int64_t max_open_files = 4096;         // RLIMIT_NOFILE; never raised above the current hard limit
  bool new_pid_namespace = true;         // a fork bomb dies with the relay process (steps.h)
  std::string filesystem = "auto";       // auto | landlock | mount | none
  bool seccomp = true;
  bool own_proc = true;           // with new_pid_namespace: a /proc of that namespace only
  bool drop_capabilities = true;  // root keeps uid 0 but no capabilities
};

// Parses policy JSON; missing keys keep their defaults. False with a message on bad input.
bool ParsePolicy(const char* json_text, Policy* out, std::string* err);

}  // namespace kf::sandbox
