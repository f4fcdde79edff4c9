// What a candidate host's threads did with the CPU, read from /proc by the supervisor: the
// candidate could lie about its own times, the kernel does not.
#pragma once

#include <sys/types.h>

namespace kf::execute {

struct HostTimes {
  bool ok = false;
  double thread_cpu_ms = 0;   // the main thread (the one making the timed calls): on a CPU
  double thread_wait_ms = 0;  // the main thread: runnable but waiting for a CPU
  double process_cpu_ms = 0;  // every thread of the process, ended ones included
  double others_cpu_ms() const { return process_cpu_ms - thread_cpu_ms; }
};

// The candidate host of a spawned candidate process: the sandbox's pid-namespace relay has
// exactly one child, the host; without a relay, `pid` itself.
pid_t HostOf(pid_t pid);

// Now, for `pid`'s process; ok = false when /proc has no such process.
HostTimes ReadHostTimes(pid_t pid);

// What happened between two readings (ok only when both are).
HostTimes operator-(const HostTimes& after, const HostTimes& before);
HostTimes& operator+=(HostTimes& sum, const HostTimes& d);

// Whether `pid` has a child process now.
bool HasChildren(pid_t pid);

}  // namespace kf::execute
