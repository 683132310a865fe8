// An HTTP/1.x request head, parsed from what a connection has received so
// far. Only what `limpwatch serve` needs: the request line and the header
// fields, strictly (RFC 9112), with a size limit; bodies are not accepted.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_REQUEST_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_REQUEST_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace limpwatch::cli::serve {

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: "/metrics?x=1"
  std::string path;    // the target without its query: "/metrics"
  int minor_version = 1;  // HTTP/1.<minor_version>
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case, values trimmed
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "keep-alive"

  // The first value of a header field (name in lower case), or null.
  const std::string* Header(std::string_view name) const;
};

enum class ParseOutcome {
  kIncomplete,  // no complete head yet, and still within the limit
  kComplete,    // *request filled; `consumed` bytes of the buffer were its head
  kTooLarge,    // the head exceeds the limit: 431
  kMalformed,   // 400 (`problem` says why)
  kBadVersion,  // not HTTP/1.0 or 1.1: 505
  kHasBody,     // a request with a body (Content-Length > 0 or Transfer-Encoding): 413
};

struct ParseResult {
  ParseOutcome outcome = ParseOutcome::kIncomplete;
  size_t consumed = 0;
  std::string problem;
};

inline constexpr size_t kMaxHeaderFields = 100;

// Parses the head at the start of `buffer`. Lines end in CRLF (a bare LF is
// accepted, as RFC 9112 allows); empty lines before the request line are
// skipped.
ParseResult ParseRequestHead(std::string_view buffer, size_t max_head_bytes, HttpRequest* request);

// The first value of query parameter `name` in the request's target,
// percent-decoded ('+' is a space); nullopt when absent or badly encoded.
std::optional<std::string> QueryParameter(const HttpRequest& request, std::string_view name);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_REQUEST_H_
