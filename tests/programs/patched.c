/* A program built with -fpatchable-function-entry=5 and WITHOUT
 * -finstrument-functions, for the dynamic patching tests (LIMPWATCH_PATCH=1).
 * Scenarios:
 *   tree          parent_work -> 1000 x child_hot, 3 x child_slow (20 ms sleep)
 *   registers     patched functions with integer, floating-point, variadic,
 *                 struct and long double arguments and results; exits 1 on a
 *                 wrong value (the trampolines must keep every register the
 *                 calling convention passes or returns in)
 *   threads MS STOP [block-sigtrap]
 *                 4 threads call phase_a and phase_b in a loop for MS ms, or
 *                 until the file STOP exists; prints "ready" once they run and
 *                 the real call counts at the end; with block-sigtrap the
 *                 threads run with SIGTRAP blocked
 *   longjmp N     jumper: N times deep_1 -> deep_2 -> deep_3, which longjmps
 *                 back to jumper; then 10 x child_hot
 *   pthread_exit  a thread's body calls exiting_leaf, which ends the thread
 *                 with pthread_exit; then 5 x child_hot
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

void child_hot(void) { sink++; }

void child_slow(void) { sleep_ms(20); }

void parent_work(void) {
  for (int i = 0; i < 1000; ++i) child_hot();
  for (int i = 0; i < 3; ++i) child_slow();
}

/* registers */

struct pair {
  long first;
  long second;
};

long six_integers(long a, long b, long c, long d, long e, long f) { return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f; }

double eight_doubles(double a, double b, double c, double d, double e, double f, double g, double h) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

long sum_variadic(int count, ...) {
  va_list arguments;
  va_start(arguments, count);
  long total = 0;
  for (int i = 0; i < count; ++i) total += (long)va_arg(arguments, double);
  va_end(arguments);
  return total;
}

struct pair make_pair(long first, long second) {
  struct pair result = {first, second};
  return result;
}

long double scaled_long_double(long double value) { return value * 3.0L; }

/* Arguments past the sixth, and structs too large for registers, are passed
 * on the stack: a trampoline that moved the stack pointer would shift them. */
long ten_integers(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

struct quad {
  long values[4];
};

long sum_quad_by_value(struct quad quad, long bias) {
  return quad.values[0] + quad.values[1] + quad.values[2] + quad.values[3] + bias;
}

struct quad make_quad(long first) { /* returned through a hidden pointer */
  struct quad result = {{first, first + 1, first + 2, first + 3}};
  return result;
}

long nested_stack_arguments(long a, long b, long c, long d, long e, long f, long g, long h) {
  return ten_integers(a, b, c, d, e, f, g, h, g * 10, h * 10) + g - h;
}

int check_registers(void) {
  int failures = 0;
  if (six_integers(1, 2, 3, 4, 5, 6) != 91) failures++;
  if (eight_doubles(1, 2, 3, 4, 5, 6, 7, 8) != 204.0) failures++;
  if (sum_variadic(3, 1.0, 2.0, 4.0) != 7) failures++;
  struct pair pair = make_pair(7, 11);
  if (pair.first != 7 || pair.second != 11) failures++;
  if (scaled_long_double(1.5L) != 4.5L) failures++;
  if (ten_integers(1, 2, 3, 4, 5, 6, 7, 8, 9, 10) != 385) failures++;
  struct quad quad = make_quad(5);
  if (quad.values[0] != 5 || quad.values[3] != 8) failures++;
  if (sum_quad_by_value(quad, 100) != 126) failures++;
  if (nested_stack_arguments(1, 2, 3, 4, 5, 6, 7, 8) != 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 630 + 800 - 1) failures++;
  return failures;
}

/* threads */

/* Atomic: the workers read it while main sets it (a plain flag is a data
   race, which ThreadSanitizer reports). */
static atomic_int stop_threads;
static unsigned long real_calls_a, real_calls_b;

void phase_a(void) { __atomic_fetch_add(&real_calls_a, 1, __ATOMIC_RELAXED); }

void phase_b(void) { __atomic_fetch_add(&real_calls_b, 1, __ATOMIC_RELAXED); }

/* Pauses now and then so that limpwatch's service thread (at nice 19) gets
 * to apply the test's selection changes on a loaded machine. */
static int block_sigtrap;

void* worker(void* unused) {
  if (block_sigtrap) {
    sigset_t trap;
    sigemptyset(&trap);
    sigaddset(&trap, SIGTRAP);
    pthread_sigmask(SIG_BLOCK, &trap, NULL);
  }
  for (unsigned long round = 1; !atomic_load_explicit(&stop_threads, memory_order_relaxed); ++round) {
    phase_a();
    phase_b();
    if (round % 4096 == 0) {
      struct timespec pause = {0, 100000};
      nanosleep(&pause, NULL);
    }
  }
  return unused;
}

static double NowMs(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

void run_threads(long duration_ms, const char* stop_file) {
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, worker, NULL);
  printf("ready\n");
  fflush(stdout);
  double end = NowMs() + (double)duration_ms;
  while (NowMs() < end && (stop_file == NULL || access(stop_file, F_OK) != 0)) sleep_ms(10);
  atomic_store_explicit(&stop_threads, 1, memory_order_relaxed);
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  printf("phase_a %lu\nphase_b %lu\n", real_calls_a, real_calls_b);
}

/* longjmp */

static jmp_buf jump_back;

void deep_3(void) { longjmp(jump_back, 1); }

void deep_2(void) {
  deep_3();
  sink++;
}

void deep_1(void) {
  deep_2();
  sink++;
}

void jumper(long rounds) {
  static volatile long round;
  for (round = 0; round < rounds; ++round) {
    if (setjmp(jump_back) == 0) deep_1();
  }
  for (int i = 0; i < 10; ++i) child_hot();
}

/* pthread_exit */

void exiting_leaf(void) { pthread_exit(NULL); }

void* thread_body(void* unused) {
  child_hot();
  exiting_leaf();
  return unused;
}

void run_pthread_exit(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, thread_body, NULL);
  pthread_join(thread, NULL);
  for (int i = 0; i < 5; ++i) child_hot();
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "tree";
  if (strcmp(scenario, "tree") == 0) {
    parent_work();
  } else if (strcmp(scenario, "registers") == 0) {
    int failures = check_registers();
    printf("failures %d\n", failures);
    return failures == 0 ? 0 : 1;
  } else if (strcmp(scenario, "threads") == 0) {
    block_sigtrap = argc > 4 && strcmp(argv[4], "block-sigtrap") == 0;
    run_threads(argc > 2 ? atol(argv[2]) : 1000, argc > 3 ? argv[3] : NULL);
  } else if (strcmp(scenario, "longjmp") == 0) {
    jumper(argc > 2 ? atol(argv[2]) : 100);
  } else if (strcmp(scenario, "pthread_exit") == 0) {
    run_pthread_exit();
  } else {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  return 0;
}
