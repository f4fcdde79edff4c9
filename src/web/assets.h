// assets: the UI's style sheet and script, compiled into the binary from src/web/assets/ (a
// file generated at build time by cmake/embed_assets.cmake), so the pages need nothing from
// outside the process.
#pragma once

#include <cstddef>
#include <string>

namespace kf::web {

struct Asset {
  const char* data;
  size_t size;
  const char* content_type;
};

// By file name ("app.css"); nullptr when there is none.
const Asset* FindAsset(const std::string& name);

}  // namespace kf::web
