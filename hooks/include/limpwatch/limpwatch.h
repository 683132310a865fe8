/* limpwatch: the public C API of liblimpwatch.so, usable from C and C++.
 *
 * A program built with `pkg-config --cflags --libs limpwatch` is traced
 * without calling anything here; these calls are for programs that want to
 * cooperate with their readers (name their segment in a log line, make sure
 * every function name is published before a reader looks).
 *
 * Every function is safe to call from any thread, never blocks a traced
 * thread for long, and does nothing harmful when recording is disabled.
 */
#ifndef LIMPWATCH_LIMPWATCH_H_
#define LIMPWATCH_LIMPWATCH_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LW_VERSION_MAJOR 0
#define LW_VERSION_MINOR 1

/* 1 when this process records into a segment, 0 when recording is disabled
 * (LIMPWATCH_DISABLE=1, or the segment could not be created). */
int lw_is_recording(void) __attribute__((no_instrument_function));

/* Copies the shared-memory object name of this process's segment (for
 * `limpwatch top NAME`) into buffer, NUL-terminated. Returns the name's
 * length, or -1 when not recording or when the buffer is too small. */
int lw_segment_name(char* buffer, size_t size) __attribute__((no_instrument_function));

/* Resolves and publishes the names of all functions seen so far, now rather
 * than at the service thread's next pass. Returns how many were published. */
int lw_publish_names(void) __attribute__((no_instrument_function));

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* LIMPWATCH_LIMPWATCH_H_ */
