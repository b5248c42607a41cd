// The tensor intrinsics tensorize knows.
#include "compiler/schedule/TensorIntrinsic.h"

#include "core/ir/IROperators.h"

namespace tessel {

namespace {
constexpr const char* kAttrPrefix = "tensorize_";

TensorIntrinsic integerDot(int64_t lanes) {
  TensorIntrinsic intrinsic;
  intrinsic.name = "dot_" + std::to_string(lanes) + "x4_u8i8";
  intrinsic.summary = std::to_string(lanes) +
                      " int32 sums, each += 4 uint8 x int8 products (x86 vpdpbusd; vpmaddubsw + "
                      "vpmaddwd without VNNI)";
  intrinsic.lanes = lanes;
  intrinsic.reduction = 4;
  return intrinsic;
}

TensorIntrinsic bfloat16Dot(int64_t lanes) {
  TensorIntrinsic intrinsic;
  intrinsic.name = "dot_" + std::to_string(lanes) + "x2_bf16";
  intrinsic.summary = std::to_string(lanes) +
                      " float32 sums, each += 2 bfloat16 x bfloat16 products (x86 vdpbf16ps; float32 "
                      "multiply-adds without AVX-512 BF16)";
  intrinsic.lanes = lanes;
  intrinsic.reduction = 2;
  intrinsic.dataType = DataType::bfloat16();
  intrinsic.weightType = DataType::bfloat16();
  intrinsic.accumulatorType = DataType::float32();
  intrinsic.instruction = Intrinsic::DotBF16;
  intrinsic.instructionSet = "avx512bf16";
  return intrinsic;
}
TensorIntrinsic integerTile() {
  TensorIntrinsic intrinsic;
  intrinsic.name = "tile_u8i8";
  intrinsic.summary =
      "int32 tiles of up to 16 rows x 16 columns += uint8 x int8 products over a whole reduction, 64 per "
      "output and instruction (x86 AMX tdpbusd; the plain loops without AMX)";
  intrinsic.lanes = 16;
  intrinsic.reduction = 64;
  intrinsic.instructionSet = "amx-int8";
  intrinsic.wholeReduction = true;
  return intrinsic;
}
}  // namespace

std::vector<te::Tensor> TensorIntrinsic::declaration() const {
  if (wholeReduction) {
    // One instruction's tile: out[i, j] = sum over k of data[i, k] * weight[k / 4, j, k % 4].
    te::Tensor data = te::placeholder({Expr(int64_t(16)), Expr(reduction)}, dataType, "data");
    te::Tensor weight =
        te::placeholder({Expr(reduction / 4), Expr(lanes), Expr(int64_t(4))}, weightType, "weight");
    IterVar k = te::reduceAxis(Expr(reduction), "k");
    te::Tensor out = te::compute(
        {Expr(int64_t(16)), Expr(lanes)},
        [&](const std::vector<Var>& at) {
          return te::sum(cast(accumulatorType, data(at[0], k)) *
                             cast(accumulatorType, weight(floordiv(Expr(k), Expr(int64_t(4))), at[1],
                                                          floormod(Expr(k), Expr(int64_t(4))))),
                         {k});
        },
        "out", {"i", "j"});
    return {data, weight, out};
  }
  te::Tensor data = te::placeholder({Expr(reduction)}, dataType, "data");
  te::Tensor weight = te::placeholder({Expr(lanes), Expr(reduction)}, weightType, "weight");
  IterVar k = te::reduceAxis(Expr(reduction), "k");
  te::Tensor out = te::compute(
      {Expr(lanes)},
      [&](const std::vector<Var>& at) {
        return te::sum(cast(accumulatorType, data(k)) * cast(accumulatorType, weight(at[0], k)),
                       {k});
      },
      "out", {"i"});
  return {data, weight, out};
}

const std::vector<TensorIntrinsic>& tensorIntrinsics() {
  // 16 lanes fill a 512-bit register, 8 a 256-bit one.
  static const std::vector<TensorIntrinsic> all = {integerDot(16), integerDot(8), bfloat16Dot(16), bfloat16Dot(8),
                                                   integerTile()};
  return all;
}

const TensorIntrinsic* findTensorIntrinsic(const std::string& name) {
  for (auto& intrinsic : tensorIntrinsics())
    if (intrinsic.name == name) return &intrinsic;
  return nullptr;
}

std::string tensorIntrinsicNames() {
  std::string names;
  for (auto& intrinsic : tensorIntrinsics()) names += (names.empty() ? "" : ", ") + intrinsic.name;
  return names;
}

std::string tensorizeAttrKey(const TensorIntrinsic& intrinsic) { return kAttrPrefix + intrinsic.name; }

const TensorIntrinsic* tensorIntrinsicOfAttr(const std::string& key) {
  if (key.rfind(kAttrPrefix, 0) != 0) return nullptr;
  return findTensorIntrinsic(key.substr(std::string(kAttrPrefix).size()));
}

}  // namespace tessel
