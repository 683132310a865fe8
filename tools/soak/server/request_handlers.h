// The soak server's traced functions: one connection's requests, each
// request type's handler, the short threads' work, the forked children's
// work and the signal handler. Plain C names, so the segment names them as
// soak_protocol.h does; each counts its own calls in the server's tally.
#ifndef LIMPWATCH_TOOLS_SOAK_SERVER_REQUEST_HANDLERS_H_
#define LIMPWATCH_TOOLS_SOAK_SERVER_REQUEST_HANDLERS_H_

#include <cstdint>

namespace limpwatch::soak {

// The storage file every store, load and sync goes to; set once at start.
struct Storage {
  int fd = -1;
  uint64_t size = 0;
};
void SetStorage(Storage storage);

// The write end of the self-pipe the signal handler writes the signal's
// number to; set once at start, before the handler is installed.
void SetSignalPipe(int write_fd);

}  // namespace limpwatch::soak

extern "C" {
// Serves requests on `fd` until the peer closes it; `kind` is a
// limpwatch::soak::CountedKind (TCP or Unix). Closes `fd`.
void soak_serve_connection(int fd, uint32_t kind);
void soak_on_signal(int signal_number);
void soak_signal_seen(int signal_number);
}

#endif  // LIMPWATCH_TOOLS_SOAK_SERVER_REQUEST_HANDLERS_H_
