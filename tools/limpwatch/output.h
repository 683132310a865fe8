// Writing to stdout and reporting errors on stderr.
//
// Every failure of the tool is reported as exactly one line on stderr,
// "limpwatch: <what went wrong>", so scripts and humans never have to pick the
// cause out of a stack of messages.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_OUTPUT_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_OUTPUT_H_

#include <string_view>

namespace limpwatch::cli {

// Prints "limpwatch: <message>" as one line on stderr and returns exit_code.
int Fail(int exit_code, std::string_view message);

// Prints "limpwatch: warning: <message>" as one line on stderr; the
// command goes on (a skipped CSV row, a record with a bad CRC).
void Warn(std::string_view message);

// Writes to stdout (buffered). Returns false once stdout has failed.
bool WriteOut(std::string_view text);

// Flushes stdout. Returns false when the data could not be written.
bool FlushOut();

// Flushes stdout and returns exit_code, or reports a write error and returns
// the failure code. A closed pipe (`limpwatch top x | head`) is the reader's
// way of saying "enough" and is not reported.
int FinishOutput(int exit_code);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_OUTPUT_H_
