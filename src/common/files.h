// Whole-file reading: the one way kforge reads a file into memory.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace kf {

// The bytes of the file at `path`, exactly as stored (NUL bytes, CR LF and a missing final
// newline kept). Reads to the end of the file rather than trusting its size, so /proc files
// (which report size 0) read whole too.
// An error names the path and the reason ("cannot read <path>: <strerror>"): NotFound when the
// file or a folder on its path does not exist, IoError otherwise (no permission, a folder, a
// failed read). On an error errno holds the cause still, for a caller that phrases its own
// message with strerror.
Result<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace kf
