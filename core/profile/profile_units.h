// How the profile's readers print quantities: durations with a unit that
// keeps three significant digits ("412 us", "1.25 s"), bytes in binary
// units, shares as percentages. One set of functions, so the report, the
// diff and the analyzer's evidence print the same number the same way.
#pragma once

#include <cstdint>
#include <string>

namespace rlwb::core::profile {

std::string format_seconds(double seconds);  // "0", "812 ns", "41.2 us", "3.05 ms", "1.25 s"
std::string format_ns(int64_t nanoseconds);  // format_seconds of it
std::string format_bytes(int64_t bytes);     // "0 B", "512 B", "1.5 KiB", "2.25 GiB"
std::string format_percent(double share);    // 0.123 -> "12.3%"

}  // namespace rlwb::core::profile
