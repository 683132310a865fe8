#include "common/server_config.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace limpwatch::testbed {
namespace {

std::vector<std::string> SplitWords(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  std::string word;
  while (stream >> word) words.push_back(word);
  return words;
}

bool ParseUint(const std::string& text, uint64_t max, uint64_t* value) {
  uint64_t parsed = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc() || end != text.data() + text.size() || parsed > max) return false;
  *value = parsed;
  return true;
}

// "tcp://127.0.0.1:4000" -> host, port.
bool ParseAddress(const std::string& text, std::string* host, uint16_t* port) {
  const std::string scheme = "tcp://";
  if (text.rfind(scheme, 0) != 0) return false;
  std::string rest = text.substr(scheme.size());
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  uint64_t value = 0;
  if (!ParseUint(rest.substr(colon + 1), 65535, &value) || value == 0) return false;
  *host = rest.substr(0, colon);
  *port = static_cast<uint16_t>(value);
  return true;
}

bool ParseYesNo(const std::string& text, bool* value) {
  if (text == "yes") {
    *value = true;
    return true;
  }
  if (text == "no") {
    *value = false;
    return true;
  }
  return false;
}

}  // namespace

int TestbedConfig::FindServer(const std::string& name) const {
  for (size_t i = 0; i < servers.size(); ++i) {
    if (servers[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string FormatConfigFile(const TestbedConfig& config) {
  std::ostringstream out;
  out << "# limpwatch test-bed file system (PVFS fs.conf style), written by limpwatch-testbed\n";
  out << "<Defaults>\n"
      << "    FlowBufferSizeBytes " << config.flow_buffer_size << "\n"
      << "    FlowBuffersPerFlow " << config.flow_buffers_per_flow << "\n"
      << "    WorkerThreads " << config.worker_threads << "\n"
      << "    StorageThreads " << config.storage_threads << "\n"
      << "</Defaults>\n\n";
  out << "<Aliases>\n";
  for (const auto& server : config.servers) {
    out << "    Alias " << server.name << " tcp://" << server.host << ":" << server.port << "\n";
  }
  out << "</Aliases>\n\n";
  for (const auto& server : config.servers) {
    out << "<ServerOptions>\n"
        << "    Server " << server.name << "\n"
        << "    StorageSpace " << server.storage_space << "\n"
        << "</ServerOptions>\n\n";
  }
  out << "<Filesystem>\n"
      << "    Name " << config.file_system_name << "\n"
      << "    <StorageHints>\n"
      << "        TroveMethod " << (config.direct_io ? "directio" : "buffered") << "\n"
      << "        TroveSyncMeta " << (config.sync_metadata ? "yes" : "no") << "\n"
      << "    </StorageHints>\n"
      << "    <Distribution>\n"
      << "        Name simple_stripe\n"
      << "        Param strip_size\n"
      << "        Value " << config.stripe_size << "\n"
      << "    </Distribution>\n"
      << "</Filesystem>\n";
  return out.str();
}

bool ParseConfigFile(const std::string& text, TestbedConfig* config, std::string* error) {
  TestbedConfig parsed;
  parsed.servers.clear();
  std::vector<std::string> sections;
  std::string current_server;  // inside <ServerOptions>
  std::istringstream stream(text);
  std::string line;
  int line_number = 0;
  auto fail = [&](const std::string& reason) {
    *error = "line " + std::to_string(line_number) + ": " + reason;
    return false;
  };
  while (std::getline(stream, line)) {
    ++line_number;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::vector<std::string> words = SplitWords(line);
    if (words.empty()) continue;
    const std::string& key = words[0];
    if (key.size() > 2 && key.front() == '<' && key.back() == '>') {
      if (key[1] == '/') {
        std::string name = key.substr(2, key.size() - 3);
        if (sections.empty() || sections.back() != name) return fail("unbalanced </" + name + ">");
        sections.pop_back();
        if (name == "ServerOptions") current_server.clear();
      } else {
        sections.push_back(key.substr(1, key.size() - 2));
      }
      continue;
    }
    if (words.size() < 2) return fail("'" + key + "' needs a value");
    const std::string& value = words[1];
    std::string section = sections.empty() ? "" : sections.back();
    uint64_t number = 0;
    if (section == "Defaults") {
      if (!ParseUint(value, 0xFFFFFFFFu, &number)) return fail("bad number '" + value + "'");
      if (key == "FlowBufferSizeBytes")
        parsed.flow_buffer_size = static_cast<uint32_t>(number);
      else if (key == "FlowBuffersPerFlow")
        parsed.flow_buffers_per_flow = static_cast<uint32_t>(number);
      else if (key == "WorkerThreads")
        parsed.worker_threads = static_cast<uint32_t>(number);
      else if (key == "StorageThreads")
        parsed.storage_threads = static_cast<uint32_t>(number);
      else
        return fail("unknown key '" + key + "' in <Defaults>");
    } else if (section == "Aliases") {
      if (key != "Alias" || words.size() != 3) return fail("expected 'Alias NAME tcp://HOST:PORT'");
      ServerAlias alias;
      alias.name = value;
      if (!ParseAddress(words[2], &alias.host, &alias.port)) return fail("bad address '" + words[2] + "'");
      if (parsed.FindServer(alias.name) >= 0) return fail("duplicate alias '" + alias.name + "'");
      parsed.servers.push_back(alias);
    } else if (section == "ServerOptions") {
      if (key == "Server") {
        if (parsed.FindServer(value) < 0) return fail("server '" + value + "' has no alias");
        current_server = value;
      } else if (key == "StorageSpace") {
        if (current_server.empty()) return fail("StorageSpace before Server");
        // The rest of the line: a path may hold spaces.
        size_t start = line.find(value);
        std::string path = line.substr(start);
        while (!path.empty() && (path.back() == ' ' || path.back() == '\t' || path.back() == '\r')) path.pop_back();
        parsed.servers[parsed.FindServer(current_server)].storage_space = path;
      } else {
        return fail("unknown key '" + key + "' in <ServerOptions>");
      }
    } else if (section == "Filesystem") {
      if (key == "Name")
        parsed.file_system_name = value;
      else
        return fail("unknown key '" + key + "' in <Filesystem>");
    } else if (section == "StorageHints") {
      if (key == "TroveMethod") {
        if (value != "directio" && value != "buffered") return fail("TroveMethod is directio or buffered");
        parsed.direct_io = value == "directio";
      } else if (key == "TroveSyncMeta") {
        if (!ParseYesNo(value, &parsed.sync_metadata)) return fail("TroveSyncMeta is yes or no");
      } else {
        return fail("unknown key '" + key + "' in <StorageHints>");
      }
    } else if (section == "Distribution") {
      if (key == "Name") {
        if (value != "simple_stripe") return fail("only the simple_stripe distribution exists");
      } else if (key == "Param") {
        if (value != "strip_size") return fail("simple_stripe has one parameter, strip_size");
      } else if (key == "Value") {
        if (!ParseUint(value, 0xFFFFFFFFu, &number)) return fail("bad number '" + value + "'");
        parsed.stripe_size = static_cast<uint32_t>(number);
      } else {
        return fail("unknown key '" + key + "' in <Distribution>");
      }
    } else {
      return fail("'" + key + "' outside a known section");
    }
  }
  if (!sections.empty()) {
    *error = "<" + sections.back() + "> is not closed";
    return false;
  }
  if (!ValidateConfig(parsed, error)) return false;
  *config = parsed;
  return true;
}

bool LoadConfigFile(const std::string& path, TestbedConfig* config, std::string* error) {
  std::ifstream file(path);
  if (!file) {
    *error = "cannot read " + path;
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  if (!ParseConfigFile(text.str(), config, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

std::string PeersList(const TestbedConfig& config) {
  std::string peers;
  for (const auto& server : config.servers) {
    if (!peers.empty()) peers += ",";
    peers += server.host + ":" + std::to_string(server.port);
  }
  return peers;
}

bool ValidateConfig(const TestbedConfig& config, std::string* error) {
  auto aligned_in = [](uint32_t value, uint32_t low, uint32_t high) {
    return value >= low && value <= high && value % 4096 == 0;
  };
  if (config.servers.empty()) {
    *error = "no servers (<Aliases> is empty)";
    return false;
  }
  if (config.servers.size() > 64) {
    *error = "at most 64 servers";
    return false;
  }
  for (const auto& server : config.servers) {
    if (server.storage_space.empty()) {
      *error = "server " + server.name + " has no StorageSpace";
      return false;
    }
  }
  if (!aligned_in(config.flow_buffer_size, kMinFlowBufferSize, kMaxFlowBufferSize)) {
    *error = "FlowBufferSizeBytes must be a multiple of 4096 in 64 KiB - 4 MiB";
    return false;
  }
  if (!aligned_in(config.stripe_size, kMinStripeSize, kMaxStripeSize)) {
    *error = "strip_size must be a multiple of 4096 in 64 KiB - 4 MiB";
    return false;
  }
  if (config.flow_buffers_per_flow < 1 || config.flow_buffers_per_flow > 16) {
    *error = "FlowBuffersPerFlow must be 1-16";
    return false;
  }
  if (config.worker_threads < 1 || config.worker_threads > 64 || config.storage_threads < 1 ||
      config.storage_threads > 64) {
    *error = "WorkerThreads and StorageThreads must be 1-64";
    return false;
  }
  return true;
}

}  // namespace limpwatch::testbed
