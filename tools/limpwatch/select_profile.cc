#include "select_profile.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {
namespace {

// Just enough JSON to read a dump: skips every value except the fields of
// the objects in the top-level "functions" array.
class DumpParser {
 public:
  explicit DumpParser(const std::string& text) : text_(text) {}

  bool Parse(ProfileWindow* out) {
    SkipSpace();
    if (!Consume('{')) return Error("not a JSON object");
    bool found = false;
    while (!failed_) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      if (!String(&key) || !Expect(':')) return false;
      if (key == "functions") {
        found = true;
        if (!Functions(out)) return false;
      } else if (!SkipValue()) {
        return false;
      }
      SkipSpace();
      if (!Consume(',')) {
        if (!Expect('}')) return false;
        break;
      }
    }
    if (!found && !failed_) return Error("no \"functions\" array: not a 'limpwatch dump --json' file");
    return !failed_;
  }
  const std::string& error() const { return error_; }

 private:
  bool Functions(ProfileWindow* out) {
    SkipSpace();
    if (!Expect('[')) return false;
    SkipSpace();
    if (Consume(']')) return true;
    do {
      SkipSpace();
      if (!Expect('{')) return false;
      WindowedFunction function;
      SkipSpace();
      if (!Consume('}')) {
        do {
          SkipSpace();
          std::string key;
          if (!String(&key) || !Expect(':')) return false;
          SkipSpace();
          if (key == "name") {
            if (!String(&function.name)) return false;
          } else if (key == "calls" || key == "self_ns" || key == "total_ns") {
            double value = 0;
            if (!Number(&value)) return false;
            if (key == "calls") function.calls = static_cast<uint64_t>(value);
            if (key == "self_ns") function.self_ns = value;
            if (key == "total_ns") function.total_ns = value;
          } else if (!SkipValue()) {
            return false;
          }
          SkipSpace();
        } while (Consume(','));
        if (!Expect('}')) return false;
      }
      out->functions.push_back(std::move(function));
      SkipSpace();
    } while (Consume(','));
    return Expect(']');
  }

  bool SkipValue() {
    SkipSpace();
    if (position_ >= text_.size()) return Error("unexpected end");
    char c = text_[position_];
    if (c == '"') {
      std::string ignored;
      return String(&ignored);
    }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++position_;
      SkipSpace();
      if (Consume(close)) return true;
      do {
        SkipSpace();
        if (c == '{') {
          std::string key;
          if (!String(&key) || !Expect(':')) return false;
        }
        if (!SkipValue()) return false;
        SkipSpace();
      } while (Consume(','));
      return Expect(close);
    }
    size_t start = position_;
    while (position_ < text_.size() && std::string_view(",}] \t\r\n").find(text_[position_]) == std::string_view::npos) {
      ++position_;
    }
    return position_ > start || Error("bad value");
  }

  bool String(std::string* out) {
    SkipSpace();
    if (!Expect('"')) return false;
    while (position_ < text_.size() && text_[position_] != '"') {
      char c = text_[position_++];
      if (c == '\\' && position_ < text_.size()) {
        char escaped = text_[position_++];
        if (escaped == 'u') {
          position_ += 4;  // names are ASCII in practice; keep a placeholder
          out->push_back('?');
          continue;
        }
        c = escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
      }
      out->push_back(c);
    }
    return Expect('"');
  }

  bool Number(double* out) {
    const char* start = text_.c_str() + position_;
    char* end = nullptr;
    *out = std::strtod(start, &end);
    if (end == start) return Error("expected a number");
    position_ += static_cast<size_t>(end - start);
    return true;
  }

  void SkipSpace() {
    while (position_ < text_.size() && std::string_view(" \t\r\n").find(text_[position_]) != std::string_view::npos) {
      ++position_;
    }
  }
  bool Consume(char c) {
    if (position_ < text_.size() && text_[position_] == c) {
      ++position_;
      return true;
    }
    return false;
  }
  bool Expect(char c) { return Consume(c) || Error(std::string("expected '") + c + "'"); }
  bool Error(const std::string& message) {
    if (!failed_) error_ = message + " at byte " + std::to_string(position_);
    failed_ = true;
    return false;
  }

  const std::string& text_;
  size_t position_ = 0;
  bool failed_ = false;
  std::string error_;
};

std::map<std::string, WindowedFunction> ByName(const shm::Snapshot& snapshot) {
  std::map<std::string, WindowedFunction> functions;
  for (const auto& record : snapshot.functions) {
    if (record.state != shm::SymbolState::kResolved) continue;
    WindowedFunction& function = functions[record.name];
    function.name = record.name;
    function.calls += record.counters.calls;
    function.self_ns += snapshot.TicksToNs(record.counters.self_ticks);
    function.total_ns += snapshot.TicksToNs(record.counters.total_ticks);
  }
  return functions;
}

}  // namespace

bool LoadDumpJson(const std::string& path, ProfileWindow* out, std::string* error) {
  std::ifstream file(path);
  if (!file) {
    *error = path + ": cannot be read";
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  std::string content = text.str();
  DumpParser parser(content);
  out->source = path;
  if (!parser.Parse(out)) {
    *error = path + ": " + parser.error();
    return false;
  }
  return true;
}

bool ObserveLive(const std::string& name, double seconds, double window_seconds, std::vector<ProfileWindow>* out,
                 std::string* error) {
  std::optional<std::string> object = shm::ResolveSegment(name, error);
  if (!object) return false;
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, error);
  if (!reader) return false;
  shm::Snapshot previous;
  shm::TakeSnapshot(*reader, &previous);
  auto before = ByName(previous);
  auto start = std::chrono::steady_clock::now();
  for (int window = 1;; ++window) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= seconds) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(window_seconds, seconds - elapsed)));
    shm::Snapshot current;
    shm::TakeSnapshot(*reader, &current);
    auto after = ByName(current);
    ProfileWindow profile;
    profile.source = name + " window " + std::to_string(window);
    for (const auto& [function_name, now] : after) {
      WindowedFunction delta = now;
      auto earlier = before.find(function_name);
      if (earlier != before.end()) {
        delta.calls -= std::min(delta.calls, earlier->second.calls);
        delta.self_ns = std::max(0.0, delta.self_ns - earlier->second.self_ns);
        delta.total_ns = std::max(0.0, delta.total_ns - earlier->second.total_ns);
      }
      profile.functions.push_back(delta);
    }
    out->push_back(std::move(profile));
    before = std::move(after);
  }
  return true;
}

}  // namespace limpwatch::cli
