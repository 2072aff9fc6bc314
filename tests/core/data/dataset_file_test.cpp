// core/data: dataset files read into rows as pyarrow itself reads them, and
// every bad file refused with the file, the row and the column named.
#include "core/data/dataset_file.h"

#include "core/data/verl_rows.h"
#include "tests/core/data/dataset_test_support.h"

#include <gmock/gmock.h>

using rlwb::core::data::DatasetError;
using rlwb::core::data::read_dataset_file;
using rlwb::core::data::verl_rows;
using rlwb::testing::DatasetDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

// The message of the DatasetError that `read` throws ("" if none).
template <typename F>
std::string error_of(F read) {
  try {
    read();
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

// Every Arrow type a dataset column is likely to hold, nested as verl's
// columns nest, over several row groups (so several chunks per column).
TEST(DatasetFile, ParquetRowsEqualPyarrowsOwnToPylist) {
  DatasetDir dir("rlwb-parquet-types");
  const std::string parquet = dir.file("types.parquet"), expected = dir.file("expected.json");
  rlwb::testing::run_python(R"(
n = 10
msg = pa.struct([("role", pa.string()), ("content", pa.string())])
table = pa.table({
    "prompt": pa.array([[{"role": "user", "content": f"q{i} \u00e9\u4e2d"}] for i in range(n)], pa.list_(msg)),
    "data_source": pa.array(["a", "b"] * 5).dictionary_encode(),
    "reward_model": pa.array([{"style": "rule", "ground_truth": str(i)} for i in range(n)]),
    "ids": pa.array([list(range(i)) for i in range(n)], pa.list_(pa.int64())),
    "small": pa.array(range(n), pa.int8()),
    "unsigned": pa.array(range(n), pa.uint32()),
    "score": pa.array([i / 4 for i in range(n)], pa.float64()),
    "half": pa.array([i / 2 for i in range(n)], pa.float32()),
    "flag": pa.array([i % 2 == 0 for i in range(n)]),
    "maybe": pa.array([None if i % 3 == 0 else f"v{i}" for i in range(n)], pa.large_string()),
    "blob": pa.array([bytes(f"b{i}", "ascii") for i in range(n)], pa.binary()),
    "tags": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int32())),
    "fixed": pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int16(), 2)),
    "empty": pa.array([None] * n, pa.null()),
})
pq.write_table(table, sys.argv[1], row_group_size=3)
rows = pq.read_table(sys.argv[1]).to_pylist()
for r in rows:
    r["blob"] = r["blob"].decode("ascii")
json.dump(rows, open(sys.argv[2], "w"))
)",
                            {parquet, expected});
  const auto file = read_dataset_file(parquet);
  const auto want = nlohmann::json::parse(std::ifstream(expected));
  ASSERT_EQ(file.rows.size(), 10u);
  for (size_t i = 0; i < file.rows.size(); ++i) EXPECT_EQ(file.rows[i], want[i]) << "row " << i;
  EXPECT_EQ(file.where(3), parquet + " row 4");
}

TEST(DatasetFile, JsonLinesSkipBlankLinesAndNameTheLineOfEachRow) {
  DatasetDir dir("rlwb-jsonl-lines");
  const std::string path = dir.file("rows.jsonl");
  std::ofstream(path) << R"({"a": 1})"
                      << "\n\n  \n"
                      << R"({"a": [2, {"b": null}]})"
                      << "\n";
  const auto file = read_dataset_file(path);
  ASSERT_EQ(file.rows.size(), 2u);
  EXPECT_EQ(file.rows[1]["a"][1]["b"], nullptr);
  EXPECT_EQ(file.where(0), path + " line 1");
  EXPECT_EQ(file.where(1), path + " line 4");
}

TEST(DatasetFile, BadFilesAreRefusedNamingTheFileAndWhatToDo) {
  DatasetDir dir("rlwb-bad-datasets");
  EXPECT_THAT(error_of([&] { read_dataset_file(dir.file("nothere.parquet")); }),
              AllOf(HasSubstr("nothere.parquet"), HasSubstr("no such file")));
  EXPECT_THAT(error_of([&] { read_dataset_file(dir.path.string()); }), HasSubstr("is a directory"));
  std::ofstream(dir.file("rows.csv")) << "a,b\n1,2\n";
  EXPECT_THAT(error_of([&] { read_dataset_file(dir.file("rows.csv")); }),
              AllOf(HasSubstr("rows.csv"), HasSubstr(".parquet and .jsonl")));
  std::ofstream(dir.file("garbage.parquet")) << "this is not parquet at all, just text";
  EXPECT_THAT(error_of([&] { read_dataset_file(dir.file("garbage.parquet")); }),
              AllOf(HasSubstr("garbage.parquet"), HasSubstr("Parquet")));

  // A file cut short while it was copied: its footer is gone.
  const std::string whole = dir.file("whole.parquet"), cut = dir.file("cut.parquet");
  rlwb::testing::write_parquet(whole, {rlwb::testing::verl_row("1+1=", "2", 0)});
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THAT(error_of([&] { read_dataset_file(cut); }),
              AllOf(HasSubstr("cut.parquet"), HasSubstr("Parquet")));

  std::ofstream(dir.file("broken.jsonl")) << "{\"a\": 1}\n{\"a\": 2}\n{\"a\": \n";
  EXPECT_THAT(error_of([&] { read_dataset_file(dir.file("broken.jsonl")); }),
              AllOf(HasSubstr("broken.jsonl line 3"), HasSubstr("not valid JSON")));
  std::ofstream(dir.file("list.jsonl")) << "[1, 2]\n";
  EXPECT_THAT(error_of([&] { read_dataset_file(dir.file("list.jsonl")); }),
              AllOf(HasSubstr("list.jsonl line 1"), HasSubstr("not an object")));
}

TEST(DatasetFile, AColumnOfATypeRlwbDoesNotReadIsNamedWithItsType) {
  DatasetDir dir("rlwb-parquet-decimal");
  const std::string path = dir.file("prices.parquet");
  rlwb::testing::run_python(R"(
from decimal import Decimal
pq.write_table(pa.table({"price": pa.array([Decimal("1.25")], pa.decimal128(5, 2))}), sys.argv[1])
)",
                            {path});
  EXPECT_THAT(error_of([&] { read_dataset_file(path); }),
              AllOf(HasSubstr("column 'price'"), HasSubstr("decimal128(5, 2)"), HasSubstr("does not read")));
}

TEST(VerlRows, ReadVerlsColumnsFromParquetAndJsonLinesAlike) {
  DatasetDir dir("rlwb-verl-rows");
  std::vector<nlohmann::json> rows = {rlwb::testing::verl_row("What is 2+3?", "5", 0),
                                      rlwb::testing::verl_row("Print 7", "7", 1, "code")};
  rows[1]["reward_model"]["ground_truth"] = 7;  // a number, as some converters write it
  rows[1].erase("ability");
  rlwb::testing::write_parquet(dir.file("rows.parquet"), {rows[0]});
  rlwb::testing::write_jsonl(dir.file("rows.jsonl"), rows);
  for (const auto& path : {dir.file("rows.parquet"), dir.file("rows.jsonl")}) {
    SCOPED_TRACE(path);
    const auto read = verl_rows(read_dataset_file(path), "prompt");
    ASSERT_GE(read.size(), 1u);
    EXPECT_EQ(read[0].prompt, rows[0]["prompt"]);
    EXPECT_EQ(read[0].data_source, "openai/gsm8k");
    EXPECT_EQ(read[0].ability, "math");
    EXPECT_EQ(read[0].reward_style, "rule");
    EXPECT_EQ(rlwb::core::data::ground_truth_text(read[0].ground_truth), "5");
    EXPECT_EQ(read[0].extra_info["index"], 0);
  }
  const auto jsonl = verl_rows(read_dataset_file(dir.file("rows.jsonl")), "prompt");
  EXPECT_EQ(jsonl[1].ability, "");
  EXPECT_EQ(rlwb::core::data::ground_truth_text(jsonl[1].ground_truth), "7");
}

TEST(VerlRows, AMissingColumnOrAWrongTypeNamesTheFileRowAndColumn) {
  DatasetDir dir("rlwb-verl-bad");
  auto error_for = [&](const std::function<void(nlohmann::json&)>& spoil, const std::string& key = "prompt") {
    std::vector<nlohmann::json> rows = {rlwb::testing::verl_row("1+1=", "2", 0),
                                        rlwb::testing::verl_row("2+2=", "4", 1)};
    spoil(rows[1]);
    rlwb::testing::write_jsonl(dir.file("rows.jsonl"), rows);
    return error_of([&] { verl_rows(read_dataset_file(dir.file("rows.jsonl")), key); });
  };
  const std::string at = dir.file("rows.jsonl") + " line 2";
  EXPECT_THAT(error_for([](auto& r) { r.erase("prompt"); }),
              AllOf(HasSubstr(at), HasSubstr("column 'prompt': missing"),
                    HasSubstr("ability, data_source, extra_info"), HasSubstr("task.prompt_key")));
  EXPECT_THAT(error_for([](auto& r) {}, "question"),
              AllOf(HasSubstr(dir.file("rows.jsonl") + " line 1"), HasSubstr("column 'question': missing")));
  EXPECT_THAT(error_for([](auto& r) { r["prompt"] = 42; }), AllOf(HasSubstr(at), HasSubstr("is 42")));
  EXPECT_THAT(error_for([](auto& r) { r["prompt"][0].erase("content"); }),
              AllOf(HasSubstr(at), HasSubstr("message 1"), HasSubstr("{role: text, content: text}")));
  EXPECT_THAT(error_for([](auto& r) { r["data_source"] = 3; }),
              AllOf(HasSubstr(at), HasSubstr("column 'data_source'"), HasSubstr("not text")));
  EXPECT_THAT(error_for([](auto& r) { r["reward_model"].erase("ground_truth"); }),
              AllOf(HasSubstr(at), HasSubstr("column 'reward_model.ground_truth': missing")));
  EXPECT_THAT(error_for([](auto& r) { r["reward_model"] = "5"; }),
              AllOf(HasSubstr(at), HasSubstr("column 'reward_model'"), HasSubstr("not a struct")));
}

}  // namespace
