// One run's rows as a stream of JSON lines, and the mirror that writes such a
// stream into another tracking DB. `rlwb runs follow` runs RunStream on the
// host where a run is recorded; `rlwb run --remote` reads its output over SSH
// and feeds a RunMirror, so the local DB holds a copy of the remote run that
// the Dashboard and Compare read like any other.
//
// The stream is a sequence of batches. Each batch is what one read snapshot
// of the source DB holds beyond the cursor, and ends with a "cursor" line;
// the mirror buffers a batch and commits it in one transaction together with
// the cursor (kept as the local run's tag remote.cursor). A link that drops
// mid-batch therefore loses nothing and duplicates nothing: following again
// from the committed cursor sends the same batch again.
//
// Lines (one JSON object each, "kind" says which):
//   run        the run row (name, status, last_step, end_time, ...), when it changed
//   params     every param, once
//   superseded rows already sent that a resume marked superseded since: ranges
//              of positions, in rowid order, among the run's rows of a table
//   rows       new rows of metrics, events, samples, artifacts or profiles,
//              [rowid, column values...] each, superseded flag included
//   cursor     the end of a batch, with the cursor to follow again from
//   end        the run has ended and everything was sent
//   alive      nothing new (sent every few seconds, so a silent link is a dead one)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

// How far a stream got: per table the last rowid sent, how many of the sent
// metric and sample rows were superseded, and whether the params went.
struct StreamCursor {
  std::map<std::string, int64_t> after;       // table -> last rowid sent
  std::map<std::string, int64_t> superseded;  // table -> superseded rows among those sent
  bool params_sent = false;

  // "metrics=120,events=8,...,params=1" and back; parse throws
  // TrackingError naming the bad part.
  std::string to_string() const;
  static StreamCursor parse(const std::string& text);
};

// Reads one run of a tracking DB batch by batch (read-only).
class RunStream {
 public:
  // Throws TrackingError when the DB cannot be read or has no run `run`.
  RunStream(const std::string& db_path, int64_t run, StreamCursor since = {});
  ~RunStream();

  // The lines of one batch (the last is its cursor line), or none when
  // nothing changed. At most `max_rows` rows per table per batch.
  std::vector<std::string> next_batch(int max_rows = 2000);
  // The run has ended and the last batch held every row left.
  bool ended() const;
  std::string end_status() const;
  const StreamCursor& cursor() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes a stream into a local DB as one run tagged remote.host, remote.db
// and remote.run; a later mirror of the same remote run continues that run
// from its stored cursor.
class RunMirror {
 public:
  RunMirror(const std::string& db_path, const std::string& host, const std::string& remote_db,
            int64_t remote_run);
  ~RunMirror();

  // Takes one line; a cursor line commits its batch. Throws TrackingError on
  // a line that is not part of a stream, or a batch that does not fit the
  // rows already mirrored (then nothing of that batch is written).
  void apply(const std::string& line);
  // Drops a batch left incomplete (the link dropped); it will come again.
  void discard_partial_batch();

  int64_t local_run() const;                      // 0 until the first batch is committed
  StreamCursor cursor() const;                    // of the last committed batch
  std::optional<std::string> end_status() const;  // after an "end" line

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The local run that mirrors `remote_run` of `remote_db` on `host`, if any.
std::optional<int64_t> find_mirrored_run(const std::string& db_path, const std::string& host,
                                         const std::string& remote_db, int64_t remote_run);

}  // namespace rlwb::core
