// How an interposed C library function is declared: exported from
// liblimpwatch.so (everything else in it is hidden) and never instrumented.
#ifndef LIMPWATCH_HOOKS_SRC_HOOK_EXPORT_H_
#define LIMPWATCH_HOOKS_SRC_HOOK_EXPORT_H_

#define LW_INTERPOSED extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

#endif  // LIMPWATCH_HOOKS_SRC_HOOK_EXPORT_H_
