#include "common/channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/process.h"

namespace kf {
namespace {

struct Pair {
  Channel a, b;
  Pair() {
    UniqueFd x, y;
    EXPECT_TRUE(SocketPair(&x, &y).ok());
    a = Channel(std::move(x));
    b = Channel(std::move(y));
  }
};

TEST(Channel, RoundTripsMessagesInOrder) {
  Pair p;
  ASSERT_TRUE(p.a.Send({{"op", "one"}, {"n", 1}}).ok());
  ASSERT_TRUE(p.a.Send({{"op", "two"}, {"text", "line\nbreak"}}).ok());
  auto m1 = p.b.Receive(std::chrono::milliseconds(1000));
  auto m2 = p.b.Receive(std::chrono::milliseconds(1000));
  ASSERT_TRUE(m1.ok());
  ASSERT_TRUE(m2.ok());
  EXPECT_EQ((*m1)["op"], "one");
  EXPECT_EQ((*m2)["text"], "line\nbreak");
}

TEST(Channel, SilentPeerTimesOut) {
  Pair p;
  auto r = p.b.Receive(std::chrono::milliseconds(50));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kTimeout);
  // A message that arrives later is still delivered whole.
  ASSERT_TRUE(p.a.Send({{"late", true}}).ok());
  auto late = p.b.Receive(std::chrono::milliseconds(1000));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ((*late)["late"], true);
}

TEST(Channel, ClosedPeerIsUnavailable) {
  Pair p;
  p.a.Close();
  auto r = p.b.Receive(std::chrono::milliseconds(1000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(p.b.Send({{"x", 1}}).code(), Code::kUnavailable);
}

TEST(Channel, MalformedLineIsAnErrorNotACrash) {
  UniqueFd x, y;
  ASSERT_TRUE(SocketPair(&x, &y).ok());
  const char junk[] = "{not json\n";
  ASSERT_EQ(write(x.get(), junk, sizeof junk - 1), static_cast<ssize_t>(sizeof junk - 1));
  Channel c(std::move(y));
  auto r = c.Receive(std::chrono::milliseconds(1000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
}

TEST(Channel, RefusesMessagesOverTheLimit) {
  UniqueFd x, y;
  ASSERT_TRUE(SocketPair(&x, &y).ok());
  Channel c(std::move(y));
  std::thread writer([fd = x.get()] {
    std::string chunk(1 << 20, 'a');
    for (size_t sent = 0; sent <= Channel::kMaxMessageBytes + (2u << 20); sent += chunk.size()) {
      if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) break;
    }
  });
  auto r = c.Receive(std::chrono::milliseconds(20000));
  c.Close();
  x.Reset();
  writer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("MiB"), std::string::npos);
}

TEST(Channel, PassesADescriptor) {
  Pair p;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_TRUE(p.a.SendWithFd({{"op", "spawn"}}, fds[1]).ok());
  // Read the message with recvmsg to collect the descriptor, as the Python side does.
  char buf[256];
  char control[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {buf, sizeof buf};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n = recvmsg(p.b.fd(), &mh, 0);
  ASSERT_GE(n, 1);
  struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
  ASSERT_NE(c, nullptr);
  int got;
  memcpy(&got, CMSG_DATA(c), sizeof got);
  ASSERT_EQ(write(got, "z", 1), 1);
  char z = 0;
  ASSERT_EQ(read(fds[0], &z, 1), 1);
  EXPECT_EQ(z, 'z');
  close(got);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace kf
