#include "io_settings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace limpwatch::hooks {

IoSettings ReadIoSettings(uint32_t table_entries, std::vector<std::string>* problems) {
  IoSettings settings;
  settings.fd_table_size = table_entries;
  if (const char* text = std::getenv("LIMPWATCH_FD_TABLE_SIZE"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    errno = 0;
    unsigned long size = std::strtoul(text, &end, 10);
    bool digits_only = *text >= '0' && *text <= '9' && *end == '\0' && errno == 0;
    if (!digits_only || size < kMinFdTableSize || size > table_entries) {
      problems->push_back("LIMPWATCH_FD_TABLE_SIZE='" + std::string(text) + "': expected " +
                          std::to_string(kMinFdTableSize) + " to " + std::to_string(table_entries) + "; the table has " +
                          std::to_string(table_entries) + " entries");
    } else {
      settings.fd_table_size = static_cast<uint32_t>(size);
    }
  }
  if (const char* text = std::getenv("LIMPWATCH_IO_TIMING"); text != nullptr && *text != '\0') {
    if (std::strcmp(text, "every") == 0) {
      settings.time_every_call = true;
    } else if (std::strcmp(text, "adaptive") != 0) {
      problems->push_back("LIMPWATCH_IO_TIMING='" + std::string(text) + "': expected adaptive or every; using adaptive");
    }
  }
  return settings;
}

}  // namespace limpwatch::hooks
