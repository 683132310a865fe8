// The 16-bit form of a feature value on the wire: bfloat16.
//
// bfloat16 is the upper half of an IEEE-754 binary32: sign, the full 8-bit
// exponent and 7 explicit mantissa bits. It keeps float's whole range (a
// per-window call count of 10^9 and a time of 10^-3 ms both survive), its
// sign and its zero, at a relative precision of 2^-8:
//
//   |Decode(Encode(v)) - v| <= 2^-8 * |v|   (0.39 %) for every normal float v
//
// Integers up to 256 are exact; larger counts keep about 2.4 significant
// digits, far below the window-to-window noise peer comparison works with.
// Rounding is to nearest, ties to even. Finite values beyond the largest
// bfloat16 (3.3895e38) clamp to it instead of becoming infinite; values
// below the normal range (|v| < 1.18e-38) keep fewer bits. Infinities and
// NaN have no encoding here: callers refuse them first (IsFiniteBfloat16
// tells a decoder which 16-bit patterns to reject).
//
// A log-scale quantisation would have been finer for positive values but
// loses negative values and needs a fixed range; features may be normalised
// by the analysis, so the general format won.
#ifndef LIMPWATCH_ANALYZER_BFLOAT16_H_
#define LIMPWATCH_ANALYZER_BFLOAT16_H_

#include <cstdint>

namespace limpwatch::analyzer {

inline constexpr double kBfloat16RelativeError = 1.0 / 256.0;

// The nearest bfloat16 of a finite float (clamped to the largest finite one).
// Thread-safe, no side effects.
uint16_t EncodeBfloat16(float value);

// The float a bfloat16 pattern stands for (exact).
float DecodeBfloat16(uint16_t bits);

// False for the patterns of infinities and NaNs.
inline bool IsFiniteBfloat16(uint16_t bits) { return (bits & 0x7F80u) != 0x7F80u; }

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_BFLOAT16_H_
