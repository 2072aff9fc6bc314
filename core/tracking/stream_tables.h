// The tables a run stream carries (core/tracking/run_stream.h) and how an
// SQLite value travels as JSON, shared by the stream and the mirror.
#pragma once

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <nlohmann/json.hpp>

#include <array>
#include <string>

namespace rlwb::core::stream {

struct Table {
  const char* name;
  const char* columns;  // after run_id, in the order rows carry them
  bool has_superseded;
};

// Every per-run table with a rowid; params (WITHOUT ROWID) go once, apart.
inline constexpr std::array<Table, 5> kTables = {{
    {"metrics", "key, step, value, wall_time, superseded", true},
    {"events", "time, level, source, text", false},
    {"samples", "step, prompt, response, reward, details, superseded", true},
    {"artifacts", "kind, path, time", false},
    {"profiles", "step, node, kind, data", false},
}};

inline const Table* find_table(const std::string& name) {
  for (const Table& table : kTables)
    if (name == table.name) return &table;
  return nullptr;
}

// Integers stay integers and reals reals, so a value comes back bit for bit
// (nlohmann writes doubles with 17 significant digits); NULL is null.
inline nlohmann::json to_json(const SQLite::Column& column) {
  if (column.isInteger()) return column.getInt64();
  if (column.isFloat()) return column.getDouble();
  if (column.isNull()) return nullptr;
  return column.getString();
}

inline void bind_json(SQLite::Statement& statement, int index, const nlohmann::json& value) {
  if (value.is_null()) {
    statement.bind(index);
  } else if (value.is_number_integer()) {
    statement.bind(index, value.get<int64_t>());
  } else if (value.is_number()) {
    statement.bind(index, value.get<double>());
  } else {
    statement.bind(index, value.get<std::string>());
  }
}

}  // namespace rlwb::core::stream
