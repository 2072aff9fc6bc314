// Batch: columns, the row invariant and every row operation, including the
// error each misuse gives.
#include "core/batch/batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <limits>

namespace rlwb::core {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// A batch of `n` rows: ids = 0..n-1 (int64), x = [[10i, 10i+1]] (float),
// text = "row i" objects, meta {"temperature": 0.7}.
Batch make_batch(int64_t n) {
  Batch b;
  b.set_tensor("ids", torch::arange(n, torch::kInt64));
  b.set_tensor("x", torch::arange(2 * n, torch::kFloat32).reshape({n, 2}) +
                        torch::arange(n, torch::kFloat32).reshape({n, 1}) * 8);
  std::vector<Json> text;
  for (int64_t i = 0; i < n; ++i) text.push_back("row " + std::to_string(i));
  b.set_objects("text", text);
  b.meta()["temperature"] = 0.7;
  return b;
}

std::vector<int64_t> ids_of(const Batch& b) {
  torch::Tensor ids = b.tensor("ids").contiguous();
  return {ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel()};
}

// The object column "text" must name the same rows as the tensor "ids",
// and "x" must hold row i's values: the columns moved together.
void expect_rows_consistent(const Batch& b) {
  std::vector<int64_t> ids = ids_of(b);
  ASSERT_EQ(b.objects("text").size(), ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    EXPECT_EQ(b.objects("text")[r], "row " + std::to_string(ids[r]));
    EXPECT_EQ(b.tensor("x")[r][0].item<float>(), 10.0f * ids[r]);
    EXPECT_EQ(b.tensor("x")[r][1].item<float>(), 10.0f * ids[r] + 1);
  }
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const BatchError& e) {
    return e.what();
  }
  return "<no BatchError thrown>";
}

TEST(BatchColumns, EmptyBatchHasZeroRowsAndNoColumns) {
  Batch b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.rows(), 0);
  EXPECT_TRUE(b.column_names().empty());
  EXPECT_TRUE(b.meta().is_object());
}

TEST(BatchColumns, RowsComeFromTensorOrObjectColumns) {
  Batch t;
  t.set_tensor("a", torch::zeros({3, 4}));
  EXPECT_EQ(t.rows(), 3);
  Batch o;
  o.set_objects("p", {Json("x"), Json(1)});
  EXPECT_EQ(o.rows(), 2);
}

TEST(BatchColumns, ColumnNamesAreSortedAcrossKinds) {
  Batch b = make_batch(2);
  EXPECT_EQ(b.column_names(), (std::vector<std::string>{"ids", "text", "x"}));
  EXPECT_TRUE(b.has("text"));
  EXPECT_TRUE(b.has_tensor("x"));
  EXPECT_FALSE(b.has_tensor("text"));
  EXPECT_TRUE(b.has_objects("text"));
  EXPECT_FALSE(b.has("nope"));
}

TEST(BatchColumns, SetTensorWithOtherRowCountNamesBothColumns) {
  Batch b = make_batch(3);
  std::string msg = error_of([&] { b.set_tensor("y", torch::zeros({4})); });
  EXPECT_THAT(msg, HasSubstr("'y' has 4 rows"));
  EXPECT_THAT(msg, HasSubstr("has 3"));
  msg = error_of([&] { b.set_objects("o", std::vector<Json>(2, Json(1))); });
  EXPECT_THAT(msg, HasSubstr("'o' has 2 rows"));
}

TEST(BatchColumns, ReplacingTheOnlyColumnMayChangeRows) {
  Batch b;
  b.set_tensor("a", torch::zeros({3}));
  b.set_tensor("a", torch::zeros({5}));
  EXPECT_EQ(b.rows(), 5);
}

TEST(BatchColumns, ZeroDimTensorIsRejectedWithAdvice) {
  Batch b;
  std::string msg = error_of([&] { b.set_tensor("s", torch::tensor(1.5)); });
  EXPECT_THAT(msg, HasSubstr("0-dim"));
  EXPECT_THAT(msg, HasSubstr("meta()"));
}

TEST(BatchColumns, UndefinedQuantizedAndSparseTensorsAreRejected) {
  Batch b;
  EXPECT_THAT(error_of([&] { b.set_tensor("u", torch::Tensor()); }), HasSubstr("undefined"));
  torch::Tensor q = torch::quantize_per_tensor(torch::ones({2}), 0.1, 0, torch::kQInt8);
  EXPECT_THAT(error_of([&] { b.set_tensor("q", q); }), HasSubstr("quantized"));
  EXPECT_THAT(error_of([&] { b.set_tensor("s", torch::eye(3).to_sparse()); }), HasSubstr("to_dense"));
  EXPECT_THAT(error_of([&] { b.set_tensor("", torch::ones({1})); }), HasSubstr("non-empty name"));
}

TEST(BatchColumns, ANameIsEitherTensorOrObjects) {
  Batch b = make_batch(2);
  EXPECT_THAT(error_of([&] { b.set_tensor("text", torch::zeros({2})); }),
              HasSubstr("already an object column"));
  EXPECT_THAT(error_of([&] {
                b.set_objects("x", {Json(1), Json(2)});
              }),
              HasSubstr("already a tensor column"));
}

TEST(BatchColumns, MissingColumnErrorsSayWhatExists) {
  Batch b = make_batch(2);
  EXPECT_THAT(error_of([&] { b.tensor("y"); }), HasSubstr("tensor columns: ids, x"));
  EXPECT_THAT(error_of([&] { b.tensor("text"); }), HasSubstr("use objects()"));
  EXPECT_THAT(error_of([&] { b.objects("x"); }), HasSubstr("use tensor()"));
  EXPECT_THAT(error_of([&] { b.objects("y"); }), HasSubstr("object columns: text"));
}

TEST(BatchColumns, EraseRemovesAColumnAndThrowsWhenAbsent) {
  Batch b = make_batch(2);
  b.erase("text");
  EXPECT_FALSE(b.has("text"));
  b.erase("x");
  EXPECT_EQ(b.column_names(), std::vector<std::string>{"ids"});
  EXPECT_THAT(error_of([&] { b.erase("text"); }), HasSubstr("no column 'text'"));
}

TEST(BatchSelect, KeepsOnlyNamedColumnsAndMeta) {
  Batch b = make_batch(3);
  Batch s = b.select({"text", "ids"});
  EXPECT_EQ(s.column_names(), (std::vector<std::string>{"ids", "text"}));
  EXPECT_EQ(s.meta()["temperature"], 0.7);
  EXPECT_EQ(ids_of(s), (std::vector<int64_t>{0, 1, 2}));
}

TEST(BatchSelect, MissingColumnIsNamed) {
  Batch b = make_batch(3);
  EXPECT_THAT(error_of([&] {
                b.select({"ids", "responses"});
              }),
              HasSubstr("no column 'responses' (columns: ids, text, x)"));
}

// A controller passes columns from node to node: sharing hands over the same
// data, for object columns as for tensors, and a later set_objects on one
// batch leaves the other's column as it was.
TEST(BatchShareColumn, SharesTheDataUnderANewNameAndKeepsTheOtherBatchApart) {
  Batch b = make_batch(3);
  Batch to;
  to.share_column(b, "text", "prompts");
  to.share_column(b, "ids", "ids");
  EXPECT_EQ(&to.objects("prompts"), &b.objects("text"));
  EXPECT_EQ(to.tensor("ids").data_ptr(), b.tensor("ids").data_ptr());
  Batch copy = b;
  EXPECT_EQ(&copy.objects("text"), &b.objects("text"));
  to.set_objects("prompts", {Json("a"), Json("b"), Json("c")});
  EXPECT_EQ(b.objects("text")[0], "row 0");
  EXPECT_EQ(copy.objects("text")[0], "row 0");
  EXPECT_EQ(to.objects("prompts")[0], "a");
}

TEST(BatchShareColumn, MissingColumnRowMismatchAndKindClashAreNamed) {
  Batch b = make_batch(3);
  Batch to;
  EXPECT_THAT(error_of([&] { to.share_column(b, "responses", "r"); }),
              HasSubstr("no column 'responses' to share (columns: ids, x; text)"));
  to.set_tensor("ids", torch::arange(2));
  EXPECT_THAT(error_of([&] { to.share_column(b, "text", "t"); }),
              HasSubstr("column 't' has 3 rows but column 'ids' has 2"));
  Batch t3;
  t3.set_tensor("text", torch::arange(3));
  EXPECT_THAT(error_of([&] { t3.share_column(b, "text", "text"); }),
              HasSubstr("'text' is already a tensor column"));
}

TEST(BatchSlice, ReturnsViewsOfTheRows) {
  Batch b = make_batch(5);
  Batch s = b.slice(1, 4);
  EXPECT_EQ(s.rows(), 3);
  EXPECT_EQ(ids_of(s), (std::vector<int64_t>{1, 2, 3}));
  expect_rows_consistent(s);
  // A view: writing through the slice shows in the original.
  s.tensor("ids").fill_(42);
  EXPECT_EQ(b.tensor("ids")[2].item<int64_t>(), 42);
  EXPECT_EQ(b.tensor("ids")[0].item<int64_t>(), 0);
}

TEST(BatchSlice, EmptyRangeGivesZeroRows) {
  Batch s = make_batch(3).slice(3, 3);
  EXPECT_EQ(s.rows(), 0);
  EXPECT_EQ(s.tensor("x").sizes(), (std::vector<int64_t>{0, 2}));
}

TEST(BatchSlice, OutOfRangeThrows) {
  Batch b = make_batch(3);
  EXPECT_THAT(error_of([&] { b.slice(2, 5); }), HasSubstr("outside the batch's 3 rows"));
  EXPECT_THAT(error_of([&] { b.slice(-1, 2); }), HasSubstr("0 <= begin <= end"));
  EXPECT_THAT(error_of([&] { b.slice(2, 1); }), HasSubstr("0 <= begin <= end"));
}

TEST(BatchChunk, EvenSplitKeepsOrderAndReportsNoPadding) {
  Batch b = make_batch(6);
  int64_t padded = -1;
  std::vector<Batch> parts = b.chunk(3, false, &padded);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(padded, 0);
  EXPECT_EQ(ids_of(parts[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ids_of(parts[2]), (std::vector<int64_t>{4, 5}));
  for (const auto& p : parts) {
    expect_rows_consistent(p);
    EXPECT_EQ(p.meta()["temperature"], 0.7);
  }
}

TEST(BatchChunk, UnevenSplitWithoutPaddingThrowsWithAdvice) {
  Batch b = make_batch(5);
  std::string msg = error_of([&] { b.chunk(2); });
  EXPECT_THAT(msg, HasSubstr("5 rows do not split into 2"));
  EXPECT_THAT(msg, HasSubstr("pad=true"));
  EXPECT_THAT(error_of([&] { b.chunk(0); }), HasSubstr("n must be >= 1"));
}

TEST(BatchChunk, PaddingRepeatsLeadingRowsAndReportsTheCount) {
  Batch b = make_batch(5);
  int64_t padded = -1;
  std::vector<Batch> parts = b.chunk(4, true, &padded);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(padded, 3);  // 4 parts of 2 rows = 8 rows = 5 + 3
  EXPECT_EQ(ids_of(parts[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ids_of(parts[2]), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(ids_of(parts[3]), (std::vector<int64_t>{1, 2}));
  for (const auto& p : parts) expect_rows_consistent(p);
  // Concatenating and dropping the padded rows gives back the batch.
  Batch back = Batch::concat(parts);
  EXPECT_TRUE(back.slice(0, back.rows() - padded).equals(b));
}

TEST(BatchChunk, PaddingCyclesWhenThereAreMorePartsThanRows) {
  Batch b = make_batch(2);
  int64_t padded = -1;
  std::vector<Batch> parts = b.chunk(5, true, &padded);
  EXPECT_EQ(padded, 3);
  std::vector<int64_t> seen;
  for (const auto& p : parts) {
    ASSERT_EQ(p.rows(), 1);
    seen.push_back(ids_of(p)[0]);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 0, 1, 0}));
}

TEST(BatchChunk, ZeroRowsSplitIntoEmptyParts) {
  std::vector<Batch> parts = make_batch(0).chunk(3, true);
  ASSERT_EQ(parts.size(), 3u);
  for (const auto& p : parts) EXPECT_EQ(p.rows(), 0);
}

TEST(BatchConcat, JoinsRowsInOrderAndTakesMetaFromTheFirst) {
  Batch a = make_batch(3);
  Batch b = make_batch(5).slice(3, 5);
  b.meta()["temperature"] = 1.0;
  Batch c = Batch::concat({a, b});
  EXPECT_EQ(ids_of(c), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  expect_rows_consistent(c);
  EXPECT_EQ(c.meta()["temperature"], 0.7);
}

TEST(BatchConcat, MismatchesNameThePartAndColumn) {
  Batch a = make_batch(2);
  Batch missing = make_batch(2);
  missing.erase("text");
  EXPECT_THAT(error_of([&] { Batch::concat({a, missing}); }), HasSubstr("part 1 has columns (ids, x; none)"));
  Batch dtype = make_batch(2);
  dtype.set_tensor("x", dtype.tensor("x").to(torch::kFloat64));
  EXPECT_THAT(error_of([&] {
                Batch::concat({a, dtype});
              }),
              HasSubstr("column 'x' in part 1 has dtype Double but part 0 has Float"));
  Batch shape = make_batch(2);
  shape.set_tensor("x", torch::zeros({2, 3}));
  EXPECT_THAT(error_of([&] { Batch::concat({a, shape}); }), HasSubstr("rows of shape [3]"));
  Batch kind = make_batch(2);
  kind.erase("x");
  kind.set_objects("x", {Json(1), Json(2)});
  EXPECT_THAT(error_of([&] { Batch::concat({a, kind}); }), HasSubstr("'x' is a tensor in part 0"));
  EXPECT_THAT(error_of([] { Batch::concat({}); }), HasSubstr("no parts"));
}

TEST(BatchUnion, AddsNewColumnsAndMergesMeta) {
  Batch a = make_batch(3).select({"ids"});
  Batch b = make_batch(3).select({"x", "text"});
  b.meta()["eos"] = 2;
  a.union_with(b);
  EXPECT_EQ(a.column_names(), (std::vector<std::string>{"ids", "text", "x"}));
  EXPECT_EQ(a.meta()["eos"], 2);
  expect_rows_consistent(a);
}

TEST(BatchUnion, EqualSharedColumnIsAccepted) {
  Batch a = make_batch(3);
  a.union_with(make_batch(3));
  EXPECT_TRUE(a.equals(make_batch(3)));
}

TEST(BatchUnion, DifferentSharedColumnIsAnErrorNamingIt) {
  Batch a = make_batch(3);
  Batch b = make_batch(3);
  b.set_tensor("x", b.tensor("x") + 1);
  std::string msg = error_of([&] { a.union_with(b); });
  EXPECT_THAT(msg, HasSubstr("column 'x' has different values"));
  // Nothing was changed by the failed union.
  EXPECT_TRUE(a.equals(make_batch(3)));

  Batch c = make_batch(3);
  c.set_tensor("x", c.tensor("x").to(torch::kFloat64));
  EXPECT_THAT(error_of([&] { a.union_with(c); }), HasSubstr("column 'x' differs: Float[3, 2]"));

  Batch d = make_batch(3);
  d.set_objects("text", {Json("a"), Json("b"), Json("c")});
  EXPECT_THAT(error_of([&] { a.union_with(d); }), HasSubstr("object column 'text'"));

  Batch e = make_batch(3);
  e.meta()["temperature"] = 1.0;
  EXPECT_THAT(error_of([&] { a.union_with(e); }), HasSubstr("meta key 'temperature' is 0.7"));
}

TEST(BatchUnion, RowCountAndKindConflictsThrow) {
  Batch a = make_batch(3);
  EXPECT_THAT(error_of([&] { a.union_with(make_batch(2).select({"ids"})); }),
              HasSubstr("2 rows but this one has 3"));
  Batch kind;
  kind.set_objects("x", {Json(1), Json(2), Json(3)});
  EXPECT_THAT(error_of([&] { a.union_with(kind); }), HasSubstr("'x' is a tensor here"));
}

TEST(BatchUnion, NanInBothSidesCountsAsEqual) {
  Batch a;
  a.set_tensor("v", torch::tensor({1.0f, std::numeric_limits<float>::quiet_NaN()}));
  Batch b = a;
  b.set_tensor("v", a.tensor("v").clone());
  EXPECT_NO_THROW(a.union_with(b));
}

TEST(BatchRepeat, InterleaveRepeatsEachRowInPlace) {
  Batch r = make_batch(3).repeat(2, true);
  EXPECT_EQ(ids_of(r), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  expect_rows_consistent(r);
}

TEST(BatchRepeat, WithoutInterleaveRepeatsTheWholeBatch) {
  Batch r = make_batch(3).repeat(2, false);
  EXPECT_EQ(ids_of(r), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  expect_rows_consistent(r);
}

TEST(BatchRepeat, NonPositiveCountThrows) {
  EXPECT_THAT(error_of([] { make_batch(2).repeat(0); }), HasSubstr("n >= 1"));
}

TEST(BatchReorder, FollowsTheIndexIncludingRepeats) {
  Batch r = make_batch(4).reorder({3, 0, 0, 2});
  EXPECT_EQ(ids_of(r), (std::vector<int64_t>{3, 0, 0, 2}));
  expect_rows_consistent(r);
  EXPECT_EQ(r.meta()["temperature"], 0.7);
}

TEST(BatchReorder, OutOfRangeIndexIsNamed) {
  EXPECT_THAT(error_of([] {
                make_batch(4).reorder({0, 4});
              }),
              HasSubstr("index[1] = 4 is not a row of this 4-row batch"));
  EXPECT_THAT(error_of([] { make_batch(4).reorder({-1}); }), HasSubstr("index[0] = -1"));
}

TEST(BatchTo, MovesTensorsAndKeepsObjects) {
  Batch b = make_batch(3);
  Batch c = b.to(torch::kCPU);
  EXPECT_TRUE(c.equals(b));
  if (torch::cuda::is_available()) {
    Batch g = b.to(torch::kCUDA);
    EXPECT_TRUE(g.tensor("x").is_cuda());
    EXPECT_TRUE(g.to(torch::kCPU).equals(b));
  }
}

// Row operations must move the bytes of every dtype unchanged, including the
// ones whose index_select/cat LibTorch does not implement.
TEST(BatchDtypes, RowOperationsWorkForExoticDtypes) {
  for (torch::ScalarType type :
       {torch::kBool, torch::kBFloat16, torch::kHalf, torch::kComplexHalf, torch::kComplexDouble,
        torch::kFloat8_e4m3fn, torch::kFloat8_e5m2, torch::kFloat8_e8m0fnu, torch::kUInt16, torch::kUInt64,
        torch::kBits8, torch::kBits16, torch::kUInt4, torch::kInt3, torch::kFloat4_e2m1fn_x2}) {
    SCOPED_TRACE(c10::toString(type));
    const int64_t item = static_cast<int64_t>(c10::elementSize(type));
    torch::Tensor bytes = torch::arange(4 * 3 * item, torch::kInt64).remainder(251).to(torch::kUInt8);
    torch::Tensor t = bytes.view({4, 3 * item}).view(type);  // shape {4, 3}
    Batch b;
    b.set_tensor("t", t);
    Batch r = b.repeat(2, false).reorder({4, 1}).slice(0, 2);  // rows 0 and 1
    Batch c = Batch::concat(r.chunk(2));
    ASSERT_EQ(c.tensor("t").scalar_type(), type);
    torch::Tensor got = c.tensor("t").view(torch::kUInt8);
    torch::Tensor want = bytes.view({4, 3 * item}).index_select(0, torch::tensor({0, 1}));
    EXPECT_TRUE(got.equal(want));
    EXPECT_TRUE(c.equals(b.slice(0, 2)));
  }
}

TEST(BatchEquals, DetectsEachKindOfDifference) {
  Batch a = make_batch(2);
  EXPECT_TRUE(a.equals(make_batch(2)));
  Batch m = make_batch(2);
  m.meta()["k"] = 1;
  EXPECT_FALSE(a.equals(m));
  Batch o = make_batch(2);
  o.set_objects("text", {Json("row 0"), Json("row 9")});
  EXPECT_FALSE(a.equals(o));
  Batch t = make_batch(2);
  t.set_tensor("ids", torch::tensor({0, 2}, torch::kInt64));
  EXPECT_FALSE(a.equals(t));
  Batch same_text;  // the same values in a column of its own: equal
  same_text.set_objects("text", {Json("row 0"), Json("row 1")});
  Batch shared;
  shared.share_column(a, "text", "text");
  EXPECT_TRUE(same_text.equals(shared));
  Batch other_text;
  other_text.set_objects("text", {Json("row 0"), Json("row 9")});
  EXPECT_FALSE(same_text.equals(other_text));
}

}  // namespace
}  // namespace rlwb::core
