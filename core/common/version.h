// Version of RLWB (CLI, runs table).
#pragma once
namespace rlwb::core {
const char* version();
}  // namespace rlwb::core
