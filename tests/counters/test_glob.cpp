#include <gtest/gtest.h>

#include "sohusim/counters/glob.hpp"

using sohusim::counters::glob_match;
using sohusim::counters::is_glob;

TEST(Glob, StarStaysWithinOneSegment) {
  EXPECT_TRUE(glob_match("dev0.me*.active_cycles", "dev0.me3.active_cycles"));
  EXPECT_TRUE(glob_match("dev0.me*.active_cycles", "dev0.me.active_cycles"));
  EXPECT_FALSE(glob_match("dev0.me*.active_cycles", "dev0.me3.x.active_cycles"));
  EXPECT_FALSE(glob_match("dev0.*", "dev0.a.b"));
  EXPECT_TRUE(glob_match("dev0.*", "dev0.a"));
}

TEST(Glob, DoubleStarCrossesSegments) {
  EXPECT_TRUE(glob_match("dev*.**.row_hits", "dev0.hbm.s2.ch5.pc1.row_hits"));
  EXPECT_FALSE(glob_match("dev*.**.row_hits", "dev0.hbm.s2.ch5.pc1.row_misses"));
  EXPECT_TRUE(glob_match("**", "a.b.c"));
}

TEST(Glob, QuestionAndSets) {
  EXPECT_TRUE(glob_match("me?", "me3"));
  EXPECT_FALSE(glob_match("me?", "me12"));
  EXPECT_FALSE(glob_match("a?b", "a.b"));
  EXPECT_TRUE(glob_match("ch[0-3]", "ch2"));
  EXPECT_FALSE(glob_match("ch[0-3]", "ch5"));
  EXPECT_TRUE(glob_match("ch[!0-3]", "ch5"));
  EXPECT_TRUE(glob_match("s[13]", "s3"));
}

TEST(Glob, LiteralAndDetection) {
  EXPECT_TRUE(glob_match("a.b", "a.b"));
  EXPECT_FALSE(glob_match("a.b", "a.bc"));
  EXPECT_FALSE(glob_match("a.bc", "a.b"));
  EXPECT_TRUE(is_glob("a.*"));
  EXPECT_TRUE(is_glob("a?"));
  EXPECT_FALSE(is_glob("a.b_c"));
}
