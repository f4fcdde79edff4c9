#include "common/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "common/channel.h"

namespace kf {
namespace {

// What the builder reads to tell a compiler that worked hard from one that waited for a CPU:
// the CPU of a busy grandchild counts for its grandparent; a sleeping tree has used next to none.
TEST(ProcessTreeCpu, CountsDescendants) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "/bin/sh -c 'while :; do :; done' & sleep 60"};
  auto c = Spawn(o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  double ms = 0;
  for (int i = 0; i < 600 && ms < 200; ++i) {  // a liveness bound (60 s), not a timing
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ms = ProcessTreeCpuMs(c->pid());
  }
  EXPECT_GE(ms, 200);
  c->Kill();
  EXPECT_EQ(ProcessTreeCpuMs(c->pid()), 0);  // gone

  SpawnOptions idle;
  idle.argv = {"/bin/sh", "-c", "sleep 60 & sleep 60"};
  auto s = Spawn(idle);
  ASSERT_TRUE(s.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(ProcessTreeCpuMs(s->pid()), 200);
  s->Kill();
}

TEST(Spawn, ReportsExitCode) {
  SpawnOptions so;
  so.argv = {"sh", "-c", "exit 7"};
  auto c = Spawn(so);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto e = c->Wait(std::chrono::seconds(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->exited);
  EXPECT_EQ(e->exit_code, 7);
  EXPECT_EQ(e->Describe(), "exit code 7");
}

TEST(Spawn, ReportsSignal) {
  SpawnOptions so;
  so.argv = {"sh", "-c", "kill -SEGV $$"};
  auto c = Spawn(so);
  ASSERT_TRUE(c.ok());
  auto e = c->Wait(std::chrono::seconds(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->exited);
  EXPECT_EQ(e->term_signal, SIGSEGV);
  EXPECT_NE(e->Describe().find("signal 11"), std::string::npos);
}

TEST(Spawn, MissingProgramIsAClearError) {
  SpawnOptions so;
  so.argv = {"/nonexistent/kforge-no-such-program"};
  auto c = Spawn(so);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("kforge-no-such-program"), std::string::npos);
}

TEST(Spawn, WaitTimesOutThenKillEndsTheWholeGroup) {
  char dir[] = "/tmp/kf-proc-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string pidfile = std::string(dir) + "/grandchild";
  SpawnOptions so;
  // The grandchild would outlive a plain kill of its parent.
  so.argv = {"sh", "-c", "sleep 100 & echo $! > " + pidfile + "; wait"};
  auto c = Spawn(so);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->Wait(std::chrono::milliseconds(300)).has_value());
  ExitInfo e = c->Kill();
  EXPECT_EQ(e.term_signal, SIGKILL);
  std::ifstream f(pidfile);
  pid_t grandchild = 0;
  ASSERT_TRUE(f >> grandchild);
  // Dead means gone or a zombie nobody has reaped yet (its new parent may not reap at once).
  auto alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, comm, state;
    if (!(stat >> pid >> comm >> state)) return false;
    return state != "Z" && state != "X";
  };
  for (int i = 0; i < 200 && alive(); ++i) usleep(10000);
  EXPECT_FALSE(alive()) << "the grandchild survived";
}

// Whether process `pid` still runs: gone or a zombie nobody has reaped yet is dead.
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string p, comm, state;
  if (!(stat >> p >> comm >> state)) return false;
  return state != "Z" && state != "X";
}

// A command killed outright (SIGKILL, or SIGTERM's default action) runs no destructor: a child
// spawned with die_with_parent dies with it; one spawned without outlives it.
TEST(Spawn, DieWithParentEndsTheChildWhenItsSpawnerIsKilled) {
  for (bool tie : {true, false}) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    pid_t spawner = fork();
    ASSERT_GE(spawner, 0);
    if (spawner == 0) {
      close(p[0]);
      SpawnOptions so;
      so.argv = {"sleep", "100"};
      so.die_with_parent = tie;
      auto c = Spawn(so);
      pid_t pid = c.ok() ? c->pid() : -1;
      (void)!write(p[1], &pid, sizeof pid);
      pause();  // until killed, like a busy command
      _exit(0);
    }
    close(p[1]);
    pid_t child = -1;
    ASSERT_EQ(read(p[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
    close(p[0]);
    ASSERT_GT(child, 0);
    EXPECT_TRUE(Alive(child));
    kill(spawner, SIGKILL);
    waitpid(spawner, nullptr, 0);
    for (int i = 0; i < 200 && Alive(child); ++i) usleep(10000);
    EXPECT_EQ(Alive(child), !tie) << (tie ? "the tied child outlived its spawner"
                                          : "the untied child died with its spawner");
    if (Alive(child)) kill(child, SIGKILL);
  }
}

TEST(Spawn, MapsDescriptorsAndRedirectsOutput) {
  char dir[] = "/tmp/kf-proc-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  UniqueFd mine, theirs;
  ASSERT_TRUE(SocketPair(&mine, &theirs).ok());
  SpawnOptions so;
  so.argv = {"sh", "-c", "echo to-log; echo '{\"hello\":1}' >&3"};
  so.fds = {{3, theirs.get()}};
  so.stdout_path = std::string(dir) + "/out.log";
  auto c = Spawn(so);
  ASSERT_TRUE(c.ok());
  theirs.Reset();
  Channel ch(std::move(mine));
  auto m = ch.Receive(std::chrono::seconds(10));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)["hello"], 1);
  c->Wait(std::chrono::seconds(10));
  std::ifstream log(so.stdout_path);
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "to-log");
}

TEST(Spawn, SetsEnvironment) {
  char dir[] = "/tmp/kf-proc-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  SpawnOptions so;
  so.argv = {"sh", "-c", "echo \"$KF_TEST_VAR\""};
  so.env_set = {"KF_TEST_VAR=value with spaces"};
  so.stdout_path = std::string(dir) + "/out.log";
  auto c = Spawn(so);
  ASSERT_TRUE(c.ok());
  c->Wait(std::chrono::seconds(10));
  std::ifstream log(so.stdout_path);
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "value with spaces");
}

}  // namespace
}  // namespace kf
