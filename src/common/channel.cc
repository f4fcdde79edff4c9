#include "common/channel.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

namespace kf {

Status Channel::WriteAll(const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd_.get(), data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable(std::string("peer closed the channel (") + strerror(errno) + ")");
    }
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status Channel::Send(const nlohmann::json& msg) {
  if (!fd_.valid()) return Status::Unavailable("channel is closed");
  return WriteAll(msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

Status Channel::SendWithFd(const nlohmann::json& msg, int fd) {
  if (!fd_.valid()) return Status::Unavailable("channel is closed");
  std::string data = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // The first byte carries the descriptor; the rest follows as a plain write.
  struct msghdr mh = {};
  struct iovec iov = {data.data(), 1};
  char control[CMSG_SPACE(sizeof(int))] = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do {
    n = ::sendmsg(fd_.get(), &mh, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return Status::Unavailable(std::string("sendmsg: ") + strerror(errno));
  return WriteAll(data.substr(1));
}

Result<nlohmann::json> Channel::Receive(std::chrono::milliseconds timeout) {
  if (!fd_.valid()) return Status::Unavailable("channel is closed");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) {
        return Status::Internal("peer sent a malformed message: " + line.substr(0, 200));
      }
      return j;
    }
    if (buffer_.size() > kMaxMessageBytes) {
      return Status::Internal("peer sent a message over " + std::to_string(kMaxMessageBytes >> 20) +
                              " MiB");
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::Timeout("no answer in time");
    struct pollfd p = {fd_.get(), POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(std::string("poll: ") + strerror(errno));
    }
    if (r == 0) return Status::Timeout("no answer in time");
    char buf[1 << 16];
    ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::Unavailable(std::string("channel read failed: ") + strerror(errno));
    }
    if (n == 0) return Status::Unavailable("peer closed the channel");
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace kf
