/* The measured loop, compiled once per variant (VARIANT=plain, empty,
 * reference, limpwatch). The instrumented variants' hook calls are renamed
 * per variant afterwards (objcopy), so all of them live in one benchmark
 * process and are measured in the same run. */
#define JOIN2(a, b) a##_##b
#define JOIN(a, b) JOIN2(a, b)
#define LEAF JOIN(bench_leaf, VARIANT)
#define LOOP JOIN(bench_loop, VARIANT)

volatile unsigned long JOIN(bench_sink, VARIANT);

__attribute__((noinline)) void LEAF(void) { JOIN(bench_sink, VARIANT)++; }

__attribute__((noinline)) void LOOP(long calls) {
  for (long i = 0; i < calls; ++i) LEAF();
}
