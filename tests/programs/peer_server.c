/* A traced "server" for the analyzer's end-to-end tests: one worker thread
 * alternates CPU work and a short blocking wait, for SECONDS. From
 * SLOW_AFTER seconds on, its waits take SLOW_FACTOR times longer: a server
 * limping on whatever it waits for, while staying alive.
 *
 * With "daemon" as fourth argument it first daemonizes like a PVFS server
 * (fork, setsid, the parent exits) and prints the daemon's pid. Like a PVFS
 * server, it initializes for a while before the fork, so the parent's own
 * analyzer is already running (its peer socket bound) when it forks.
 *
 * Usage: peer_server SECONDS [SLOW_FACTOR (1)] [SLOW_AFTER (0)] [daemon] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

static volatile unsigned long sink;

static double now_s(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

void work_cpu(void) {
  for (int i = 0; i < 20000; ++i) sink += (unsigned long)i * 2654435761u;
}

void wait_io(long micros) {
  struct timespec pause = {0, micros * 1000L};
  nanosleep(&pause, NULL);
}

void handle_request(long wait_micros) {
  work_cpu();
  wait_io(wait_micros);
}

void daemonize(void) {
  struct timespec initializing = {0, 400 * 1000000L};
  nanosleep(&initializing, NULL);
  pid_t child = fork();
  if (child != 0) exit(child < 0 ? 1 : 0);
  setsid();
  printf("daemon %d\n", (int)getpid());
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc > 4 && !strcmp(argv[4], "daemon")) daemonize();
  double seconds = argc > 1 ? atof(argv[1]) : 10;
  double slow_factor = argc > 2 ? atof(argv[2]) : 1;
  double slow_after = argc > 3 ? atof(argv[3]) : 0;
  double start = now_s();
  for (;;) {
    double elapsed = now_s() - start;
    if (elapsed >= seconds) break;
    long wait = elapsed >= slow_after ? (long)(500 * slow_factor) : 500;
    handle_request(wait);
  }
  return 0;
}
