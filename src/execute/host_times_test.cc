#include "execute/host_times.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace kf::execute {
namespace {

void Spin(std::chrono::milliseconds how_long) {
  auto end = std::chrono::steady_clock::now() + how_long;
  volatile unsigned long x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

void PinToCpu0() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

// A child that runs `body`, then waits on `go` (a pipe) until the test has read its times.
class Child {
 public:
  template <class F>
  explicit Child(F body) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[1]);
      body();
      char c;
      (void)!read(fds[0], &c, 1);
      _exit(0);
    }
    close(fds[0]);
    go_ = fds[1];
  }
  ~Child() {
    close(go_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int go_ = -1;
};

TEST(HostTimes, MainThreadAndOtherThreadsAreToldApart) {
  HostTimes before = ReadHostTimes(getpid());
  ASSERT_TRUE(before.ok);
  std::thread other([] { Spin(std::chrono::milliseconds(300)); });
  other.join();
  Spin(std::chrono::milliseconds(100));
  HostTimes d = ReadHostTimes(getpid()) - before;
  ASSERT_TRUE(d.ok);
  // The other thread's 300 ms (it has ended) count for the process, not for the main thread.
  EXPECT_GE(d.thread_cpu_ms, 50);
  EXPECT_LT(d.thread_cpu_ms, 250);
  EXPECT_GE(d.others_cpu_ms(), 200);
}

TEST(HostTimes, WaitingForTheCpuIsCounted) {
  // Three spinners share one CPU: each waits on the run queue about two thirds of the time.
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  PinToCpu0();
  std::vector<std::unique_ptr<Child>> load;
  for (int i = 0; i < 2; ++i) load.push_back(std::make_unique<Child>([] { for (;;) Spin(std::chrono::milliseconds(100)); }));
  HostTimes before = ReadHostTimes(getpid());
  Spin(std::chrono::milliseconds(600));  // wall time: it runs for about a third of it
  HostTimes d = ReadHostTimes(getpid()) - before;
  load.clear();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  ASSERT_TRUE(d.ok);
  EXPECT_GE(d.thread_wait_ms, 150);
  EXPECT_LE(d.thread_wait_ms + d.thread_cpu_ms, 2000);
}

TEST(HostTimes, TheHostIsTheRelaysOnlyChild) {
  Child leaf([] {});
  EXPECT_EQ(HostOf(leaf.pid()), leaf.pid());  // no relay: the process itself
  EXPECT_FALSE(HasChildren(leaf.pid()));
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  // A relay: forks the host, reports its pid, waits.
  Child relay([&] {
    close(fds[0]);
    Child host([] {});
    pid_t h = host.pid();
    (void)!write(fds[1], &h, sizeof(h));
    pause();
  });
  close(fds[1]);
  pid_t host = -1;
  ASSERT_EQ(read(fds[0], &host, sizeof(host)), static_cast<ssize_t>(sizeof(host)));
  close(fds[0]);
  EXPECT_EQ(HostOf(relay.pid()), host);
  EXPECT_TRUE(HasChildren(relay.pid()));
  EXPECT_FALSE(ReadHostTimes(999999999).ok);
}

}  // namespace
}  // namespace kf::execute
