#include <gtest/gtest.h>

#include <string>

#include "warpforge/runtime/sha256.hpp"

namespace warpforge::runtime {
namespace {

// Test vectors from FIPS 180-4's examples (NIST CSRC "Examples with Intermediate Values").
TEST(Sha256, MatchesTheStandardsVectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, GivesTheSameDigestWhateverTheChunking) {
  const std::string text(300, 'x');
  Sha256 pieces;
  for (std::size_t i = 0; i < text.size(); i += 7) pieces.update(std::string_view(text).substr(i, 7));
  EXPECT_EQ(pieces.finish(), sha256(text));
}

}  // namespace
}  // namespace warpforge::runtime
