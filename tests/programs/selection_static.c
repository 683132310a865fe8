/* Static functions, selected by source file (file:selection_static.c). */
static volatile unsigned long static_sink;

static void static_helper_one(void) { static_sink++; }

static void static_helper_two(void) { static_sink += 2; }

void run_static_helpers(void) {
  for (int i = 0; i < 4; ++i) static_helper_one();
  for (int i = 0; i < 7; ++i) static_helper_two();
}
