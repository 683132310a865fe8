// The demangler behind selection rules and the segment's display names.
#include "demangler.h"

#include <gtest/gtest.h>

#include <string>

namespace limpwatch::runtime {
namespace {

TEST(DemanglerTest, CxxNamesAreShownAsWritten) {
  Demangler demangle;
  EXPECT_EQ(demangle("_Z7phase_av"), "phase_a()");
  EXPECT_EQ(demangle("_ZN4dbpf5queue4pushEPvm"), "dbpf::queue::push(void*, unsigned long)");
}

// A C function's name is never read as a type's encoding: "f" would
// demangle to "float" and "i" to "int".
TEST(DemanglerTest, CNamesStayAsTheyAre) {
  Demangler demangle;
  EXPECT_EQ(demangle("f"), "f");
  EXPECT_EQ(demangle("i"), "i");
  EXPECT_EQ(demangle("dbpf_bstream_read_at"), "dbpf_bstream_read_at");
  EXPECT_EQ(Demangle("f"), "f");
}

TEST(DemanglerTest, ANameThatDoesNotDemangleIsKeptRaw) {
  Demangler demangle;
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Zqq9broken"), "_Zqq9broken");
  EXPECT_EQ(demangle("_Z7phase_av"), "phase_a()");  // and the next name still demangles
}

// One buffer serves names longer and shorter than the one before.
TEST(DemanglerTest, NamesOfEveryLengthShareOneBuffer) {
  Demangler demangle;
  std::string long_name = "_ZN";
  std::string expected;
  for (int part = 0; part < 40; ++part) {
    long_name += "12abcdefghijkl";
    expected += (part == 0 ? "" : "::") + std::string("abcdefghijkl");
  }
  long_name += "Ev";
  EXPECT_EQ(demangle("_Z1gv"), "g()");
  EXPECT_EQ(demangle(long_name), expected + "()");
  EXPECT_EQ(demangle("_Z1hi"), "h(int)");
  EXPECT_EQ(demangle(long_name), expected + "()");
  EXPECT_EQ(Demangle(long_name), expected + "()");
}

}  // namespace
}  // namespace limpwatch::runtime
