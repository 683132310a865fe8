/* A server that starts a thread per request, as OrangeFS's alt-aio does for
 * every bstream read or write: the main thread first calls 1,000 distinct
 * functions (a server's worth of known functions), then starts and joins
 * THREADS threads one after another, each handling one request (two traced
 * calls and a 4 KiB pwrite to a file in DIR).
 *
 *   thread_churn_workload DIR THREADS
 *
 * prints two numbers, in microseconds per thread: elapsed time and the
 * process's CPU time (what the runtime adds to a thread's start and
 * retirement shows in both). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned sink;
static int request_fd = -1;
static char block[4096];

#define KNOWN1(n) \
  void known_##n(void) { sink += n; }
#define KNOWN10(n)                                                                                      \
  KNOWN1(n##0) KNOWN1(n##1) KNOWN1(n##2) KNOWN1(n##3) KNOWN1(n##4) KNOWN1(n##5) KNOWN1(n##6) KNOWN1(n##7) \
      KNOWN1(n##8) KNOWN1(n##9)
#define KNOWN100(n)                                                                                       \
  KNOWN10(n##0) KNOWN10(n##1) KNOWN10(n##2) KNOWN10(n##3) KNOWN10(n##4) KNOWN10(n##5) KNOWN10(n##6) \
      KNOWN10(n##7) KNOWN10(n##8) KNOWN10(n##9)
KNOWN100(1) KNOWN100(2) KNOWN100(3) KNOWN100(4) KNOWN100(5) KNOWN100(6) KNOWN100(7) KNOWN100(8) KNOWN100(9)
KNOWN100(10)
#define CALL1(n) known_##n();
#define CALL10(n)                                                                                        \
  CALL1(n##0) CALL1(n##1) CALL1(n##2) CALL1(n##3) CALL1(n##4) CALL1(n##5) CALL1(n##6) CALL1(n##7) CALL1(n##8) \
      CALL1(n##9)
#define CALL100(n)                                                                                      \
  CALL10(n##0) CALL10(n##1) CALL10(n##2) CALL10(n##3) CALL10(n##4) CALL10(n##5) CALL10(n##6) CALL10(n##7) \
      CALL10(n##8) CALL10(n##9)

void call_known_functions(void) {
  CALL100(1) CALL100(2) CALL100(3) CALL100(4) CALL100(5) CALL100(6) CALL100(7) CALL100(8) CALL100(9) CALL100(10)
}

void write_request(void) {
  if (pwrite(request_fd, block, sizeof block, 0) != (ssize_t)sizeof block) sink++;
}

void* request_thread(void* argument) {
  (void)argument;
  write_request();
  return NULL;
}

static double seconds(clockid_t clock) {
  struct timespec now;
  clock_gettime(clock, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: thread_churn_workload DIR THREADS\n");
    return 2;
  }
  int threads = atoi(argv[2]);
  char path[4096];
  snprintf(path, sizeof path, "%s/requests", argv[1]);
  request_fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (request_fd < 0 || threads <= 0) {
    fprintf(stderr, "thread_churn_workload: cannot open %s or bad THREADS\n", path);
    return 1;
  }
  call_known_functions();
  double start = seconds(CLOCK_MONOTONIC);
  double cpu_start = seconds(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < threads; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, request_thread, NULL) != 0) return 1;
    pthread_join(thread, NULL);
  }
  double elapsed = seconds(CLOCK_MONOTONIC) - start;
  double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
  printf("%.3f %.3f\n", elapsed / threads * 1e6, cpu / threads * 1e6);
  close(request_fd);
  unlink(path);
  return 0;
}
