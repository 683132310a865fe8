#include "sampled_lib.h"

static volatile unsigned long lib_sink;

void lib_burn(long iterations) {
  for (long i = 0; i < iterations; ++i) lib_sink += (unsigned long)i;
}
