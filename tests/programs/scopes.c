/* Explicit call-site hooks in a C program built WITHOUT -finstrument-functions.
 *   nested      scope.outer once, around 10 x scope.inner (2 ms each) and 5 ms of its own
 *   mismatched  begin A, begin B, end A (B left open), end B, end of a site never
 *               begun, then a well-formed scope.after
 */
#define _GNU_SOURCE
#include <limpwatch/limpwatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

static lw_site outer = LW_SITE_INIT("scope.outer");
static lw_site inner = LW_SITE_INIT("scope.inner");

static void nested(void) {
  lw_begin(&outer);
  for (int i = 0; i < 10; ++i) {
    lw_begin(&inner);
    sleep_ms(2);
    lw_end(&inner);
  }
  sleep_ms(5);
  lw_end(&outer);
}

static void mismatched(void) {
  static lw_site a = LW_SITE_INIT("scope.a");
  static lw_site b = LW_SITE_INIT("scope.b");
  static lw_site never = LW_SITE_INIT("scope.never");
  static lw_site after = LW_SITE_INIT("scope.after");
  lw_begin(&a);
  lw_begin(&b);
  lw_end(&a);
  lw_end(&b);
  lw_end(&never);
  lw_begin(&after);
  sleep_ms(3);
  lw_end(&after);
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "nested";
  if (strcmp(scenario, "nested") == 0) {
    nested();
  } else if (strcmp(scenario, "mismatched") == 0) {
    mismatched();
  } else {
    return 2;
  }
  return 0;
}
