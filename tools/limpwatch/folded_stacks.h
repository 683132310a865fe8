// Recordings' CPU samples as folded stacks, the input of flame graph tools
// (flamegraph.pl, speedscope, Perfetto): one line "frame;frame count" per
// stack. Recordings keep each function's samples per tick, not whole call
// chains, so each stack is two frames: the server and the sampled function.
// Request flows do keep whole call trees: their stacks are whole.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_FOLDED_STACKS_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_FOLDED_STACKS_H_

#include <string>

#include "recording_scan.h"

namespace limpwatch::cli {

// One line per server and function with samples, by server then function
// name; the counts add up to the recordings' samples. A ';' in a name (it
// would split the frame) becomes ':', a line break a space.
std::string RenderFoldedStacks(const RecordingScan& scan);

// The recorded request flows as folded stacks: per server, each call stack
// of the flows (server;root;...;function) with its self time summed over the
// flows, in whole microseconds (stacks under 1 us left out), so that a flame
// graph's widths are where sampled requests spent their time.
std::string RenderFoldedFlowStacks(const RecordingScan& scan);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_FOLDED_STACKS_H_
