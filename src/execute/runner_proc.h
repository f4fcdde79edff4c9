// A Python runner process (judge, zygote or candidate host) and its channel. Internal to
// execute.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/channel.h"
#include "common/process.h"
#include "common/status.h"

namespace kf::execute {

struct RunnerProc {
  std::string what;                 // "judge", "zygote": for messages
  std::string service;              // its part of runner/protocol.json: "judge", "zygote"
  Child child;                      // empty for candidates (the zygote is their parent)
  Channel chan;
  std::filesystem::path log_path;   // its stdout/stderr

  // Answers an event the runner sent while answering a request (the confined judge's borrow
  // and give_back): the answer's fields, or why it failed (sent as {"ok": false, "message"}).
  using EventFn = std::function<Result<nlohmann::json>(const nlohmann::json& event)>;

  // Sends and waits; an answer {"ok": false, ...} becomes kInternal with the runner's message,
  // and so does a request or an answer that breaks the protocol (common/protocol.h). With
  // `on_event`, events that come before the reply are answered with it (the time that takes
  // is not counted against `timeout`); without, an event breaks the protocol.
  Result<nlohmann::json> Request(const nlohmann::json& msg, std::chrono::milliseconds timeout,
                                 const EventFn& on_event = nullptr);
  // The last `max_bytes` of the log, for error messages.
  std::string LogTail(size_t max_bytes = 3000) const;
};

// Starts `python -m kforge_runner.<module> --fd 3` with the runner on PYTHONPATH.
Result<RunnerProc> StartRunner(const std::string& what, const std::string& python,
                               const std::filesystem::path& runner_dir, const std::string& module,
                               const std::filesystem::path& log_path);

std::string ReadTail(const std::filesystem::path& p, size_t max_bytes);

// Removes the folder of shared trial buffers a trusted judge named in its hello reply
// (`shm_dir`), once that judge has ended. A judge removes it itself when it exits; one that was
// killed (out of memory, SIGKILL, a lost lane) cannot, and its buffers (each a trial's inputs
// and outputs, GiBs for a large problem) would hold RAM in /dev/shm until the machine
// restarts. Only a folder directly in /dev/shm or the temporary folder, named kforge-judge-*,
// and only its regular files named buf*, are removed; anything else is left. Returns how many
// buffers it removed.
int RemoveSharedBuffers(const std::filesystem::path& dir);

}  // namespace kf::execute
