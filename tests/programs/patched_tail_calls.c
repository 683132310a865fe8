/* Patched functions built at -O2, as servers are: tail calls between patched
 * functions (the caller's frame is gone when the callee starts) and deep
 * recursion through a patched function, with arguments on the stack.
 * Prints "total <n>" and exits 1 when a result is wrong.
 *
 *   tail_caller(x)       -> jmp tail_target(x + 1)
 *   tail_chain(x)        -> jmp tail_caller(x * 2)  (two tail calls in a row)
 *   descend(depth, ...)  recursion 200 deep, eight arguments (two on the stack)
 */
#include <stdio.h>

static volatile long sink;

__attribute__((noinline, noipa)) long tail_target(long x) {
  sink += x;
  return x * 3;
}

__attribute__((noinline, noipa)) long tail_caller(long x) { return tail_target(x + 1); }

__attribute__((noinline, noipa)) long tail_chain(long x) { return tail_caller(x * 2); }

__attribute__((noinline, noipa)) long descend(long depth, long a, long b, long c, long d, long e, long g, long h) {
  if (depth == 0) return a + b + c + d + e + g + h;
  long below = descend(depth - 1, a + 1, b, c, d, e, g, h + 1);
  sink += below;
  return below + 1;
}

int main(void) {
  long total = 0;
  int failures = 0;
  for (long i = 0; i < 1000; ++i) {
    if (tail_caller(i) != (i + 1) * 3) failures++;
    if (tail_chain(i) != (2 * i + 1) * 3) failures++;
  }
  for (int round = 0; round < 10; ++round) {
    /* a..h start at 1..7 (and h = 7): at depth 0, a = 201 and h = 207 */
    long result = descend(200, 1, 2, 3, 4, 5, 6, 7);
    if (result != 201 + 2 + 3 + 4 + 5 + 6 + 207 + 200) failures++;
    total += result;
  }
  printf("total %ld\n", total);
  return failures == 0 ? 0 : 1;
}
