#include "execute/host_times.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace kf::execute {
namespace {

double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Runs on a CPU until this thread has used `ms` of CPU time, however long that takes.
void Spin(double ms) {
  const double end = ThreadCpuMs() + ms;
  volatile unsigned long x = 0;
  while (ThreadCpuMs() < end) x = x + 1;
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
  std::thread other([] { Spin(300); });
  other.join();
  Spin(100);
  HostTimes d = ReadHostTimes(getpid()) - before;
  ASSERT_TRUE(d.ok);
  // The other thread's 300 ms (it has ended) count for the process, not for the main thread.
  EXPECT_GE(d.thread_cpu_ms, 100);
  EXPECT_LT(d.thread_cpu_ms, 250);
  EXPECT_GE(d.others_cpu_ms(), 250);  // /proc's process times count in 10 ms ticks
}

TEST(HostTimes, WaitingForTheCpuIsCounted) {
  // Three spinners share one CPU: each waits on the run queue about two thirds of the time.
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  PinToCpu0();
  std::vector<std::unique_ptr<Child>> load;
  for (int i = 0; i < 2; ++i) load.push_back(std::make_unique<Child>([] { for (;;) Spin(100); }));
  HostTimes before = ReadHostTimes(getpid());
  Spin(200);  // about 600 ms of wall time: it runs a third of the time
  HostTimes d = ReadHostTimes(getpid()) - before;
  load.clear();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  ASSERT_TRUE(d.ok);
  EXPECT_GE(d.thread_cpu_ms, 200);
  EXPECT_GE(d.thread_wait_ms, 150);
  EXPECT_LE(d.thread_wait_ms, 20000);  // milliseconds, not nanoseconds
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
