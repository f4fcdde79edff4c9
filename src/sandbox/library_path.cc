#include <unistd.h>

#include <filesystem>

#include "sandbox/sandbox.h"

namespace kf {

std::string SandboxLibraryPath() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  auto lib = exe.parent_path() / "libkforge_sandbox.so";
  return access(lib.c_str(), R_OK) == 0 ? lib.string() : "";
}

}  // namespace kf
