#include "core/controller/checkpoint_store.h"

#include "core/common/durable_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace rlwb::core {

namespace fs = std::filesystem;

std::string checkpoint_folder_name(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%06lld", static_cast<long long>(step));
  return name;
}

std::string partial_folder(const std::string& final_dir) { return final_dir + ".partial"; }

void seal_checkpoint(const std::string& final_dir, CheckpointManifest manifest) {
  const std::string partial = partial_folder(final_dir);
  manifest.files.clear();
  for (const auto& entry : fs::recursive_directory_iterator(partial)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = fs::relative(entry.path(), partial).string();
    if (relative == kCheckpointManifest) continue;
    manifest.files.push_back({relative, static_cast<uint64_t>(entry.file_size()), file_digest(entry.path())});
  }
  std::sort(manifest.files.begin(), manifest.files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) { return a.path < b.path; });
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : manifest.files)
    files.push_back({{"path", f.path}, {"bytes", f.bytes}, {"digest", f.digest}});
  nlohmann::json text = {{"format", 1},
                         {"step", manifest.step},
                         {"state", manifest.state},
                         {"models", manifest.models},
                         {"files", files}};
  write_file_durably((fs::path(partial) / kCheckpointManifest).string(), text.dump(1));
  for (const auto& entry : fs::recursive_directory_iterator(partial))
    if (entry.is_directory()) fsync_directory(entry.path().string());
  fsync_directory(partial);
  std::error_code ec;
  if (fs::exists(final_dir)) fs::remove_all(final_dir);
  fs::rename(partial, final_dir);
  fsync_directory(fs::path(final_dir).parent_path().string());
}

CheckpointManifest verify_checkpoint(const std::string& dir) {
  auto bad = [&](const std::string& why) { return CheckpointError("checkpoint " + dir + ": " + why); };
  if (!fs::is_directory(dir)) throw bad("the folder does not exist (deleted?)");
  const fs::path manifest_path = fs::path(dir) / kCheckpointManifest;
  std::ifstream in(manifest_path);
  if (!in) throw bad("it has no " + std::string(kCheckpointManifest) + " (never sealed)");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  CheckpointManifest m;
  try {
    j = nlohmann::json::parse(text.str());
    m.step = j.at("step").get<int64_t>();
    m.state = j.at("state");
    m.models = j.at("models");
    for (const auto& f : j.at("files"))
      m.files.push_back({f.at("path").get<std::string>(), f.at("bytes").get<uint64_t>(),
                         f.at("digest").get<std::string>()});
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string(kCheckpointManifest) + " is damaged: " + e.what());
  }
  std::map<std::string, const CheckpointFile*> listed;
  for (const auto& f : m.files) listed[f.path] = &f;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = fs::relative(entry.path(), dir).string();
    if (relative != kCheckpointManifest && !listed.count(relative))
      throw bad("file " + relative + " is not in the manifest");
  }
  for (const auto& f : m.files) {
    const fs::path path = fs::path(dir) / f.path;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw bad("file " + f.path + " is missing");
    if (size != f.bytes)
      throw bad("file " + f.path + " has " + std::to_string(size) + " bytes, the manifest says " +
                std::to_string(f.bytes) + " (truncated?)");
    if (file_digest(path.string()) != f.digest)
      throw bad("file " + f.path + " does not match its checksum (corrupt)");
  }
  return m;
}

std::optional<FoundCheckpoint> newest_good_checkpoint(const std::vector<std::string>& dirs,
                                                      std::vector<std::string>* skipped_out) {
  std::vector<std::string> skipped;
  for (const auto& dir : dirs) {
    try {
      CheckpointManifest m = verify_checkpoint(dir);
      if (skipped_out) *skipped_out = skipped;
      return FoundCheckpoint{dir, std::move(m), std::move(skipped)};
    } catch (const CheckpointError& e) {
      skipped.push_back(e.what());
    }
  }
  if (skipped_out) *skipped_out = skipped;
  return std::nullopt;
}

}  // namespace rlwb::core
