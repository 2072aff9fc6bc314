// Where a key of a graph file was written. The loader records the line of
// every dotted key path it reads (Experiment::lines); a path without one (a
// default, a key inside a flow map) is reported at its nearest ancestor's.
// Shared by Experiment::line_of/file_of and the option parsers'
// ParseContext, so both name the same line for a path.
#pragma once

#include <map>
#include <string>

namespace rlwb::core {

// `path`, else its nearest ancestor, that has a line in `lines`; "" if none does.
std::string nearest_key_with_line(const std::map<std::string, int>& lines, const std::string& path);

}  // namespace rlwb::core
