// `limpwatch list`: every segment object, valid or not, one line each.
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "format.h"
#include "json_writer.h"
#include "limpwatch/analyzer/peer_table.h"
#include "limpwatch/shm/segment.h"
#include "output.h"
#include "peer_view.h"
#include "segment_state.h"
#include "table.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kListOptions[] = {
    {"--json", "", false},
    {"--help", "-h", false},
};

struct ListedSegment {
  shm::SegmentListing listing;
  std::string state;
  uint64_t size = 0;
  shm::PeerStatusValues peers;
};

shm::PeerStatusValues PeersOf(const std::string& object_name) {
  std::string error;
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(object_name, &error);
  return reader ? shm::ReadPeerStatus(reader->view()) : shm::PeerStatusValues{};
}

std::vector<ListedSegment> Collect() {
  std::vector<ListedSegment> segments;
  for (auto& listing : shm::ListSegments()) {
    ListedSegment segment;
    if (listing.error.empty()) {
      segment.size = listing.size;
      segment.state = StateText(listing, ObjectPeek{});
      if (listing.liveness == shm::Liveness::kLive) segment.peers = PeersOf(listing.object_name);
    } else {
      ObjectPeek peek = PeekObject(listing.object_name);
      segment.size = peek.size;
      segment.state = StateText(listing, peek);
    }
    segment.listing = std::move(listing);
    segments.push_back(std::move(segment));
  }
  return segments;
}

std::string RenderText(const std::vector<ListedSegment>& segments) {
  if (segments.empty()) return "no limpwatch segments\n";
  Table table({{"OBJECT"},
               {"NAME"},
               {"PID", Align::kRight},
               {"PROGRAM"},
               {"STATE"},
               {"SIZE", Align::kRight},
               {"PEERS", Align::kRight},
               {"CREATED"}});
  uint64_t now_ms = analyzer::RealtimeNowMs();
  for (const auto& segment : segments) {
    const shm::SegmentListing& listing = segment.listing;
    table.AddRow({listing.object_name, listing.parts.name.empty() ? "-" : listing.parts.name,
                  std::to_string(listing.parts.pid), listing.program.empty() ? "-" : listing.program, segment.state,
                  segment.size == 0 ? "-" : FormatBytes(segment.size),
                  PeersHeardCell(segment.peers, now_ms, kRecentlyHeardMs), FormatLocalTime(listing.created_realtime_ns)});
  }
  return table.Render();
}

std::string RenderJson(const std::vector<ListedSegment>& segments) {
  JsonWriter json;
  json.BeginObject();
  json.Key("segments");
  json.BeginArray();
  for (const auto& segment : segments) {
    const shm::SegmentListing& listing = segment.listing;
    bool valid = listing.error.empty();
    json.BeginObject();
    json.Field("object", listing.object_name);
    json.Field("name", listing.parts.name);
    json.Field("pid", static_cast<uint64_t>(listing.parts.pid));
    json.Field("program", listing.program);
    json.Field("state", segment.state);
    json.Field("valid", valid);
    json.FieldOrNull("error", valid ? "" : ListingReason(listing));
    json.Field("size", segment.size);
    json.Field("created_ns", listing.created_realtime_ns);
    json.FieldOrNull("created", FormatIsoTime(listing.created_realtime_ns));
    WritePeerStatusJson(&json, segment.peers);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.str();
}

}  // namespace

int RunList(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kListOptions, &parsed, &error)) return UsageError("list", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("list"));
    return FinishOutput(kExitOk);
  }
  if (!parsed.positional.empty()) return UsageError("list", "unexpected argument '" + parsed.positional[0] + "'");

  std::vector<ListedSegment> segments = Collect();
  WriteOut(parsed.Has("--json") ? RenderJson(segments) : RenderText(segments));
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
