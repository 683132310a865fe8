/* The reference a tracer is judged against: the minimal counting tracer of
 * the field notes. An initial-exec TLS shadow stack, one rdtsc on entry and
 * one on exit, and a per-thread open-addressing table of call count and
 * time per function. Nothing else: no shared memory, no names, no
 * self-time accounting. */
#include <stdint.h>
#include <x86intrin.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))
#define STACK_DEPTH 256
#define TABLE_SIZE 4096

struct frame {
  void* function;
  uint64_t entry;
};
struct entry {
  void* function;
  uint64_t calls;
  uint64_t ticks;
};

static __thread struct frame stack[STACK_DEPTH] __attribute__((tls_model("initial-exec")));
static __thread unsigned depth __attribute__((tls_model("initial-exec")));
static __thread struct entry table[TABLE_SIZE] __attribute__((tls_model("initial-exec")));

NO_INSTRUMENT static struct entry* find(void* function) {
  unsigned position = (unsigned)(((uintptr_t)function * 0x9e3779b97f4a7c15ull) >> 32) & (TABLE_SIZE - 1);
  while (table[position].function != function && table[position].function != 0) {
    position = (position + 1) & (TABLE_SIZE - 1);
  }
  table[position].function = function;
  return &table[position];
}

NO_INSTRUMENT void bench_reference_enter(void* function, void* call_site) {
  (void)call_site;
  if (depth < STACK_DEPTH) {
    stack[depth].function = function;
    stack[depth].entry = __rdtsc();
  }
  depth++;
}

NO_INSTRUMENT void bench_reference_exit(void* function, void* call_site) {
  (void)call_site;
  uint64_t now = __rdtsc();
  if (depth == 0) return;
  depth--;
  if (depth >= STACK_DEPTH) return;
  struct entry* counters = find(function);
  counters->calls++;
  counters->ticks += now - stack[depth].entry;
}

NO_INSTRUMENT uint64_t bench_reference_calls(void* function) { return find(function)->calls; }
