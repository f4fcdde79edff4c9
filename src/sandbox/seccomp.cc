// A seccomp deny list, written as classic BPF by hand (no libseccomp on the GPU machine).
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "sandbox/steps.h"

namespace kf::sandbox {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "add this architecture's AUDIT_ARCH"
#endif

// Each reaches outside the process: other processes' memory, the kernel, mounts, namespaces,
// keyrings, handles that bypass path checks. EPERM, so code that probes them sees a refusal.
const long kDenied[] = {
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_kexec_load,
    SYS_kexec_file_load,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_setns,
    SYS_unshare,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_userfaultfd,
    SYS_open_by_handle_at,
    SYS_name_to_handle_at,
    SYS_pidfd_getfd,
    SYS_open_tree,
    SYS_move_mount,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
    SYS_mount_setattr,
    SYS_acct,
    SYS_settimeofday,
    SYS_clock_settime,
    SYS_clock_adjtime,
    SYS_adjtimex,
    SYS_sethostname,
    SYS_setdomainname,
    SYS_quotactl,
    SYS_kcmp,
#if defined(__x86_64__)
    SYS_iopl,
    SYS_ioperm,
#endif
};
constexpr unsigned long kNamespaceFlags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                          CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWUTS |
                                          CLONE_NEWCGROUP;  // CLONE_NEWTIME: clone3 only

using Prog = std::vector<sock_filter>;
void Stmt(Prog* p, uint16_t code, uint32_t k) { p->push_back(BPF_STMT(code, k)); }
void Jump(Prog* p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  p->push_back(BPF_JUMP(code, k, jt, jf));
}

}  // namespace

std::string ApplySeccomp() {
  constexpr uint32_t kErrno = SECCOMP_RET_ERRNO | EPERM;
  Prog p;
  // Another architecture's numbers would mean other syscalls: kill.
  Stmt(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  Jump(&p, BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0);
  Stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  Stmt(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  // x32 numbers (bit 30) reach the same kernel code under other numbers.
  Jump(&p, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
  Stmt(&p, BPF_RET | BPF_K, kErrno);
#endif
  for (long nr : kDenied) {
    Jump(&p, BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1);
    Stmt(&p, BPF_RET | BPF_K, kErrno);
  }
  // clone3 keeps its flags in memory a filter cannot read: ENOSYS makes libc fall back to
  // clone, whose flags we can check.
  Jump(&p, BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
  Stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  Jump(&p, BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3);
  Stmt(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));  // low 32 bits of flags
  Jump(&p, BPF_JMP | BPF_JSET | BPF_K, uint32_t(kNamespaceFlags), 0, 1);
  Stmt(&p, BPF_RET | BPF_K, kErrno);
  Stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  sock_fprog prog{uint16_t(p.size()), p.data()};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return Errno("seccomp(SECCOMP_SET_MODE_FILTER)");
  return "";
}

}  // namespace kf::sandbox
