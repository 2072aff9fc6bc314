// pprof_profile() of profile_export.h: the workers' merged calling contexts
// as a gzip'd pprof Profile message (core/profile/pprof.proto).
#include "core/profile/context_paths.h"
#include "core/profile/pprof.pb.h"
#include "core/profile/profile_export.h"

#include <zlib.h>

#include <map>
#include <stdexcept>
#include <utility>

namespace rlwb::core::profile {

namespace {

// pprof's string table: every name stored once, 0 is "".
class StringTable {
 public:
  explicit StringTable(pprof::Profile& profile) : profile_(profile) { index(""); }
  int64_t index(const std::string& text) {
    auto [it, added] = indices_.try_emplace(text, static_cast<int64_t>(indices_.size()));
    if (added) profile_.add_string_table(text);
    return it->second;
  }

 private:
  pprof::Profile& profile_;
  std::map<std::string, int64_t> indices_;
};

// One Function and one Location per distinct frame (kind and name): a
// frame's self and total time then add up across the paths it is on.
class Locations {
 public:
  Locations(pprof::Profile& profile, StringTable& strings) : profile_(profile), strings_(strings) {}
  uint64_t id_of(const Frame& frame) {
    const std::pair<FrameKind, std::string> key{frame.kind, frame.name};
    if (auto it = ids_.find(key); it != ids_.end()) return it->second;
    const uint64_t id = ids_.size() + 1;  // ids must be non-zero
    pprof::Function* function = profile_.add_function();
    function->set_id(id);
    function->set_name(strings_.index(frame.name));
    function->set_system_name(strings_.index(frame.name));
    pprof::Location* location = profile_.add_location();
    location->set_id(id);
    location->add_line()->set_function_id(id);
    ids_.emplace(key, id);
    return id;
  }

 private:
  pprof::Profile& profile_;
  StringTable& strings_;
  std::map<std::pair<FrameKind, std::string>, uint64_t> ids_;
};

std::string gzip(const std::string& bytes) {
  z_stream stream{};
  // 15 + 16: the largest window, with a gzip header and trailer (what pprof reads).
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("pprof export: zlib could not start compressing");
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("pprof export: zlib could not compress the profile");
  out.resize(stream.total_out);
  return out;
}

}  // namespace

std::string pprof_profile(const RunProfile& profile) {
  pprof::Profile message;
  StringTable strings(message);
  Locations locations(message, strings);
  for (auto [type, unit] : {std::pair{"calls", "count"}, std::pair{"wall", "nanoseconds"}}) {
    pprof::ValueType* value_type = message.add_sample_type();
    value_type->set_type(strings.index(type));
    value_type->set_unit(strings.index(unit));
  }
  message.set_default_sample_type(strings.index("wall"));
  message.add_comment(strings.index("rlwb run " + std::to_string(profile.run) +
                                    ": self wall time of each calling context, the workers merged"));
  const int64_t node_key = strings.index("node"), kind_key = strings.index("kind");
  const ContextTree tree = profile.merged_tree();
  for (const ContextPath& path : context_paths(tree)) {
    if (path.self_ns <= 0 && path.calls <= 0) continue;
    pprof::Sample* sample = message.add_sample();
    for (auto frame = path.frames.rbegin(); frame != path.frames.rend(); ++frame)
      sample->add_location_id(locations.id_of(**frame));  // innermost first
    sample->add_value(path.calls);
    sample->add_value(path.self_ns);
    // Labels let `pprof -tagfocus node=gen` pick one dataflow node.
    pprof::Label* node = sample->add_label();
    node->set_key(node_key);
    node->set_str(strings.index(path.node()));
    pprof::Label* kind = sample->add_label();
    kind->set_key(kind_key);
    kind->set_str(strings.index(frame_kind_name(path.leaf().kind)));
  }
  std::string bytes;
  if (!message.SerializeToString(&bytes))
    throw std::runtime_error("pprof export: the profile did not serialize");
  return gzip(bytes);
}

}  // namespace rlwb::core::profile
