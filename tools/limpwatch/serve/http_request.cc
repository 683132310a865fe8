#include "serve/http_request.h"

#include <algorithm>
#include <cctype>

namespace limpwatch::cli::serve {
namespace {

// RFC 9110 tchar.
bool IsTokenChar(unsigned char c) {
  return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return IsTokenChar(c); });
}

// A request target in origin form: '/', then visible ASCII.
bool IsOriginForm(std::string_view target) {
  if (target.empty() || target[0] != '/') return false;
  return std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

bool IsFieldValueChar(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether a comma-separated field value lists `token` (case-insensitively).
bool ListsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (Lower(Trim(value.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

ParseResult Failed(ParseOutcome outcome, std::string problem) {
  ParseResult result;
  result.outcome = outcome;
  result.problem = std::move(problem);
  return result;
}

}  // namespace

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [field, value] : headers) {
    if (field == name) return &value;
  }
  return nullptr;
}

ParseResult ParseRequestHead(std::string_view buffer, size_t max_head_bytes, HttpRequest* request) {
  // Split into lines up to the empty line that ends the head.
  std::vector<std::string_view> lines;
  size_t position = 0;
  bool ended = false;
  while (position < buffer.size()) {
    size_t newline = buffer.find('\n', position);
    if (newline == std::string_view::npos) break;
    if (newline + 1 > max_head_bytes) return Failed(ParseOutcome::kTooLarge, "request head over the limit");
    std::string_view line = buffer.substr(position, newline - position);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    position = newline + 1;
    if (line.empty()) {
      if (lines.empty()) continue;  // RFC 9112 2.2: ignore empty lines before the request line
      ended = true;
      break;
    }
    lines.push_back(line);
  }
  if (!ended) {
    if (buffer.size() >= max_head_bytes) return Failed(ParseOutcome::kTooLarge, "request head over the limit");
    return {};
  }

  HttpRequest parsed;
  std::string_view request_line = lines.front();
  size_t first_space = request_line.find(' ');
  size_t second_space = first_space == std::string_view::npos ? first_space : request_line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos || request_line.find(' ', second_space + 1) != std::string_view::npos) {
    return Failed(ParseOutcome::kMalformed, "the request line is not 'METHOD TARGET HTTP/1.x'");
  }
  std::string_view method = request_line.substr(0, first_space);
  std::string_view target = request_line.substr(first_space + 1, second_space - first_space - 1);
  std::string_view version = request_line.substr(second_space + 1);
  if (!IsToken(method)) return Failed(ParseOutcome::kMalformed, "bad method");
  if (!version.starts_with("HTTP/") || version.size() != 8 || version[6] != '.' || !std::isdigit(version[5]) ||
      !std::isdigit(version[7])) {
    return Failed(ParseOutcome::kMalformed, "bad protocol version");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Failed(ParseOutcome::kBadVersion, "only HTTP/1.0 and HTTP/1.1 are served");
  }
  if (!IsOriginForm(target)) return Failed(ParseOutcome::kMalformed, "the target is not a path");
  parsed.method = method;
  parsed.target = target;
  parsed.path = target.substr(0, target.find('?'));
  parsed.minor_version = version[7] - '0';

  if (lines.size() - 1 > kMaxHeaderFields) return Failed(ParseOutcome::kTooLarge, "too many header fields");
  for (size_t index = 1; index < lines.size(); ++index) {
    std::string_view line = lines[index];
    if (line.front() == ' ' || line.front() == '\t') return Failed(ParseOutcome::kMalformed, "folded header line");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Failed(ParseOutcome::kMalformed, "bad header field");
    }
    std::string_view value = Trim(line.substr(colon + 1));
    auto printable = [](char c) { return IsFieldValueChar(static_cast<unsigned char>(c)); };
    if (!std::all_of(value.begin(), value.end(), printable)) {
      return Failed(ParseOutcome::kMalformed, "control character in a header value");
    }
    parsed.headers.emplace_back(Lower(line.substr(0, colon)), std::string(value));
  }

  if (parsed.Header("transfer-encoding") != nullptr) {
    return Failed(ParseOutcome::kHasBody, "request bodies are not accepted");
  }
  if (const std::string* length = parsed.Header("content-length")) {
    if (length->empty() || !std::all_of(length->begin(), length->end(), [](char c) { return std::isdigit(c); })) {
      return Failed(ParseOutcome::kMalformed, "bad Content-Length");
    }
    if (std::any_of(length->begin(), length->end(), [](char c) { return c != '0'; })) {
      return Failed(ParseOutcome::kHasBody, "request bodies are not accepted");
    }
  }
  if (parsed.minor_version == 1 && parsed.Header("host") == nullptr) {
    return Failed(ParseOutcome::kMalformed, "HTTP/1.1 request without Host");
  }
  const std::string* connection = parsed.Header("connection");
  parsed.keep_alive = parsed.minor_version == 1 ? !(connection && ListsToken(*connection, "close"))
                                                : (connection && ListsToken(*connection, "keep-alive"));
  *request = std::move(parsed);
  ParseResult result;
  result.outcome = ParseOutcome::kComplete;
  result.consumed = position;
  return result;
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> PercentDecoded(std::string_view text) {
  std::string decoded;
  for (size_t at = 0; at < text.size(); ++at) {
    if (text[at] == '+') {
      decoded += ' ';
    } else if (text[at] == '%') {
      if (at + 2 >= text.size()) return std::nullopt;
      int high = HexDigit(text[at + 1]), low = HexDigit(text[at + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      decoded += char(high * 16 + low);
      at += 2;
    } else {
      decoded += text[at];
    }
  }
  return decoded;
}

}  // namespace

std::optional<std::string> QueryParameter(const HttpRequest& request, std::string_view name) {
  size_t question = request.target.find('?');
  if (question == std::string::npos) return std::nullopt;
  std::string_view query = std::string_view(request.target).substr(question + 1);
  while (!query.empty()) {
    size_t end = query.find('&');
    std::string_view pair = query.substr(0, end);
    size_t equals = pair.find('=');
    if (pair.substr(0, equals) == name) {
      return PercentDecoded(equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1));
    }
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return std::nullopt;
}

}  // namespace limpwatch::cli::serve
