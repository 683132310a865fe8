/* A traced program for the selective-tracing tests (LIMPWATCH_SELECT).
 *
 * Built with -finstrument-functions -fno-inline -fno-ipa-cp. Scenarios:
 *   tree [N]      parent_work -> N x child_hot (default 1000), 3 x child_slow
 *                 (20 ms sleep), and the static functions of selection_static.c
 *   loop MS       phase_a and phase_b alternately for MS milliseconds,
 *                 printing "ready" once the first round is done
 *   held MS       holder -> held_on_stack, which prints "ready" and sleeps MS
 *                 milliseconds, so a test can change the selection meanwhile
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void run_static_helpers(void); /* selection_static.c */

static volatile unsigned long sink;

void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

void child_hot(void) { sink++; }

void child_slow(void) { sleep_ms(20); }

static long hot_calls = 1000;

void parent_work(void) {
  for (long i = 0; i < hot_calls; ++i) child_hot();
  for (int i = 0; i < 3; ++i) child_slow();
}

/* Both start on a 1024-byte boundary, so they share their home position in
 * any function index of up to 64 positions (LIMPWATCH_MAX_FUNCTIONS=16). */
__attribute__((aligned(1024))) void phase_a(void) { sink += 2; }

__attribute__((aligned(1024))) void phase_b(void) { sink += 3; }

static double NowMs(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

void run_loop(long duration_ms) {
  double end = NowMs() + (double)duration_ms;
  int announced = 0;
  while (NowMs() < end) {
    phase_a();
    phase_b();
    if (!announced) {
      printf("ready\n");
      fflush(stdout);
      announced = 1;
    }
    sleep_ms(1);
  }
}

void held_on_stack(long ms) {
  printf("ready\n");
  fflush(stdout);
  sleep_ms((int)ms);
}

void holder(long ms) {
  child_hot();
  held_on_stack(ms);
  child_hot();
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "tree";
  if (strcmp(scenario, "tree") == 0) {
    if (argc > 2) hot_calls = atol(argv[2]);
    parent_work();
    run_static_helpers();
  } else if (strcmp(scenario, "loop") == 0) {
    run_loop(argc > 2 ? atol(argv[2]) : 1000);
  } else if (strcmp(scenario, "held") == 0) {
    holder(argc > 2 ? atol(argv[2]) : 1000);
  } else {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  return 0;
}
