/* A traced program with a known CPU profile, for the sampler tests.
 *
 * Built like the golden programs (-O0 -finstrument-functions -fno-inline)
 * and linked with liblimpwatch.so and libsampled_lib.so. Each scenario
 * (argv[1]) spends CPU time in known functions; the tests read the sample
 * table of the segment it leaves (LIMPWATCH_KEEP=1).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sampled_lib.h"

/* burn_one and burn_two's: one thread at a time. The threads that burn at
   once count in variables of their own (no data race of the program's for
   ThreadSanitizer to report). */
static volatile unsigned long sink;

/* burn_two and burn_one run the same loop: CPU time is proportional to the
 * iteration count. */
void burn_two(long iterations) {
  for (long i = 0; i < iterations; ++i) sink += (unsigned long)i;
}

void burn_one(long iterations) {
  for (long i = 0; i < iterations; ++i) sink += (unsigned long)i;
}

double process_cpu_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

double thread_cpu_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Chunks of several sample periods each, alternating, so both functions see
 * the same machine (noisy neighbours, frequency). The split is 2:1 in
 * iterations; the CPU time each function really took is measured around its
 * chunks and printed, so the test compares the samples with what happened
 * even when a neighbour or the hypervisor slowed one chunk down. */
void run_split(double seconds) {
  const long chunk = 4000000;
  double two_seconds = 0, one_seconds = 0;
  double end = process_cpu_seconds() + seconds;
  while (process_cpu_seconds() < end) {
    double start = thread_cpu_seconds();
    burn_two(2 * chunk);
    double middle = thread_cpu_seconds();
    burn_one(chunk);
    one_seconds += thread_cpu_seconds() - middle;
    two_seconds += middle - start;
  }
  printf("burn_two %.6f burn_one %.6f\n", two_seconds, one_seconds);
}

void run_library(double seconds) {
  double end = process_cpu_seconds() + seconds;
  while (process_cpu_seconds() < end) {
    lib_burn(4000000);
    burn_one(1000000);
  }
}

/* Reading a CPU clock is a system call: done once per million iterations,
 * so nearly all samples fall in the burning function itself. */
void grandchild_burn(double seconds) {
  double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end) {
    volatile unsigned long own = 0;
    for (long i = 0; i < 1000000; ++i) own++;
  }
}

void* grandchild_main(void* argument) {
  grandchild_burn(*(double*)argument);
  return NULL;
}

void late_thread_burn(double seconds) {
  double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end) {
    volatile unsigned long own = 0;
    for (long i = 0; i < 1000000; ++i) own++;
  }
}

/* Started after the sampler; starts a thread of its own, so the test also
 * covers threads whose creator is not the main thread. */
void* late_thread_main(void* argument) {
  pthread_t grandchild;
  pthread_create(&grandchild, NULL, grandchild_main, argument);
  late_thread_burn(*(double*)argument);
  pthread_join(grandchild, NULL);
  return NULL;
}

void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

void run_late_threads(double seconds) {
  sleep_ms(200);
  pthread_t thread;
  pthread_create(&thread, NULL, late_thread_main, &seconds);
  pthread_join(thread, NULL);
}

/* The system call is issued here, not in libc, so this function is the
 * innermost user frame under the kernel's samples. */
void write_burst(int fd, long count) {
  static const char byte = 'x';
  for (long i = 0; i < count; ++i) {
#if defined(__x86_64__)
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"((long)SYS_write), "D"((long)fd), "S"(&byte), "d"(1L)
                     : "rcx", "r11", "memory");
    (void)result;
#else
    syscall(SYS_write, fd, &byte, 1);
#endif
  }
}

int run_syscalls(double seconds) {
  FILE* null_device = fopen("/dev/null", "w");
  if (null_device == NULL) return 1;
  int fd = fileno(null_device);
  double end = process_cpu_seconds() + seconds;
  while (process_cpu_seconds() < end) write_burst(fd, 2000);
  fclose(null_device);
  return 0;
}

/* Kernel samples (so that the sampler's reader loads the kernel's symbols),
 * a pause for the reader to drain them, then one 1 MiB malloc: under glibc's
 * initial mmap threshold (128 KiB) it is mapped on its own, unless a large
 * block freed earlier in the process raised the threshold. Prints
 * "large malloc mapped: 1" or "... 0". */
int run_malloc_threshold(double seconds) {
  int status = run_syscalls(seconds);
  if (status != 0) return status;
  struct timespec pause = {0, 400 * 1000 * 1000};
  nanosleep(&pause, NULL);
  struct mallinfo2 before = mallinfo2();
  char* volatile block = malloc(1 << 20);
  if (block == NULL) return 1;
  block[0] = 1;
  struct mallinfo2 after = mallinfo2();
  printf("large malloc mapped: %zu\n", after.hblks - before.hblks);
  free(block);
  return 0;
}

/* Burns a little, says "ready <pid>" and waits for SIGTERM, then exits
 * normally: the test looks at /proc/<pid> meanwhile. */
int run_hold(void) {
  sigset_t terminate;
  sigemptyset(&terminate);
  sigaddset(&terminate, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &terminate, NULL);
  burn_one(20000000);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  int received = 0;
  sigwait(&terminate, &received);
  return 0;
}

/* Burns until SIGTERM, for `limpwatch top --samples`. */
int run_spin(void) {
  sigset_t terminate;
  sigemptyset(&terminate);
  sigaddset(&terminate, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &terminate, NULL);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  struct timespec zero = {0, 0};
  while (sigtimedwait(&terminate, NULL, &zero) < 0) {
    burn_two(2000000);
    burn_one(1000000);
  }
  return 0;
}

static volatile sig_atomic_t own_ticks, foreign_ticks;

/* The program's own profiler: counts its ITIMER_PROF ticks, and any POSIX
 * timer tick (limpwatch's) that reaches it. */
void on_own_sigprof(int signal_number, siginfo_t* info, void* context) {
  (void)signal_number;
  (void)context;
  if (info->si_code == SI_TIMER) {
    foreign_ticks++;
  } else {
    own_ticks++;
  }
}

void own_profiled_burn(double seconds) {
  double end = process_cpu_seconds() + seconds;
  while (process_cpu_seconds() < end) burn_one(1000000);
}

/* Installs its own SIGPROF handler and profiles itself with setitimer, as
 * gprof-style tools do, 300 ms after start. Prints its tick counts. */
int run_own_sigprof(double seconds) {
  own_profiled_burn(0.3);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_own_sigprof;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPROF, &action, NULL);
  struct itimerval every_10ms = {{0, 10000}, {0, 10000}};
  setitimer(ITIMER_PROF, &every_10ms, NULL);
  own_profiled_burn(seconds);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  printf("own %d foreign %d\n", (int)own_ticks, (int)foreign_ticks);
  return 0;
}

/* The burning thread's own CPU time, not the process's: in the daemon the
 * runtime's threads run too (its sample reader, the node's events holder
 * once the parent is gone, reads every CPU's samples, more of them on a
 * busy machine), and their time would shorten the burn the test counts on. */
void child_burn(double seconds) {
  double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end) {
    volatile unsigned long own = 0;
    for (long i = 0; i < 1000000; ++i) own++;
  }
}

/* Daemonizes like pvfs2-server: fork, the parent exits at once, the child
 * works on. Prints the child's pid; the child closes stdout when done. */
int run_daemon(double seconds) {
  pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) {
    printf("child %d\n", (int)child);
    fflush(stdout);
    return 0;
  }
  setsid();
  child_burn(seconds);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: sampled_work split|library|late_threads|syscalls|malloc_threshold|own_sigprof|daemon SECONDS | hold | spin\n");
    return 2;
  }
  double seconds = argc > 2 ? atof(argv[2]) : 1.0;
  const char* scenario = argv[1];
  if (!strcmp(scenario, "split")) {
    run_split(seconds);
  } else if (!strcmp(scenario, "library")) {
    run_library(seconds);
  } else if (!strcmp(scenario, "late_threads")) {
    run_late_threads(seconds);
  } else if (!strcmp(scenario, "syscalls")) {
    return run_syscalls(seconds);
  } else if (!strcmp(scenario, "malloc_threshold")) {
    return run_malloc_threshold(seconds);
  } else if (!strcmp(scenario, "own_sigprof")) {
    return run_own_sigprof(seconds);
  } else if (!strcmp(scenario, "daemon")) {
    return run_daemon(seconds);
  } else if (!strcmp(scenario, "hold")) {
    return run_hold();
  } else if (!strcmp(scenario, "spin")) {
    return run_spin();
  } else {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  return 0;
}
