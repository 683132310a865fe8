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

/* Describes what limpwatch takes fd to be, the kind its I/O is counted
 * under, into buffer, NUL-terminated: "file dev 254:0", "pipe",
 * "tcp accepted local 127.0.0.1:3334 peer 127.0.0.1:40112",
 * "tcp connected local ... peer ...", "unix local unix:/run/s peer -",
 * "udp ...", "other". Returns the text's length, or -1 when fd is not open
 * or the buffer is too small. */
int lw_fd_describe(int fd, char* buffer, size_t size) __attribute__((no_instrument_function));

/* ---- Explicit call-site hooks ----
 *
 * Code compiled without -finstrument-functions can time a region under a
 * name of its choice; it shows in `limpwatch top` like a function, with that
 * name and its 64-bit hash, and counts into the same call / self / total
 * counters (a traced function called inside it is its child). LIMPWATCH_SELECT
 * selects it by name like any function.
 *
 * Each call site has a static handle that limpwatch registers on its first
 * use, so later calls cost what a traced call costs and never look a name up:
 *
 *   static lw_site site = LW_SITE_INIT("dbpf_sync");      (C)
 *   lw_begin(&site);  ...  lw_end(&site);
 *
 *   LW_SCOPE("dbpf_sync");                                 (C++: ends with the scope)
 *
 * lw_end must name the site of the innermost open lw_begin of the thread. An
 * lw_end of a site not open is ignored and counted as an unmatched exit; an
 * lw_end of an outer site closes the inner ones left open (counted as
 * resynced). Neither corrupts the shadow stack. The name must be a string
 * that outlives the process (a literal); at most 103 bytes are kept. */
typedef struct lw_site {
  const char* name;
  int registered; /* set by limpwatch; 0 in LW_SITE_INIT */
  int reserved;
} lw_site;

#define LW_SITE_INIT(literal_name) {(literal_name), 0, 0}

void lw_begin(lw_site* site) __attribute__((no_instrument_function));
void lw_end(lw_site* site) __attribute__((no_instrument_function));

#ifdef __cplusplus
}  /* extern "C" */

namespace limpwatch {

/* Times the enclosing C++ scope under the site's name (see LW_SCOPE). */
class Scope {
 public:
  __attribute__((no_instrument_function)) explicit Scope(lw_site* site) : site_(site) { lw_begin(site_); }
  __attribute__((no_instrument_function)) ~Scope() { lw_end(site_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  lw_site* site_;
};

}  /* namespace limpwatch */

#define LW_SCOPE_JOIN2(a, b) a##b
#define LW_SCOPE_JOIN(a, b) LW_SCOPE_JOIN2(a, b)
#define LW_SCOPE(literal_name)                                                     \
  static lw_site LW_SCOPE_JOIN(lw_scope_site_, __LINE__) = LW_SITE_INIT(literal_name); \
  ::limpwatch::Scope LW_SCOPE_JOIN(lw_scope_, __LINE__)(&LW_SCOPE_JOIN(lw_scope_site_, __LINE__))
#endif

#endif  /* LIMPWATCH_LIMPWATCH_H_ */
