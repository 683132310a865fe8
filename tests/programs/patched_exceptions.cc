// C++ exceptions through functions patched at run time (built with
// -fpatchable-function-entry=5, without -finstrument-functions).
// catcher runs 100 rounds of middle_1 -> middle_2 -> thrower, which throws;
// middle_2's guard calls cleanup_helper while the exception unwinds it,
// middle_1 catches and rethrows, catcher catches and calls after_catch.
// The names are extern "C" so that the tests find them unmangled.
#include <cstdio>
#include <stdexcept>

static volatile unsigned long sink;

extern "C" {

void cleanup_helper() { sink++; }

void after_catch() { sink++; }

void thrower(int round) {
  if (round >= 0) throw std::runtime_error("round");
  sink++;
}

}  // extern "C"

namespace {
struct Guard {
  ~Guard() { cleanup_helper(); }
};
}  // namespace

extern "C" {

void middle_2(int round) {
  Guard guard;
  thrower(round);
  sink++;
}

void middle_1(int round) {
  try {
    middle_2(round);
  } catch (...) {
    sink++;
    throw;
  }
}

int catcher(int rounds) {
  int caught = 0;
  for (int round = 0; round < rounds; ++round) {
    try {
      middle_1(round);
    } catch (const std::runtime_error&) {
      ++caught;
      after_catch();
    }
  }
  return caught;
}

}  // extern "C"

int main() {
  int caught = catcher(100);
  std::printf("caught %d\n", caught);
  return caught == 100 ? 0 : 1;
}
