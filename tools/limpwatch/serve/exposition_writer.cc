#include "serve/exposition_writer.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "format.h"

namespace limpwatch::cli::serve {
namespace {

// HELP text escapes backslash and newline only.
std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

const char* TypeName(MetricType type) { return type == MetricType::kCounter ? "counter" : "gauge"; }

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string printable = Printable(value);
  std::string out;
  out.reserve(printable.size());
  for (char c : printable) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof text, value);
  if (error != std::errc()) return "NaN";
  return std::string(text, end);
}

MetricFamily::MetricFamily(std::string name, MetricType type, std::string help, std::vector<std::string> label_names)
    : name_(std::move(name)), type_(type), help_(std::move(help)), label_names_(std::move(label_names)) {}

bool MetricFamily::Add(const std::vector<std::string>& label_values, uint64_t value) {
  return AddRendered(label_values, value);
}

bool MetricFamily::Add(const std::vector<std::string>& label_values, double value) {
  return AddRendered(label_values, value);
}

bool MetricFamily::AddRendered(const std::vector<std::string>& label_values, std::variant<uint64_t, double> value) {
  if (label_values.size() != label_names_.size()) {
    throw std::logic_error("metric " + name_ + ": " + std::to_string(label_values.size()) + " label values for " +
                           std::to_string(label_names_.size()) + " labels");
  }
  std::string labels;
  for (size_t index = 0; index < label_names_.size(); ++index) {
    labels += index == 0 ? "{" : ",";
    labels += label_names_[index] + "=\"" + EscapeLabelValue(label_values[index]) + "\"";
  }
  if (!labels.empty()) labels += "}";
  if (!seen_.insert(labels).second) return false;
  samples_.push_back({std::move(labels), value});
  return true;
}

void MetricFamily::RenderTo(std::string* out) const {
  if (samples_.empty()) return;
  *out += "# HELP " + name_ + " " + EscapeHelp(help_) + "\n";
  *out += "# TYPE " + name_ + " " + TypeName(type_) + "\n";
  for (const Sample& sample : samples_) {
    *out += name_;
    *out += sample.labels;
    *out += ' ';
    if (const uint64_t* exact = std::get_if<uint64_t>(&sample.value)) {
      *out += std::to_string(*exact);
    } else {
      *out += FormatSampleValue(std::get<double>(sample.value));
    }
    *out += '\n';
  }
}

MetricFamily& Exposition::Declare(std::string name, MetricType type, std::string help,
                                  std::vector<std::string> label_names) {
  if (!names_.insert(name).second) throw std::logic_error("metric " + name + " declared twice");
  return families_.emplace_back(std::move(name), type, std::move(help), std::move(label_names));
}

std::string Exposition::Render() const {
  std::string out;
  for (const MetricFamily& family : families_) family.RenderTo(&out);
  return out;
}

}  // namespace limpwatch::cli::serve
