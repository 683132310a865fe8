// An HTTP/1.1 response, and its bytes on the wire.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_RESPONSE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_RESPONSE_H_

#include <string>
#include <utility>
#include <vector>

namespace limpwatch::cli::serve {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type, -Length, Connection
};

// "OK", "Not Found", ...; "Unknown" for a status this server never sends.
const char* ReasonPhrase(int status);

// A plain-text response: the status line's words, then `detail` if any.
HttpResponse TextResponse(int status, const std::string& detail = "");

// Status line, headers and, unless `head_only` (a HEAD request), the body.
// The Content-Length is the body's either way.
std::string SerializeResponse(const HttpResponse& response, bool head_only, bool keep_alive);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_RESPONSE_H_
