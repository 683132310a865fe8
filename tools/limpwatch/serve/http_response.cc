#include "serve/http_response.h"

namespace limpwatch::cli::serve {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
  }
  return "Unknown";
}

HttpResponse TextResponse(int status, const std::string& detail) {
  HttpResponse response;
  response.status = status;
  response.body = std::to_string(status) + " " + ReasonPhrase(status) + (detail.empty() ? "" : ": " + detail) + "\n";
  return response;
}

std::string SerializeResponse(const HttpResponse& response, bool head_only, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + ReasonPhrase(response.status) + "\r\n";
  out += "Content-Type: " + response.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  out += "\r\n";
  if (!head_only) out += response.body;
  return out;
}

}  // namespace limpwatch::cli::serve
