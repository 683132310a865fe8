/* Compiler hook call sites rewritten at run time (LIMPWATCH_PATCH=1) in a
 * program built with -finstrument-functions.
 *
 *   call_sites MS STOP [block-sigtrap]
 *     4 threads call phase_a and phase_b in a loop for MS ms, or until the
 *     file STOP exists. The main thread watches the first hook call of each
 *     (its call to __cyg_profile_func_enter, found before any thread runs)
 *     and prints "phase_a call" or "phase_a nop" (likewise phase_b) at the
 *     start and whenever it changes (with patching on, phase_b may be a NOP
 *     from the start: the runtime rewrites as soon as it has loaded the
 *     manifest). At the end it prints "calls A B", the real call counts.
 *     With block-sigtrap the threads run with SIGTRAP blocked.
 *
 * The watching code is not instrumented, so only phase_a, phase_b and the
 * worker call the hooks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOT_TRACED __attribute__((no_instrument_function))

/* Atomic: the workers read it while main sets it (a plain flag is a data
   race, which ThreadSanitizer reports). */
static atomic_int stop_threads;
static unsigned long real_calls_a, real_calls_b;
static int block_sigtrap;

__attribute__((noinline)) void phase_a(void) { __atomic_fetch_add(&real_calls_a, 1, __ATOMIC_RELAXED); }

__attribute__((noinline)) void phase_b(void) { __atomic_fetch_add(&real_calls_b, 1, __ATOMIC_RELAXED); }

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

/* Where a `call rel32` at `at` goes, following a PLT entry to its GOT slot. */
NOT_TRACED static uintptr_t CallTarget(const unsigned char* at) {
  int32_t displacement;
  memcpy(&displacement, at + 1, sizeof displacement);
  const unsigned char* target = at + 5 + displacement;
  if (memcmp(target, "\xF3\x0F\x1E\xFA", 4) == 0) target += 4;
  if (target[0] == 0xF2) target += 1;
  if (target[0] != 0xFF || target[1] != 0x25) return (uintptr_t)(at + 5 + displacement);
  memcpy(&displacement, target + 2, sizeof displacement);
  return *(const uintptr_t*)(target + 6 + displacement);
}

/* Where the first call to the enter hook sits in the first 64 bytes of
   `function`, or -1. */
NOT_TRACED static int EnterSiteOffset(void (*function)(void), uintptr_t hook) {
  const unsigned char* code = (const unsigned char*)function;
  for (int offset = 0; offset < 64; ++offset) {
    if (code[offset] == 0xE8 && CallTarget(code + offset) == hook) return offset;
  }
  return -1;
}

NOT_TRACED static const char* SiteState(const unsigned char* site) {
  static const unsigned char nop5[5] = {0x0F, 0x1F, 0x44, 0x00, 0x00};
  if (memcmp(site, nop5, 5) == 0) return "nop";
  return site[0] == 0xE8 ? "call" : "other";
}

NOT_TRACED static double NowMs(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

NOT_TRACED int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: call_sites MS STOP [block-sigtrap]\n");
    return 2;
  }
  long duration_ms = atol(argv[1]);
  const char* stop_file = argv[2];
  block_sigtrap = argc > 3 && strcmp(argv[3], "block-sigtrap") == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* The hooks are bound lazily: call each once so that the PLT's slot holds it. */
  phase_a();
  phase_b();
  uintptr_t hook = (uintptr_t)dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
  /* The runtime may already have turned phase_b's call into a NOP (it is the
     function the tests exclude first), but never phase_a's: phase_a is the
     one searched, and phase_b, compiled from the same code, has its call at
     the same offset. */
  int offset = hook == 0 ? -1 : EnterSiteOffset(phase_a, hook);
  if (offset < 0) {
    fprintf(stderr, "call_sites: no call to the enter hook found in phase_a\n");
    return 2;
  }
  const unsigned char* site_a = (const unsigned char*)phase_a + offset;
  const unsigned char* site_b = (const unsigned char*)phase_b + offset;
  if (strcmp(SiteState(site_b), "other") == 0 || (site_b[0] == 0xE8 && CallTarget(site_b) != hook)) {
    fprintf(stderr, "call_sites: phase_b has no enter hook call where phase_a has one\n");
    return 2;
  }
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, worker, NULL);
  const char* shown_a = "";
  const char* shown_b = "";
  double deadline = NowMs() + duration_ms;
  while (NowMs() < deadline && access(stop_file, F_OK) != 0) {
    const char* state_a = SiteState(site_a);
    const char* state_b = SiteState(site_b);
    if (strcmp(state_a, shown_a) != 0) printf("phase_a %s\n", shown_a = state_a);
    if (strcmp(state_b, shown_b) != 0) printf("phase_b %s\n", shown_b = state_b);
    struct timespec pause = {0, 5000000};
    nanosleep(&pause, NULL);
  }
  atomic_store_explicit(&stop_threads, 1, memory_order_relaxed);
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  printf("calls %lu %lu\n", real_calls_a, real_calls_b);
  return 0;
}
