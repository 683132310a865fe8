// Human-readable renderings of sizes, times, numbers and enum values.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_FORMAT_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "limpwatch/shm/layout.h"

namespace limpwatch::cli {

// "512 B", "12.3 KiB", "1.5 MiB", "2.0 GiB".
std::string FormatBytes(uint64_t bytes);

// Local time "2024-11-22 00:44:01" (".123" appended with with_millis); "-"
// for 0, which segments use for "never".
std::string FormatLocalTime(uint64_t realtime_ns, bool with_millis = false);

// ISO 8601 local time with milliseconds and UTC offset, for machine output:
// "2024-11-22T00:44:01.123+0100"; empty for 0.
std::string FormatIsoTime(uint64_t realtime_ns);

// A duration scaled to a readable unit: "850 ns", "12.4 us", "3.21 ms", "1.50 s".
std::string FormatDuration(double ns);

// Fixed-point with `decimals` digits after the point ("-" for NaN/inf).
std::string FormatFixed(double value, int decimals);

// Up to 9 significant digits, no trailing zeros: "1", "0.357142857".
std::string FormatNumber(double value);

// Exactly 16 lowercase hex digits, so hashes line up and compare as text.
std::string FormatHex16(uint64_t value);

// "0x401a2b".
std::string FormatAddress(uint64_t address);

// Length of the valid UTF-8 sequence starting at text[start], or 0 when the
// bytes there are not one (stray continuation, overlong form, surrogate,
// beyond U+10FFFF).
size_t Utf8SequenceLength(std::string_view text, size_t start);

// Replaces control characters (C0, DEL, C1) and bytes that are not UTF-8 with '?'. Names come from a segment
// any process could have written; printed raw they could move the cursor or
// recolour the user's terminal, and a newline would break the one-line rules.
std::string Printable(std::string_view text);

const char* ClockSourceName(shm::ClockSource source);
const char* SymbolStateName(shm::SymbolState state);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_FORMAT_H_
