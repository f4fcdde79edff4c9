// Read-only filesystem except the policy's writable paths: Landlock, or read-only mounts.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>

#include "common/fd.h"
#include "sandbox/steps.h"

namespace kf::sandbox {
namespace {

// Landlock's ABI, declared here because Debian's kernel headers predate ABI 4-6.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI >= 4
  uint64_t scoped;              // ABI >= 6
};
struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
constexpr int kRulePathBeneath = 1;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr uint64_t kWriteFile = 1ull << 1, kTruncate = 1ull << 14, kIoctlDev = 1ull << 15;
constexpr uint64_t kWriteAccessV1 = 0x1ff2;  // WRITE_FILE, REMOVE_*, MAKE_* (bits 1, 4-12)
constexpr uint64_t kRefer = 1ull << 13;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr long kSysCreateRuleset = 444, kSysAddRule = 445, kSysRestrictSelf = 446;

uint64_t HandledFs(int abi) {
  uint64_t m = kWriteAccessV1;
  if (abi >= 2) m |= kRefer;
  if (abi >= 3) m |= kTruncate;
  // Device ioctls only through writable device files (/dev/nvidia*): reads stay allowed, but
  // root with a read-only descriptor on a disk or a tty could do harm through ioctl.
  if (abi >= 5) m |= kIoctlDev;
  return m;
}

std::string Unescape(const std::string& s) {  // mountinfo writes ' ' as \040
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += char(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

unsigned long MountFlags(const std::string& opts) {
  unsigned long f = 0;
  std::stringstream ss(opts);
  for (std::string o; std::getline(ss, o, ',');) {
    if (o == "nosuid") f |= MS_NOSUID;
    if (o == "nodev") f |= MS_NODEV;
    if (o == "noexec") f |= MS_NOEXEC;
    if (o == "noatime") f |= MS_NOATIME;
    if (o == "nodiratime") f |= MS_NODIRATIME;
    if (o == "relatime") f |= MS_RELATIME;
  }
  return f;
}

}  // namespace

int LandlockAbi() {
  long v = syscall(kSysCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  return v > 0 ? int(v) : 0;
}

std::string ApplyLandlock(const Policy& p, int abi) {
  RulesetAttr attr{};
  attr.handled_access_fs = HandledFs(abi);
  // No rules for these: TCP bind/connect denied, a second wall behind the network namespace.
  if (abi >= 4 && !p.network) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  // Signals only to processes inside this sandbox: the judge and supervisor are out of reach.
  if (abi >= 6) attr.scoped = kScopeSignal | (p.network ? 0 : kScopeAbstractUnix);
  UniqueFd ruleset(int(syscall(kSysCreateRuleset, &attr, sizeof(attr), 0)));
  if (!ruleset.valid()) return Errno("landlock_create_ruleset");
  for (const std::string& path : p.writable) {
    UniqueFd fd(open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) continue;  // e.g. /dev/nvidia-caps on a machine without it
      return Errno("open " + path);
    }
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return Errno("stat " + path);
    PathBeneathAttr rule{};
    rule.allowed_access = attr.handled_access_fs;
    if (!S_ISDIR(st.st_mode)) rule.allowed_access &= kWriteFile | kTruncate | kIoctlDev;
    rule.parent_fd = fd.get();
    if (syscall(kSysAddRule, ruleset.get(), kRulePathBeneath, &rule, 0) != 0)
      return Errno("landlock_add_rule " + path);
  }
  if (syscall(kSysRestrictSelf, ruleset.get(), 0) != 0) return Errno("landlock_restrict_self");
  return "";
}

std::string ApplyReadOnlyMounts(const Policy& p) {
  if (unshare(CLONE_NEWNS) != 0) return Errno("unshare(CLONE_NEWNS)");
  // Private first: our remounts must not reach the host's mount namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Errno("making / private");
  std::set<std::string> keep;
  for (const std::string& w : p.writable) {
    if (access(w.c_str(), F_OK) != 0) continue;
    if (mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return Errno("bind " + w);
    keep.insert(w);
  }
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return Errno("reading /proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::stringstream ss(line);
    std::string id, parent, dev, root, point, opts;
    ss >> id >> parent >> dev >> root >> point >> opts;
    point = Unescape(point);
    if (keep.count(point)) continue;
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MountFlags(opts);
    // A mount we cannot see into (EACCES) or that vanished stays as it was only if it is
    // already read-only; anything else is a failure to confine.
    if (mount(nullptr, point.c_str(), nullptr, flags, nullptr) != 0 && opts.rfind("ro", 0) != 0 &&
        errno != ENOENT)
      return Errno("remount read-only " + point);
  }
  return "";
}

}  // namespace kf::sandbox
