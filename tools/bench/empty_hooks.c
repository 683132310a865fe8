/* The mechanism floor: hooks that do nothing, in a shared object like
 * liblimpwatch.so, so both pay the same call through the PLT. */
__attribute__((no_instrument_function)) void bench_empty_enter(void* function, void* call_site) {
  (void)function;
  (void)call_site;
}
__attribute__((no_instrument_function)) void bench_empty_exit(void* function, void* call_site) {
  (void)function;
  (void)call_site;
}
