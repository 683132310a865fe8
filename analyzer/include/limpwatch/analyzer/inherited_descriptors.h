// The descriptors the analyzer holds (its peer socket, its io_uring rings, its
// recording), so that a forked child can close the copies it inherited.
//
// A PVFS server starts its analyzer, then daemonizes: the child gets copies
// of the parent's descriptors but not the parent's analyzer thread. An
// inherited peer socket would keep the peer port bound in the child, so the
// child's own analyzer could not bind it, and peers' summaries would pile up
// in a socket nobody reads. The child closes them before it starts its own.
#ifndef LIMPWATCH_ANALYZER_INHERITED_DESCRIPTORS_H_
#define LIMPWATCH_ANALYZER_INHERITED_DESCRIPTORS_H_

namespace limpwatch::analyzer {

// Lock-free; a full registry (64 descriptors) drops the registration.
void RegisterAnalyzerDescriptor(int fd);
void UnregisterAnalyzerDescriptor(int fd);

// Closes every registered descriptor and empties the registry. For a fork
// child, where the threads that owned them do not exist: async-signal-safe.
// Returns how many were closed.
int CloseInheritedAnalyzerDescriptors();

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_INHERITED_DESCRIPTORS_H_
