// What a task source read from its files, kept while they are unchanged:
// the validator's check and every step of a run share one read (one
// controller process reads a file once). The key names each file by its
// identity (file_identity: path, size, modification time) and whatever
// settings decide what is read, so a rewritten file is read again. One
// value is kept: the last key's. Thread-safe (the read runs under the
// lock, so two callers never read the same files at once). Used by
// dataset_task.cpp and humaneval_task.cpp.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace rlwb::core::tasks {

// "path:size:mtime"; a file that cannot be looked at gets the path alone
// (reading it will say why).
inline std::string file_identity(const std::string& path) {
  std::error_code size_error, time_error;
  const auto size = std::filesystem::file_size(path, size_error);
  const auto time = std::filesystem::last_write_time(path, time_error);
  if (size_error || time_error) return path + "::";
  return path + ":" + std::to_string(size) + ":" + std::to_string(time.time_since_epoch().count());
}

template <typename T>
class FileReadCache {
 public:
  // The value read for `key`: the kept one, or read() when the key differs.
  std::shared_ptr<const T> get(const std::string& key, const std::function<T()>& read) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (key != key_ || !value_) {
      value_ = std::make_shared<const T>(read());
      key_ = key;
    }
    return value_;
  }

 private:
  std::mutex mutex_;
  std::string key_;
  std::shared_ptr<const T> value_;
};

}  // namespace rlwb::core::tasks
