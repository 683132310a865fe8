// The kernel symbol table (runtime/src/sampler/kernel_symbols.h), read from
// a kallsyms-format file written by the test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sampler/kernel_symbols.h"

namespace limpwatch::runtime {
namespace {

// Functions below 0xffffffff81000000 in descending order, so that the
// table's sort has real work around the entries a test looks at.
std::string Padding(int count) {
  std::string lines;
  char line[64];
  for (int i = count; i > 0; --i) {
    std::snprintf(line, sizeof line, "%016llx t padding_%d\n", 0xffffffff80000000ull + 0x100ull * unsigned(i), i);
    lines += line;
  }
  return lines;
}

class KernelSymbolsTest : public ::testing::Test {
 protected:
  KernelSymbols LoadText(const std::string& text) {
    std::ofstream(path_) << text;
    return KernelSymbols::Load(path_.c_str());
  }
  std::string FindName(const KernelSymbols& table, uint64_t address) {
    KernelSymbol symbol;
    return table.Find(address, &symbol) ? std::string(symbol.name) + " " + std::string(symbol.image) : "-";
  }
  void TearDown() override { unlink(path_.c_str()); }

  std::string path_ = "/tmp/limpwatch-kallsyms-test-" + std::to_string(getpid());
};

TEST_F(KernelSymbolsTest, AnAddressBelongsToTheNearestTextSymbolBelowIt) {
  // Out of address order, as module symbols are in the real file.
  KernelSymbols table = LoadText(
      "ffffffff81002000 T vfs_write\n"
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 t do_sys_open\n"
      "ffffffff81001800 D some_data\n"
      "ffffffffc0100000 t nft_do_chain\t[nf_tables]\n");
  EXPECT_EQ(table.size(), 4u);
  EXPECT_EQ(FindName(table, 0xffffffff80ffffff), "-");
  EXPECT_EQ(FindName(table, 0xffffffff81000000), "_stext [kernel]");
  EXPECT_EQ(FindName(table, 0xffffffff81001900), "do_sys_open [kernel]");  // data symbols are skipped
  EXPECT_EQ(FindName(table, 0xffffffff81002010), "vfs_write [kernel]");
  EXPECT_EQ(FindName(table, 0xffffffffc0100040), "nft_do_chain [nf_tables]");
  EXPECT_EQ(FindName(table, 0xffffffffc0100000 + (2 << 20)), "-");  // far past the last module symbol
}

TEST_F(KernelSymbolsTest, ATextEndAndTheSymbolAtItsAddressKeepTheFilesOrder) {
  // __init_end (a data symbol) closes a text range; a function placed at the
  // same address after it in the file opens the next one, and the other way
  // round the range is closed.
  KernelSymbols after_end = LoadText(
      Padding(300) +
      "ffffffff81000000 T _stext\n"
      "ffffffff82000000 D __init_end\n"
      "ffffffff82000000 t first_init_function\n");
  EXPECT_EQ(FindName(after_end, 0xffffffff82000010), "first_init_function [kernel]");
  KernelSymbols before_end = LoadText(
      Padding(300) +
      "ffffffff81000000 T _stext\n"
      "ffffffff82000000 t last_text_function\n"
      "ffffffff82000000 D __init_end\n");
  EXPECT_EQ(FindName(before_end, 0xffffffff82000010), "-");
  EXPECT_EQ(FindName(before_end, 0xffffffff81ffffff), "_stext [kernel]");
}

TEST_F(KernelSymbolsTest, HiddenAddressesGiveAnEmptyTable) {
  // kptr_restrict: every address reads as zero.
  EXPECT_TRUE(LoadText("0000000000000000 T _stext\n0000000000000000 T vfs_write\n").empty());
  EXPECT_TRUE(KernelSymbols::Load("/nonexistent/kallsyms").empty());
}

}  // namespace
}  // namespace limpwatch::runtime
