// LW_SCOPE in C++ code built without -finstrument-functions: a scope that
// ends by return and one that ends by an exception.
#include <limpwatch/limpwatch.h>

#include <stdexcept>

namespace {

int Work(int round) {
  LW_SCOPE("cpp.work");
  if (round == 3) throw std::runtime_error("round 3");
  return round * 2;
}

}  // namespace

int main() {
  int total = 0;
  for (int round = 0; round < 5; ++round) {
    try {
      total += Work(round);
    } catch (const std::exception&) {
      total += 1;
    }
  }
  return total == 2 * (0 + 1 + 2 + 4) + 1 ? 0 : 1;
}
