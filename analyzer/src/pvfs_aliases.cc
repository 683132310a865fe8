// The <Aliases> section of a PVFS / OrangeFS server configuration (fs.conf):
//
//   <Aliases>
//       Alias server1 tcp://node1:3334
//       Alias server2 tcp://node2:3334,ib://node2-ib:3335
//   </Aliases>
//
// Only the first tcp:// address of an alias counts (limpwatch talks UDP over
// IP). The aliases under <MetaHandleRanges> and <DataHandleRanges> give the
// servers' kinds. Everything else belongs to PVFS and is skipped.
#include <string.h>
#include <strings.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <tuple>

#include "host_port.h"
#include "limpwatch/analyzer/peer_config.h"

namespace limpwatch::analyzer {

namespace {

constexpr std::string_view kTcpScheme = "tcp://";

// PVFS's configuration parser matches its keywords without regard to case.
bool IsKeyword(std::string_view word, std::string_view keyword) {
  return word.size() == keyword.size() && strncasecmp(word.data(), keyword.data(), word.size()) == 0;
}

std::vector<std::string_view> SplitWords(std::string_view line) {
  std::vector<std::string_view> words;
  while (true) {
    line = TrimWhitespace(line);
    if (line.empty()) break;
    size_t end = line.find_first_of(" \t");
    words.push_back(line.substr(0, end));
    if (end == std::string_view::npos) break;
    line.remove_prefix(end);
  }
  return words;
}

std::string_view FirstTcpAddress(std::string_view addresses) {
  while (!addresses.empty()) {
    size_t comma = addresses.find(',');
    std::string_view address = TrimWhitespace(addresses.substr(0, comma));
    if (address.substr(0, kTcpScheme.size()) == kTcpScheme) return address.substr(kTcpScheme.size());
    if (comma == std::string_view::npos) break;
    addresses.remove_prefix(comma + 1);
  }
  return {};
}

class AliasParser {
 public:
  AliasParser(const std::string& path, const PvfsPortRule& rule, std::vector<std::string>* errors)
      : path_(path), rule_(rule), errors_(errors) {}

  void Line(std::string_view line, size_t number) {
    line_number_ = number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto words = SplitWords(line);
    if (words.empty()) return;
    if (IsKeyword(words[0], "<Aliases>")) {
      if (inside_) Error("nested <Aliases>");
      inside_ = true;
      seen_section_ = true;
      return;
    }
    if (IsKeyword(words[0], "</Aliases>")) {
      if (!inside_) Error("</Aliases> without <Aliases>");
      inside_ = false;
      return;
    }
    for (auto [opening, closing, section] : {std::tuple{"<MetaHandleRanges>", "</MetaHandleRanges>", Ranges::kMeta},
                                             std::tuple{"<DataHandleRanges>", "</DataHandleRanges>", Ranges::kData}}) {
      if (IsKeyword(words[0], opening)) {
        ranges_ = section;
        return;
      }
      if (IsKeyword(words[0], closing)) {
        ranges_ = Ranges::kNone;
        return;
      }
    }
    if (ranges_ != Ranges::kNone && IsKeyword(words[0], "Range") && words.size() >= 2) {
      (ranges_ == Ranges::kMeta ? meta_ : data_).insert(std::string(words[1]));
      return;
    }
    if (IsKeyword(words[0], "Alias")) {
      if (!inside_) {
        Error("Alias outside <Aliases>");
        return;
      }
      Alias(words);
      return;
    }
    if (inside_) Error("expected 'Alias <name> tcp://<host>:<port>', found '" + std::string(TrimWhitespace(line)) + "'");
  }

  std::vector<PeerEndpoint> Finish() {
    if (inside_) Error("<Aliases> is not closed");
    if (!seen_section_) errors_->push_back(path_ + ": no <Aliases> section");
    for (const auto& [alias, port] : rule_.alias_ports) {
      bool known = false;
      for (const auto& server : servers_) known = known || server.name == alias;
      if (!known) errors_->push_back("LIMPWATCH_PEER_PORTS: '" + alias + "' is not an alias of " + path_);
    }
    // A server that holds metadata only, or data only, does other work than
    // one that holds both: it is compared with its own kind.
    for (auto& server : servers_) {
      bool meta = meta_.contains(server.name), data = data_.contains(server.name);
      if (meta && !data) server.kind = "metadata";
      if (data && !meta) server.kind = "data";
    }
    return std::move(servers_);
  }

 private:
  void Error(const std::string& what) { errors_->push_back(path_ + ":" + std::to_string(line_number_) + ": " + what); }

  void Alias(const std::vector<std::string_view>& words) {
    if (words.size() != 3) {
      Error("expected 'Alias <name> tcp://<host>:<port>'");
      return;
    }
    std::string name(words[1]);
    for (const auto& server : servers_) {
      if (server.name == name) {
        Error("alias '" + name + "' is listed twice; the first (" + server.origin + ") is kept");
        return;
      }
    }
    std::string_view tcp = FirstTcpAddress(words[2]);
    if (tcp.empty()) {
      Error("alias '" + name + "' has no tcp:// address");
      return;
    }
    std::string error;
    auto split = SplitHostPort(tcp, &error);
    if (!split) {
      Error("alias '" + name + "': " + error);
      return;
    }
    std::optional<uint16_t> port;
    for (const auto& [alias, alias_port] : rule_.alias_ports) {
      if (alias == name) port = alias_port;
    }
    if (!port) {
      uint32_t shifted = uint32_t{split->port} + rule_.offset;
      if (shifted == 0 || shifted > 65535) {
        Error("alias '" + name + "': BMI port " + std::to_string(split->port) + " + offset " +
              std::to_string(rule_.offset) + " is not a UDP port");
        return;
      }
      port = static_cast<uint16_t>(shifted);
    }
    auto numeric = PeerAddress::FromNumericHost(split->host, *port);
    servers_.push_back({name, split->host, *port, numeric.value_or(PeerAddress()),
                        path_ + ":" + std::to_string(line_number_), "", numeric.has_value()});
  }

  const std::string& path_;
  const PvfsPortRule& rule_;
  std::vector<std::string>* errors_;
  std::vector<PeerEndpoint> servers_;
  enum class Ranges { kNone, kMeta, kData };
  Ranges ranges_ = Ranges::kNone;
  std::set<std::string> meta_, data_;  // aliases listed in each kind of handle range
  size_t line_number_ = 0;
  bool inside_ = false;
  bool seen_section_ = false;
};

}  // namespace

std::vector<PeerEndpoint> ParsePvfsAliases(const std::string& path, const PvfsPortRule& rule,
                                           std::vector<std::string>* errors) {
  std::ifstream file(path);
  if (!file) {
    errors->push_back(path + ": cannot open the PVFS configuration: " + strerror(errno));
    return {};
  }
  AliasParser parser(path, rule, errors);
  std::string line;
  size_t number = 0;
  while (std::getline(file, line)) parser.Line(line, ++number);
  if (file.bad()) errors->push_back(path + ": read error after line " + std::to_string(number));
  return parser.Finish();
}

}  // namespace limpwatch::analyzer
