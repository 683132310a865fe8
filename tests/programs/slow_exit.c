/* A traced program whose exit takes a while: after RUN seconds of work, main
 * prints the realtime (ms since the epoch) at which it returns, and a
 * destructor of the program then lingers LINGER seconds, as a server's
 * shutdown does while it flushes and closes. The analyzer thread must be
 * stopped before the program's static objects go, not keep ticking through
 * the process's exit.
 *
 * Usage: slow_exit RUN LINGER */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double linger_s;

static double realtime_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static void pause_s(double seconds) {
  struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&pause, NULL);
}

void serve_a_little(void) {
  for (int i = 0; i < 20000; ++i) sink += (unsigned long)i * 2654435761u;
  pause_s(0.001);
}

__attribute__((destructor)) static void linger(void) { pause_s(linger_s); }

int main(int argc, char** argv) {
  double run_s = argc > 1 ? atof(argv[1]) : 1;
  linger_s = argc > 2 ? atof(argv[2]) : 1;
  double end = realtime_ms() + run_s * 1e3;
  while (realtime_ms() < end) serve_a_little();
  printf("exiting %.0f\n", realtime_ms());
  fflush(stdout);
  return 0;
}
