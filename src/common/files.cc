#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fd.h"

namespace kf {
namespace {

// Appends everything `fd` holds to `out`; 0, or the errno of what failed.
int ReadAll(int fd, std::string* out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;  // open() succeeds on a folder; read() would fail
  if (st.st_size > 0) out->reserve(static_cast<size_t>(st.st_size));
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return 0;
    } else if (errno != EINTR) {
      return errno;
    }
  }
}

}  // namespace

Result<std::string> ReadFile(const std::filesystem::path& path) {
  std::string out;
  int err = 0;
  {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    err = fd.valid() ? ReadAll(fd.get(), &out) : errno;
  }  // closed here, so that close() cannot disturb the errno left for the caller
  if (err == 0) return out;
  std::string msg = "cannot read " + path.string() + ": " + std::strerror(err);
  Status s = err == ENOENT || err == ENOTDIR ? Status::NotFound(std::move(msg))
                                             : Status::IoError(std::move(msg));
  errno = err;
  return s;
}

}  // namespace kf
