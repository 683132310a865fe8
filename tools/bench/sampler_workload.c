/* The traced programs the sampler benchmark runs.
 *
 *   sampler_workload UNITS WARMUP_UNITS [cpu|switch|toggle]
 *
 * cpu (default): a fixed mix of traced calls and arithmetic, no I/O, no
 * sleeping. switch: two threads hand a byte back and forth through pipes,
 * 100 round trips a unit, so the threads block and wake all the time: the
 * cost a per-thread sampling event adds to every context switch.
 *
 * Every mode makes system calls for 0.2 CPU seconds after its warm-up and
 * pauses 0.5 s, so the sampler's one-time loading of kernel symbols falls
 * outside the measured part (with the sampler off it costs nothing).
 *
 * toggle: the cpu loop in slices, with limpwatch's perf events (this
 * process's own descriptors) enabled and disabled by turns (ABBA), timing
 * each slice with this thread's CPU clock: both halves see the same machine
 * within milliseconds, which separate runs on a shared VM never do. Prints
 * "toggle <on cpu s> <on units> <off cpu s> <off units> <reader cpu s>",
 * the last being limpwatch's reader thread, which works for the on halves.
 *
 * Otherwise runs WARMUP_UNITS units, then UNITS measured units, and prints the CPU
 * time of the measured part (every thread of the process, limpwatch's
 * service thread included) and its context switches:
 * "<cpu seconds> <units> <context switches> <checksum>". The warm-up
 * keeps one-time costs (start-up, first symbol loads) out of the figure. */
#include <dirent.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long mix(unsigned long x) {
  for (int round = 0; round < 8; ++round) x = (x ^ (x >> 13)) * 0x9e3779b97f4a7c15ull + (unsigned long)round;
  return x;
}

__attribute__((noinline)) void work_unit(void) {
  unsigned long x = sink;
  for (int i = 0; i < 1000; ++i) x = mix(x + (unsigned long)i);
  sink = x;
}

static int ping[2], pong[2];

__attribute__((noinline)) void* echo_thread(void* unused) {
  char byte;
  while (read(ping[0], &byte, 1) == 1) {
    if (write(pong[1], &byte, 1) != 1) break;
  }
  return unused;
}

__attribute__((noinline)) void switch_unit(void) {
  char byte = 'x';
  for (int i = 0; i < 100; ++i) {
    if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) exit(1);
  }
}

static double thread_cpu_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* This process's perf event descriptors (limpwatch's), at most `capacity`. */
static int perf_descriptors(int* fds, int capacity) {
  int count = 0;
  DIR* directory = opendir("/proc/self/fd");
  if (directory == NULL) return 0;
  struct dirent* entry;
  while ((entry = readdir(directory)) != NULL && count < capacity) {
    char path[300], target[64];
    snprintf(path, sizeof path, "/proc/self/fd/%s", entry->d_name);
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length <= 0) continue;
    target[length] = '\0';
    if (strcmp(target, "anon_inode:[perf_event]") == 0) fds[count++] = atoi(entry->d_name);
  }
  closedir(directory);
  return count;
}

/* CPU time of limpwatch's reader thread ("limpwatch-samp"), from schedstat. */
static double reader_cpu_seconds(void) {
  double seconds = 0;
  DIR* directory = opendir("/proc/self/task");
  if (directory == NULL) return 0;
  struct dirent* entry;
  while ((entry = readdir(directory)) != NULL) {
    char path[300], name[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
    FILE* comm = fopen(path, "r");
    if (comm == NULL) continue;
    if (fgets(name, sizeof name, comm) == NULL) name[0] = '\0';
    fclose(comm);
    if (strncmp(name, "limpwatch-samp", 14) != 0) continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", entry->d_name);
    FILE* stat = fopen(path, "r");
    unsigned long long ns = 0;
    if (stat != NULL && fscanf(stat, "%llu", &ns) == 1) seconds += (double)ns / 1e9;
    if (stat != NULL) fclose(stat);
  }
  closedir(directory);
  return seconds;
}

static void set_events(const int* fds, int count, int enable) {
  for (int index = 0; index < count; ++index) {
    ioctl(fds[index], enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
  }
}

/* System calls for a while, so the sampler takes kernel samples and loads
 * /proc/kallsyms now (a one-time cost, ~60 ms), then a pause for its reader
 * to do so: the toggle measures the steady state. */
static void prime_kernel_symbols(void) {
  double end = thread_cpu_seconds() + 0.2;
  while (thread_cpu_seconds() < end) getppid();
  struct timespec pause = {0, 500000000L};
  nanosleep(&pause, NULL);
}

/* Slices of `slice` units; pattern on, off, off, on, ... */
static int run_toggle(long units, long slice) {
  int fds[256];
  int count = perf_descriptors(fds, 256);
  if (count == 0) {
    fprintf(stderr, "sampler_workload: no perf event descriptors: is the sampler on (perf)?\n");
    return 1;
  }
  double on_seconds = 0, off_seconds = 0;
  long on_units = 0, off_units = 0;
  double reader_before = reader_cpu_seconds();
  for (long done = 0, index = 0; done < units; done += slice, ++index) {
    int enable = (index % 4 == 0 || index % 4 == 3);
    set_events(fds, count, enable);
    double start = thread_cpu_seconds();
    for (long unit = 0; unit < slice; ++unit) work_unit();
    double used = thread_cpu_seconds() - start;
    if (enable) {
      on_seconds += used;
      on_units += slice;
    } else {
      off_seconds += used;
      off_units += slice;
    }
  }
  set_events(fds, count, 1);
  printf("toggle %.6f %ld %.6f %ld %.6f\n", on_seconds, on_units, off_seconds, off_units,
         reader_cpu_seconds() - reader_before);
  return 0;
}

static double cpu_seconds(const struct rusage* usage) {
  return (double)usage->ru_utime.tv_sec + (double)usage->ru_utime.tv_usec / 1e6 + (double)usage->ru_stime.tv_sec +
         (double)usage->ru_stime.tv_usec / 1e6;
}

int main(int argc, char** argv) {
  long units = argc > 1 ? atol(argv[1]) : 10000;
  long warmup = argc > 2 ? atol(argv[2]) : 0;
  void (*unit_of_work)(void) = work_unit;
  if (argc > 3 && !strcmp(argv[3], "toggle")) {
    for (long unit = 0; unit < warmup; ++unit) work_unit();
    prime_kernel_symbols();
    return run_toggle(units, 500);
  }
  if (argc > 3 && !strcmp(argv[3], "switch")) {
    pthread_t echo;
    if (pipe(ping) != 0 || pipe(pong) != 0 || pthread_create(&echo, NULL, echo_thread, NULL) != 0) return 1;
    unit_of_work = switch_unit;
  }
  for (long unit = 0; unit < warmup; ++unit) unit_of_work();
  prime_kernel_symbols();
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  for (long unit = 0; unit < units; ++unit) unit_of_work();
  getrusage(RUSAGE_SELF, &after);
  long switches = (after.ru_nvcsw - before.ru_nvcsw) + (after.ru_nivcsw - before.ru_nivcsw);
  printf("%.6f %ld %ld %lu\n", cpu_seconds(&after) - cpu_seconds(&before), units, switches, (unsigned long)sink);
  return 0;
}
