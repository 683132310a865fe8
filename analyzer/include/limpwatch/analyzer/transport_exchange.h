// The analyzer's SummaryExchange over the UDP peer transport, and the wire
// round trip that makes offline summaries look like received ones.
#ifndef LIMPWATCH_ANALYZER_TRANSPORT_EXCHANGE_H_
#define LIMPWATCH_ANALYZER_TRANSPORT_EXCHANGE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/peer_membership.h"
#include "limpwatch/analyzer/peer_transport.h"

namespace limpwatch::analyzer {

// A summary as a peer decodes it: through the wire's value precision. A
// summary the wire cannot carry is returned as it is.
PeerSummary WireRoundTrip(const PeerSummary& summary);

// How long a server may hear no peer at all before its log says so (once,
// until one is heard again): long enough for a cluster to start, short
// enough that an operator reading the log soon after start sees it.
inline constexpr std::chrono::seconds kNoPeerHeardLogged{60};

// Wraps a transport; rejected datagrams are logged (a changed rejection
// line only) through `log`, and so is a stretch of `no_peer_heard` in which
// no peer's summary was accepted.
std::unique_ptr<SummaryExchange> MakeTransportExchange(std::unique_ptr<PeerTransport> transport,
                                                       std::function<void(const std::string&)> log,
                                                       std::chrono::nanoseconds no_peer_heard = kNoPeerHeardLogged);

// The same, following `membership` (peer_membership.h): checked once a
// tick, a changed file becomes the transport's peers; the change is logged.
std::unique_ptr<SummaryExchange> MakeTransportExchange(std::unique_ptr<PeerTransport> transport,
                                                       std::unique_ptr<PeerMembership> membership,
                                                       std::function<void(const std::string&)> log,
                                                       std::chrono::nanoseconds no_peer_heard = kNoPeerHeardLogged);

// The exchange a server runs with: the peer configuration from the
// environment, followed as it changes (peer_membership.h), over a transport
// made from it. Null when there is nothing to exchange with; *problems gets
// one line per configuration error.
std::unique_ptr<SummaryExchange> MakeExchangeFromEnvironment(std::function<void(const std::string&)> log,
                                                             std::vector<std::string>* problems);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_TRANSPORT_EXCHANGE_H_
