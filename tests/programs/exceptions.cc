// A traced C++ program whose exception crosses a C frame compiled without
// exception support: the C frame's exit hook never runs, and the runtime
// must resynchronise its shadow stack when the catching frame exits.
#include <cstdio>
#include <stdexcept>

extern "C" void c_middle(void (*callback)(void));

extern "C" void cpp_thrower() { throw std::runtime_error("limp"); }

int cpp_outer() {
  try {
    c_middle(cpp_thrower);
  } catch (const std::exception&) {
    return 1;
  }
  return 0;
}

void cpp_after() {}

int main() {
  int caught = 0;
  for (int i = 0; i < 4; ++i) caught += cpp_outer();
  cpp_after();
  std::printf("caught %d\n", caught);
  return caught == 4 ? 0 : 1;
}
