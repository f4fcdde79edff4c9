#include "sandbox/policy.h"

#include <nlohmann/json.hpp>

namespace kf::sandbox {

bool ParsePolicy(const char* json_text, Policy* out, std::string* err) {
  auto j = nlohmann::json::parse(json_text ? json_text : "", nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    *err = "policy is not a JSON object";
    return false;
  }
  try {
    Policy p;
    p.writable = j.value("writable", p.writable);
    p.network = j.value("network", p.network);
    p.max_file_bytes = j.value("max_file_bytes", p.max_file_bytes);
    p.cpu_seconds = j.value("cpu_seconds", p.cpu_seconds);
    p.max_processes = j.value("max_processes", p.max_processes);
    p.max_open_files = j.value("max_open_files", p.max_open_files);
    p.new_pid_namespace = j.value("new_pid_namespace", p.new_pid_namespace);
    p.filesystem = j.value("filesystem", p.filesystem);
    p.seccomp = j.value("seccomp", p.seccomp);
    p.own_proc = j.value("own_proc", p.own_proc);
    p.drop_capabilities = j.value("drop_capabilities", p.drop_capabilities);
    if (p.filesystem != "auto" && p.filesystem != "landlock" && p.filesystem != "mount" &&
        p.filesystem != "none") {
      *err = "policy: unknown filesystem mode '" + p.filesystem + "'";
      return false;
    }
    *out = std::move(p);
    return true;
  } catch (const std::exception& e) {  // a value of the wrong type
    *err = std::string("policy: ") + e.what();
    return false;
  }
}

}  // namespace kf::sandbox
