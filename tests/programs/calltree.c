/* A traced program with a known call tree, for the golden tests.
 *
 * Built with -finstrument-functions -fno-inline -fno-ipa-cp and linked with
 * liblimpwatch.so. Each scenario (argv[1]) calls functions a known number of
 * times; the tests read the segment it leaves (LIMPWATCH_KEEP=1) and compare.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Work the compiler cannot drop; threads add to it at once, so atomically. */
static unsigned long sink;
#define SINK_ADD(value) __atomic_fetch_add(&sink, (unsigned long)(value), __ATOMIC_RELAXED)

void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

void leaf_fast(void) { SINK_ADD(1); }

void leaf_sleep(void) { sleep_ms(20); }

void parent(void) {
  leaf_sleep();
  for (int i = 0; i < 10; ++i) leaf_fast();
  leaf_sleep();
}

int recurse(int depth) { return depth == 0 ? 0 : 1 + recurse(depth - 1); }

void run_tree(void) {
  for (int i = 0; i < 3; ++i) parent();
  SINK_ADD(recurse(5));
}

void* worker(void* argument) {
  long calls = (long)argument;
  for (long i = 0; i < calls; ++i) leaf_fast();
  return NULL;
}

void run_threads(int threads, long calls) {
  pthread_t ids[256];
  for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, worker, (void*)calls);
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
}

/* 200 distinct functions for the "wide" scenario: more than a retiring
 * thread lists one by one (kTouchedFunctionCapacity), or fewer. */
#define WIDE1(n) \
  void wide_##n(void) { SINK_ADD(1); }
#define WIDE10(n)                                                                                 \
  WIDE1(n##0) WIDE1(n##1) WIDE1(n##2) WIDE1(n##3) WIDE1(n##4) WIDE1(n##5) WIDE1(n##6) WIDE1(n##7) \
      WIDE1(n##8) WIDE1(n##9)
WIDE10(1) WIDE10(2) WIDE10(3) WIDE10(4) WIDE10(5) WIDE10(6) WIDE10(7) WIDE10(8) WIDE10(9) WIDE10(10)
WIDE10(11) WIDE10(12) WIDE10(13) WIDE10(14) WIDE10(15) WIDE10(16) WIDE10(17) WIDE10(18) WIDE10(19) WIDE10(20)
#define WIDE_REF1(n) wide_##n,
#define WIDE_REF10(n)                                                                                         \
  WIDE_REF1(n##0) WIDE_REF1(n##1) WIDE_REF1(n##2) WIDE_REF1(n##3) WIDE_REF1(n##4) WIDE_REF1(n##5) WIDE_REF1(n##6) \
      WIDE_REF1(n##7) WIDE_REF1(n##8) WIDE_REF1(n##9)
static void (*const wide_functions[200])(void) = {
    WIDE_REF10(1) WIDE_REF10(2) WIDE_REF10(3) WIDE_REF10(4) WIDE_REF10(5) WIDE_REF10(6) WIDE_REF10(7)
        WIDE_REF10(8) WIDE_REF10(9) WIDE_REF10(10) WIDE_REF10(11) WIDE_REF10(12) WIDE_REF10(13) WIDE_REF10(14)
            WIDE_REF10(15) WIDE_REF10(16) WIDE_REF10(17) WIDE_REF10(18) WIDE_REF10(19) WIDE_REF10(20)};

static int wide_count;

void* wide_worker(void* argument) {
  (void)argument;
  for (int i = 0; i < wide_count; ++i) wide_functions[i]();
  leaf_fast();
  return NULL;
}

/* Threads one after another, each calling the first `width` wide functions
 * once: with few slots, each thread takes the slot the one before retired. */
void run_wide(int threads, int width) {
  wide_count = width < 0 ? 0 : width > 200 ? 200 : width;
  for (int i = 0; i < threads; ++i) {
    pthread_t id;
    pthread_create(&id, NULL, wide_worker, NULL);
    pthread_join(id, NULL);
  }
}

void child_work(void) {
  for (int i = 0; i < 5; ++i) leaf_fast();
}

void parent_work(void) {
  for (int i = 0; i < 7; ++i) leaf_fast();
}

pid_t do_fork(void) { return fork(); }

/* Like a PVFS server: fork, the parent goes on (or exits), the child works. */
void before_fork(int daemonize) {
  pid_t child = do_fork();
  if (child == 0) {
    if (daemonize) setsid();
    child_work();
    printf("child %d\n", (int)getpid());
    fflush(stdout);
    return;
  }
  if (daemonize) exit(0);
  waitpid(child, NULL, 0);
  parent_work();
}

static jmp_buf jump_target;

void deep2(void) { longjmp(jump_target, 1); }

void deep1(void) { deep2(); }

void jumper(void) {
  if (setjmp(jump_target) == 0) deep1();
  leaf_fast();
}

/* The first traced call of a new thread takes the runtime's cold path
 * (slot acquisition, system calls): errno must come out unchanged. */
void first_call_of_thread(void) { SINK_ADD(1); }

void* errno_probe(void* result) {
  errno = EDOM;
  first_call_of_thread();
  *(int*)result = errno;
  return NULL;
}

int check_errno(void) {
  int seen = 0;
  pthread_t thread;
  pthread_create(&thread, NULL, errno_probe, &seen);
  pthread_join(thread, NULL);
  printf("errno %d\n", seen);
  return seen == EDOM ? 0 : 1;
}

void hang(void) {
  printf("ready\n");
  fflush(stdout);
  for (;;) sleep_ms(1000);
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "tree";
  if (!strcmp(scenario, "tree")) {
    run_tree();
  } else if (!strcmp(scenario, "threads")) {
    int threads = argc > 2 ? atoi(argv[2]) : 16;
    long calls = argc > 3 ? atol(argv[3]) : 1000;
    if (threads > 256) threads = 256;
    run_threads(threads, calls);
  } else if (!strcmp(scenario, "wide")) {
    run_wide(argc > 2 ? atoi(argv[2]) : 10, argc > 3 ? atoi(argv[3]) : 200);
  } else if (!strcmp(scenario, "fork")) {
    before_fork(0);
  } else if (!strcmp(scenario, "daemon")) {
    before_fork(1);
  } else if (!strcmp(scenario, "longjmp")) {
    jumper();
  } else if (!strcmp(scenario, "deep")) {
    SINK_ADD(recurse(argc > 2 ? atoi(argv[2]) : 1000));
  } else if (!strcmp(scenario, "errno")) {
    return check_errno();
  } else if (!strcmp(scenario, "hang")) {
    hang();
  } else {
    fprintf(stderr, "calltree: unknown scenario '%s'\n", scenario);
    return 2;
  }
  return 0;
}
