#include "core/profile/profile_units.h"

#include <cmath>
#include <cstdio>

namespace rlwb::core::profile {

namespace {

// Three significant digits: "41.2", "3.05", "412".
std::string three_digits(double value) {
  char text[32];
  const double magnitude = std::fabs(value);
  // Decided on the value as it will be rounded: 99.97 prints "100", not "100.0".
  const int decimals = magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2;
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

std::string format_seconds(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude < 0.5e-9) return "0";  // below a nanosecond: the float noise of end - start
  if (magnitude < 1e-6) return three_digits(seconds * 1e9) + " ns";
  if (magnitude < 1e-3) return three_digits(seconds * 1e6) + " us";
  if (magnitude < 1) return three_digits(seconds * 1e3) + " ms";
  return three_digits(seconds) + " s";
}

std::string format_ns(int64_t nanoseconds) { return format_seconds(static_cast<double>(nanoseconds) * 1e-9); }

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " B";
  return three_digits(value) + " " + units[unit];
}

std::string format_percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", share * 100);
  return text;
}

}  // namespace rlwb::core::profile
