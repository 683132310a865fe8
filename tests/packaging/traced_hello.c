/* Built the way a PVFS server would be: with the flags pkg-config gives. */
#include <stdio.h>

int square(int x) { return x * x; }

int main(void) {
  int total = 0;
  for (int i = 0; i < 10; ++i) total += square(i);
  printf("%d\n", total);
  return total == 285 ? 0 : 1;
}
