/* Runs a program under restrictions the sampler must survive, then execs it:
 *
 *   sandbox_launcher [--deny-perf] [--as-nobody] PROGRAM ARGS...
 *
 * --deny-perf   a seccomp filter makes every perf_event_open fail with
 *               EACCES, as a container runtime's default profile does;
 * --as-nobody   drops root for uid/gid 65534 (an unprivileged server).
 * The filter survives exec (no_new_privs), so the refusal is the kernel's,
 * not a simulation inside limpwatch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define LAUNCHER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define LAUNCHER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "sandbox_launcher: unsupported architecture"
#endif

static int deny_perf_event_open(void) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, LAUNCHER_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

static int become_nobody(void) {
  const gid_t nobody_group = 65534;
  const uid_t nobody_user = 65534;
  if (setgroups(0, NULL) != 0) return -1;
  if (setgid(nobody_group) != 0) return -1;
  return setuid(nobody_user);
}

int main(int argc, char** argv) {
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; ++first) {
    if (!strcmp(argv[first], "--deny-perf")) {
      if (deny_perf_event_open() != 0) {
        fprintf(stderr, "sandbox_launcher: seccomp: %s\n", strerror(errno));
        return 125;
      }
    } else if (!strcmp(argv[first], "--as-nobody")) {
      if (become_nobody() != 0) {
        fprintf(stderr, "sandbox_launcher: dropping root: %s\n", strerror(errno));
        return 125;
      }
    } else {
      fprintf(stderr, "sandbox_launcher: unknown option %s\n", argv[first]);
      return 125;
    }
  }
  if (first >= argc) {
    fprintf(stderr, "usage: sandbox_launcher [--deny-perf] [--as-nobody] PROGRAM ARGS...\n");
    return 125;
  }
  execv(argv[first], argv + first);
  fprintf(stderr, "sandbox_launcher: exec %s: %s\n", argv[first], strerror(errno));
  return 126;
}
