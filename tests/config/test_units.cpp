// Physical quantities: parsing every dimension, error messages, best-prefix formatting
// and the exact text round trip.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/config/units.hpp"

namespace sohusim::config {
namespace {

struct Case {
  const char* text;
  double value;
  Dimension dimension;
};

TEST(Units, ParsesEveryDimensionIntoSiBaseUnits) {
  const std::vector<Case> cases = {
      {"1.5 GHz", 1.5e9, Dimension::Frequency},
      {"1.5GHz", 1.5e9, Dimension::Frequency},
      {"800 MHz", 800e6, Dimension::Frequency},
      {"100 kHz", 100e3, Dimension::Frequency},
      {"625 ps", 625e-12, Dimension::Time},
      {"3.9 us", 3.9e-6, Dimension::Time},
      {"3.9 \u00b5s", 3.9e-6, Dimension::Time},
      {"120 ns", 120e-9, Dimension::Time},
      {"2 ms", 2e-3, Dimension::Time},
      {"1 s", 1.0, Dimension::Time},
      {"64 KiB", 65536.0, Dimension::Bytes},
      {"2 MiB", 2097152.0, Dimension::Bytes},
      {"1 GiB", 1073741824.0, Dimension::Bytes},
      {"1 TiB", 1099511627776.0, Dimension::Bytes},
      {"144 GB", 144e9, Dimension::Bytes},
      {"64 kB", 64e3, Dimension::Bytes},
      {"64 KB", 64e3, Dimension::Bytes},
      {"3 MB", 3e6, Dimension::Bytes},
      {"2 TB", 2e12, Dimension::Bytes},
      {"512 B", 512.0, Dimension::Bytes},
      {"819.2 GB/s", 819.2e9, Dimension::Bandwidth},
      {"64 MB/s", 64e6, Dimension::Bandwidth},
      {"6.4 Gbps", 6.4e9, Dimension::BitRate},
      {"6.4 Gb/s", 6.4e9, Dimension::BitRate},
      {"100 Mbps", 100e6, Dimension::BitRate},
      {"32 GT/s", 32e9, Dimension::TransferRate},
      {"8 GT/s", 8e9, Dimension::TransferRate},
      {"6400 MT/s", 6400e6, Dimension::TransferRate},
      {"350 W", 350.0, Dimension::Power},
      {"15 mW", 15e-3, Dimension::Power},
      {"0.5 pJ", 0.5e-12, Dimension::Energy},
      {"2 nJ", 2e-9, Dimension::Energy},
      {"80 %", 0.8, Dimension::Ratio},
      {"12.5%", 0.125, Dimension::Ratio},
      {"42", 42.0, Dimension::None},
      {"-1.5e3", -1500.0, Dimension::None},
      {"1.5e3 MHz", 1.5e9, Dimension::Frequency},
      {"  +2 ns  ", 2e-9, Dimension::Time},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Quantity q = parse_quantity(c.text);
    // Exactly the double of the decimal literal: prefixes are applied to the text.
    EXPECT_EQ(q.value, c.value);
    EXPECT_EQ(q.dimension, c.dimension);
  }
}

TEST(Units, ParseWithExpectedDimensionReturnsSiValue) {
  EXPECT_EQ(parse_quantity("1.6 GHz", Dimension::Frequency), 1.6e9);
  EXPECT_EQ(parse_quantity("4096", Dimension::Bytes, /*allow_bare_number=*/true), 4096.0);
  EXPECT_EQ(parse_quantity("2.5", Dimension::None), 2.5);
}

TEST(Units, UnitsAreCaseSensitive) {
  // "Mb" is a megabit and "MB" a megabyte; guessing would silently be off by 8.
  EXPECT_EQ(parse_quantity("8 Mbps").dimension, Dimension::BitRate);
  EXPECT_EQ(parse_quantity("1 MB/s").dimension, Dimension::Bandwidth);
  EXPECT_THROW(parse_quantity("1.5 ghz"), UnitError);
  EXPECT_THROW(parse_quantity("64 kib"), UnitError);
}

TEST(Units, WrongDimensionNamesWhatWasExpectedAndWhatWasGiven) {
  try {
    parse_quantity("5 ns", Dimension::Frequency);
    FAIL() << "no error";
  } catch (const UnitError& error) {
    EXPECT_STREQ(error.what(),
                 "expected a frequency such as \"1.5 GHz\" (units: Hz, kHz, MHz, GHz), got a time \"5 ns\"");
  }
}

TEST(Units, ErrorMessagesForEachKindOfBadText) {
  const auto message = [](const char* text, Dimension dimension, bool bare = false) {
    try {
      parse_quantity(text, dimension, bare);
    } catch (const UnitError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(
      message("5 foo", Dimension::Frequency),
      "expected a frequency such as \"1.5 GHz\" (units: Hz, kHz, MHz, GHz), got \"5 foo\" (unknown unit \"foo\")");
  EXPECT_EQ(message("abc", Dimension::Time),
            "expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got \"abc\" (not a number)");
  EXPECT_EQ(message("64", Dimension::Bytes),
            "expected a size such as \"64 KiB\" (units: B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), got the bare "
            "number \"64\"; write it with a unit");
  EXPECT_EQ(message("0.5 pJ", Dimension::Power),
            "expected a power such as \"350 W\" (units: uW, mW, W, kW), got an energy \"0.5 pJ\"");
  EXPECT_EQ(message("1e999 Hz", Dimension::Frequency),
            "expected a frequency such as \"1.5 GHz\" (units: Hz, kHz, MHz, GHz), got \"1e999 Hz\" (too large or "
            "too small for a double)");
  EXPECT_EQ(message("1 GB/s", Dimension::BitRate),
            "expected a bit rate such as \"6.4 Gbps\" (units: bps, kbps, Mbps, Gbps, Tbps (or b/s .. Tb/s)), got a "
            "bandwidth \"1 GB/s\"");
  EXPECT_EQ(message("3 GHz", Dimension::None), "expected a number such as \"1.5\", got a frequency \"3 GHz\"");
  EXPECT_EQ(message("", Dimension::Time),
            "expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got \"\" (not a number)");
  EXPECT_EQ(message("inf s", Dimension::Time),
            "expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got \"inf s\" (not a number)");
  EXPECT_EQ(message("1.2.3 s", Dimension::Time),
            "expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got \"1.2.3 s\" (unknown unit \".3 s\")");
}

TEST(Units, FormatsWithTheBestPrefix) {
  EXPECT_EQ(format_quantity(1.5e9, Dimension::Frequency), "1.5 GHz");
  EXPECT_EQ(format_quantity(65536.0, Dimension::Bytes), "64 KiB");
  EXPECT_EQ(format_quantity(819.2e9, Dimension::Bandwidth), "819.2 GB/s");
  EXPECT_EQ(format_quantity(625e-12, Dimension::Time), "625 ps");
  EXPECT_EQ(format_quantity(144e9, Dimension::Bytes), "144 GB");
  EXPECT_EQ(format_quantity(1073741824.0, Dimension::Bytes), "1 GiB");
  EXPECT_EQ(format_quantity(1536.0, Dimension::Bytes), "1.5 KiB");
  EXPECT_EQ(format_quantity(1e6, Dimension::Bytes), "1 MB");
  EXPECT_EQ(format_quantity(100.0, Dimension::Bytes), "100 B");
  EXPECT_EQ(format_quantity(6.4e9, Dimension::BitRate), "6.4 Gbps");
  EXPECT_EQ(format_quantity(32e9, Dimension::TransferRate), "32 GT/s");
  EXPECT_EQ(format_quantity(350.0, Dimension::Power), "350 W");
  EXPECT_EQ(format_quantity(3.9e-6, Dimension::Time), "3.9 us");
  EXPECT_EQ(format_quantity(120e-9, Dimension::Time), "120 ns");
  EXPECT_EQ(format_quantity(0.8, Dimension::Ratio), "80 %");
  EXPECT_EQ(format_quantity(0.0, Dimension::Time), "0 s");
  EXPECT_EQ(format_quantity(-5e-9, Dimension::Time), "-5 ns");
  EXPECT_EQ(format_quantity(3600.0, Dimension::Time), "3600 s");
  EXPECT_EQ(format_quantity(2.5, Dimension::None), "2.5");
}

TEST(Units, FormatsInAGivenUnit) {
  EXPECT_EQ(format_quantity(625e-12, Dimension::Time, "ns"), "0.625 ns");
  EXPECT_EQ(format_quantity(48e-9, Dimension::Time, "ps"), "48000 ps");
  EXPECT_EQ(format_quantity(0.0, Dimension::Time, "ns"), "0 ns");
  EXPECT_EQ(format_quantity(65536.0, Dimension::Bytes, "MiB"), "0.0625 MiB");
  EXPECT_THROW(format_quantity(1.0, Dimension::Time, "Hz"), std::invalid_argument);
}

TEST(Units, FormattedTextParsesBackToTheSameDouble) {
  const std::vector<Dimension> dimensions = {
      Dimension::None,    Dimension::Time,         Dimension::Frequency, Dimension::Bytes,  Dimension::Bandwidth,
      Dimension::BitRate, Dimension::TransferRate, Dimension::Power,     Dimension::Energy, Dimension::Ratio};
  std::mt19937_64 random(12345);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (const Dimension dimension : dimensions) {
    for (int i = 0; i < 2000; ++i) {
      const double value = std::ldexp(mantissa(random), exponent(random) * 3);
      const std::string text = format_quantity(value, dimension);
      SCOPED_TRACE(text);
      const Quantity back = parse_quantity(text);
      ASSERT_EQ(back.value, value);
      if (dimension != Dimension::None) {
        ASSERT_EQ(back.dimension, dimension);
      }
    }
  }
  // Round values stay short, and exact in every unit of their dimension.
  for (const char* unit : {"fs", "ps", "ns", "us", "ms", "s"}) {
    for (const double value : {625e-12, 1.0 / 3.0e9, 3.9e-6, 48e-9, 1e-15, 7.0}) {
      const std::string text = format_quantity(value, Dimension::Time, unit);
      SCOPED_TRACE(text);
      ASSERT_EQ(parse_quantity(text, Dimension::Time), value);
    }
  }
  for (const char* unit : {"B", "kB", "MB", "GB", "KiB", "MiB", "GiB", "TiB"}) {
    for (const double value : {144e9, 65536.0, 3.0, 1e15 + 1.0}) {
      const std::string text = format_quantity(value, Dimension::Bytes, unit);
      SCOPED_TRACE(text);
      ASSERT_EQ(parse_quantity(text, Dimension::Bytes), value);
    }
  }
}

TEST(Units, DescribesDimensions) {
  EXPECT_EQ(dimension_name(Dimension::TransferRate), "transfer rate");
  EXPECT_EQ(dimension_example(Dimension::Energy), "an energy such as \"0.5 pJ\"");
  EXPECT_EQ(describe_expected(Dimension::Frequency), "a frequency such as \"1.5 GHz\" (units: Hz, kHz, MHz, GHz)");
  EXPECT_EQ(base_unit(Dimension::BitRate), "bit/s");
  EXPECT_TRUE(is_unit_of("GiB", Dimension::Bytes));
  EXPECT_TRUE(is_unit_of("KHz", Dimension::Frequency));
  EXPECT_FALSE(is_unit_of("GB/s", Dimension::Bytes));
}

}  // namespace
}  // namespace sohusim::config
