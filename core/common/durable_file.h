// Files that survive a crash: written whole or not at all, as checkpoints
// need them (core/controller/checkpoint_store.h, the workers' role state).
//   write_file_durably  writes, fsyncs and then renames into place, so a
//                       reader sees the old file or the whole new one;
//   fsync_directory     makes a rename or a new entry in a folder durable;
//   file_digest         FNV-1a 64 of a file's bytes, as 16 hex digits: a
//                       checksum against truncation and corruption (not
//                       against an adversary).
// Errors throw std::runtime_error naming the path and errno's text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rlwb::core {

void write_file_durably(const std::string& path, std::string_view bytes);
void fsync_directory(const std::string& path);
std::string file_digest(const std::string& path);
std::string bytes_digest(std::string_view bytes);

}  // namespace rlwb::core
