// The analyzer's SummaryExchange over the UDP peer transport, and the wire
// round trip that makes offline summaries look like received ones.
#ifndef LIMPWATCH_ANALYZER_TRANSPORT_EXCHANGE_H_
#define LIMPWATCH_ANALYZER_TRANSPORT_EXCHANGE_H_

#include <functional>
#include <memory>
#include <string>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/peer_transport.h"

namespace limpwatch::analyzer {

// A summary as a peer decodes it: through the wire's value precision. A
// summary the wire cannot carry is returned as it is.
PeerSummary WireRoundTrip(const PeerSummary& summary);

// Wraps a transport; rejected datagrams are logged (at most once per
// rejection class and minute) through `log`.
std::unique_ptr<SummaryExchange> MakeTransportExchange(std::unique_ptr<PeerTransport> transport,
                                                       std::function<void(const std::string&)> log);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_TRANSPORT_EXCHANGE_H_
