// Branch-free float32 polynomial kernels for exp, log, tanh, erf, sigmoid, sin and cos, as LLVM IR.
//
// Coefficients are weighted minimax (Remez exchange) fits computed for this file, rounded
// to float32; the comment above each table names the function fitted, the interval and the
// resulting error bound before float32 evaluation.
#include "compiler/codegen/llvm/VectorMath.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "core/support/Error.h"

namespace tessel {

namespace {

// exp(r) = 1 + r + r^2 * P(r) on |r| <= ln(2)/2; relative error 3.8e-9.
constexpr float kExpCoefficients[] = {0.49999994f, 0.166665211f, 0.041668389f, 0.00836871006f, 0.00138146128f};

// log(1 + f) = f + f^2 * P(f) on |f| <= 1/3; relative error 2.8e-8.
constexpr float kLogCoefficients[] = {-0.499999344f, 0.333331943f, -0.250079721f, 0.200113878f,
                                      -0.164126322f, 0.139919207f, -0.154086098f, 0.140468881f};

// tanh(x) = x + x^3 * P(x^2) on |x| <= 0.625; relative error 8.6e-9.
constexpr float kTanhCoefficients[] = {-0.333332807f, 0.133314416f, -0.0537397154f, 0.020639088f, -0.00570498686f};
/// Below this |x|, 1 - 2 / (exp(2|x|) + 1) would lose bits to cancellation.
constexpr float kTanhPolynomialBound = 0.625f;

// erf(x) = x * P(x^2) on |x| <= 1; relative error 6.1e-8.
constexpr float kErfSmallCoefficients[] = {1.12837911f,  -0.376123548f,  0.112804115f,
                                           -0.0267177075f, 0.00492479f, -0.00056601566f};
// erfc(x) = exp(P(x)) on 1 <= x <= 4, weighted by erfc so that erf is within 1.3e-8.
constexpr float kErfcLogCoefficients[] = {0.000188036458f, -1.12957835f,  -0.633219898f,  -0.108418547f,
                                          0.0252082385f,   -0.00420455541f, 0.000441335113f, -2.16867484e-05f};
constexpr float kErfPolynomialBound = 1.0f;
/// erf(x) rounds to 1 in float32 from about 3.9 on; clamping keeps exp's argument finite.
constexpr float kErfSaturation = 4.0f;

// sin(r) = r + r^3 * P(r^2) on |r| <= pi/4; relative error 8.3e-9.
constexpr float kSinCoefficients[] = {-0.166666552f, 0.0083321603f, -0.000195152825f};
// cos(r) = 1 - r^2/2 + r^4 * P(r^2) on |r| <= pi/4; relative error 1.7e-10.
constexpr float kCosCoefficients[] = {0.0416666456f, -0.00138873165f, 2.44331568e-05f};
// pi/2 in three parts; the first two have at most 11 significant bits, so q times them is
// exact for |q| < 2^13, which kFloat32TrigonometricLimit guarantees.
constexpr float kHalfPiHigh = 1.5703125f;
constexpr float kHalfPiMiddle = 4.837512969970703125e-4f;
constexpr float kHalfPiLow = 7.549790126404332e-08f;

/// Emits one kernel for one value type (float or a vector of floats), with constants and
/// integer views of the same shape.
class Float32MathEmitter {
public:
  Float32MathEmitter(llvm::IRBuilderBase& builder, llvm::Type* type)
      : builder_(builder), type_(type), intType_(withLanesOf(builder.getInt32Ty(), type)) {
    TESSEL_ICHECK(type->getScalarType()->isFloatTy()) << "float32 math kernel on a non-float32 value";
  }

  /// exp by Cody-Waite reduction: x = n ln2 + r with |r| <= ln2/2, exp(x) = 2^n exp(r).
  llvm::Value* exp(llvm::Value* x) {
    // Past these bounds the result is inf or 0 anyway; clamping keeps n small enough for
    // the integer exponent arithmetic. Ordered compares leave NaN in place to propagate.
    llvm::Value* clamped = builder_.CreateSelect(builder_.CreateFCmpOGT(x, constant(89.0f)), constant(89.0f), x);
    clamped = builder_.CreateSelect(builder_.CreateFCmpOLT(clamped, constant(-104.0f)), constant(-104.0f), clamped);
    // Adding 1.5 * 2^23 rounds x / ln2 to an integer held in the low mantissa bits, with no
    // float-to-int conversion (which would be poison for NaN).
    const float shifter = 12582912.0f;
    llvm::Value* shifted = mulAdd(clamped, constant(1.44269504f), constant(shifter));
    llvm::Value* n = builder_.CreateFSub(shifted, constant(shifter));
    // ln2 in two parts; the high part has few bits, so n * high is exact.
    llvm::Value* r = mulAdd(n, constant(-0.693359375f), clamped);
    r = mulAdd(n, constant(2.12194440e-4f), r);
    llvm::Value* tail = mulAdd(builder_.CreateFMul(r, r), polynomial(r, kExpCoefficients), r);
    llvm::Value* expR = builder_.CreateFAdd(constant(1.0f), tail);
    // 2^n as two factors 2^(n/2) * 2^(n - n/2): each stays a normal float for n in
    // [-150, 128], so results near overflow and in the subnormal range come out right.
    llvm::Value* integerN =
        builder_.CreateSub(builder_.CreateBitCast(shifted, intType_), intConstant(floatBits(shifter)));
    llvm::Value* halfN = builder_.CreateAShr(integerN, intConstant(1));
    llvm::Value* restN = builder_.CreateSub(integerN, halfN);
    return builder_.CreateFMul(builder_.CreateFMul(expR, powerOfTwo(halfN)), powerOfTwo(restN));
  }

  /// log by splitting x = 2^e * m with m in [2/3, 4/3): log(x) = e ln2 + log(1 + f), f = m - 1.
  llvm::Value* log(llvm::Value* x) {
    // Subnormal inputs are scaled into the normal range first.
    llvm::Value* tiny = builder_.CreateFCmpOLT(x, constant(0x1p-126f));
    llvm::Value* normal = builder_.CreateSelect(tiny, builder_.CreateFMul(x, constant(0x1p23f)), x);
    llvm::Value* bits = builder_.CreateBitCast(normal, intType_);
    // Subtracting the bits of 2/3 makes the exponent field count from m = 2/3 rather than 1.
    llvm::Value* offset = builder_.CreateSub(bits, intConstant(0x3f2aaaab));
    llvm::Value* exponent = builder_.CreateAShr(offset, intConstant(23));
    exponent = builder_.CreateAdd(exponent, builder_.CreateSelect(tiny, intConstant(-23), intConstant(0)));
    llvm::Value* mantissaBits = builder_.CreateSub(bits, builder_.CreateAnd(offset, intConstant(int32_t(0xff800000u))));
    llvm::Value* f = builder_.CreateFSub(builder_.CreateBitCast(mantissaBits, type_), constant(1.0f));
    llvm::Value* e = builder_.CreateSIToFP(exponent, type_);
    // The small terms first, then f, then the exact e * ln2_high: f alone carries log near 1.
    llvm::Value* small = mulAdd(builder_.CreateFMul(f, f), polynomial(f, kLogCoefficients),
                                builder_.CreateFMul(e, constant(-2.12194440e-4f)));
    llvm::Value* result = mulAdd(e, constant(0.693359375f), builder_.CreateFAdd(f, small));
    const float infinity = std::numeric_limits<float>::infinity();
    result = builder_.CreateSelect(builder_.CreateFCmpOEQ(x, constant(infinity)), constant(infinity), result);
    result = builder_.CreateSelect(builder_.CreateFCmpOEQ(x, constant(0.0f)), constant(-infinity), result);
    // Negative or NaN: NaN ('ult' is true for unordered operands).
    return builder_.CreateSelect(builder_.CreateFCmpULT(x, constant(0.0f)), constant(std::numeric_limits<float>::quiet_NaN()), result);
  }

  /// tanh: an odd polynomial near 0, 1 - 2 / (exp(2|x|) + 1) elsewhere, computed for |x|
  /// and given x's sign at the end (so tanh(-0) = -0).
  llvm::Value* tanh(llvm::Value* x) {
    llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* square = builder_.CreateFMul(x, x);
    llvm::Value* nearZero =
        mulAdd(builder_.CreateFMul(magnitude, square), polynomial(square, kTanhCoefficients), magnitude);
    // exp overflows to inf for large |x|, giving exactly 1.
    llvm::Value* growth = exp(builder_.CreateFMul(magnitude, constant(2.0f)));
    llvm::Value* farFromZero = builder_.CreateFSub(
        constant(1.0f), builder_.CreateFDiv(constant(2.0f), builder_.CreateFAdd(growth, constant(1.0f))));
    // NaN fails the ordered compare and takes the exp branch, which propagates it.
    llvm::Value* result = builder_.CreateSelect(builder_.CreateFCmpOLT(magnitude, constant(kTanhPolynomialBound)),
                                                nearZero, farFromZero);
    return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, result, x);
  }

  /// erf: x * P(x^2) near 0; 1 - exp(Q(|x|)) with x's sign elsewhere (Q fits log erfc).
  llvm::Value* erf(llvm::Value* x) {
    llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* nearZero = builder_.CreateFMul(x, polynomial(builder_.CreateFMul(x, x), kErfSmallCoefficients));
    llvm::Value* clamped = builder_.CreateSelect(builder_.CreateFCmpOGT(magnitude, constant(kErfSaturation)),
                                                 constant(kErfSaturation), magnitude);
    llvm::Value* complement = exp(polynomial(clamped, kErfcLogCoefficients));
    llvm::Value* farFromZero = builder_.CreateFSub(constant(1.0f), complement);
    farFromZero = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, farFromZero, x);
    return builder_.CreateSelect(builder_.CreateFCmpOLT(magnitude, constant(kErfPolynomialBound)), nearZero,
                                 farFromZero);
  }

  /// 1 / (1 + exp(-x)): exp(-x) overflows to inf for very negative x, giving exactly 0.
  llvm::Value* sigmoid(llvm::Value* x) {
    llvm::Value* decay = exp(builder_.CreateFNeg(x));
    return builder_.CreateFDiv(constant(1.0f), builder_.CreateFAdd(constant(1.0f), decay));
  }

  /// sin or cos by reduction to r = x - q pi/2 with |r| <= pi/4; q's low two bits pick
  /// the polynomial and the sign. Accurate for |x| <= kFloat32TrigonometricLimit.
  llvm::Value* sinOrCos(llvm::Value* x, bool cosine) {
    const float shifter = 12582912.0f;  // as in exp: rounds to an integer in the low bits
    llvm::Value* shifted = mulAdd(x, constant(0.636619772f), constant(shifter));
    llvm::Value* q = builder_.CreateFSub(shifted, constant(shifter));
    llvm::Value* r = mulAdd(q, constant(-kHalfPiHigh), x);
    r = mulAdd(q, constant(-kHalfPiMiddle), r);
    r = mulAdd(q, constant(-kHalfPiLow), r);
    llvm::Value* quadrant = builder_.CreateSub(builder_.CreateBitCast(shifted, intType_), intConstant(floatBits(shifter)));
    if (cosine) quadrant = builder_.CreateAdd(quadrant, intConstant(1));  // cos(x) = sin(x + pi/2)
    llvm::Value* square = builder_.CreateFMul(r, r);
    llvm::Value* sine = mulAdd(builder_.CreateFMul(r, square), polynomial(square, kSinCoefficients), r);
    llvm::Value* cosineNearZero = mulAdd(builder_.CreateFMul(square, square), polynomial(square, kCosCoefficients),
                                         mulAdd(square, constant(-0.5f), constant(1.0f)));
    llvm::Value* odd = builder_.CreateICmpNE(builder_.CreateAnd(quadrant, intConstant(1)), intConstant(0));
    llvm::Value* value = builder_.CreateSelect(odd, cosineNearZero, sine);
    // Quadrants 2 and 3 negate: move bit 1 of the quadrant to the sign bit.
    llvm::Value* signBit = builder_.CreateShl(builder_.CreateAnd(quadrant, intConstant(2)), intConstant(30));
    value = builder_.CreateBitCast(builder_.CreateXor(builder_.CreateBitCast(value, intType_), signBit), type_);
    if (cosine) return value;
    // sin(-0) = -0, which r + r^3 P rounds to +0.
    return builder_.CreateSelect(builder_.CreateFCmpOEQ(x, constant(0.0f)), x, value);
  }

private:
  static llvm::Type* withLanesOf(llvm::Type* element, llvm::Type* shape) {
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(shape))
      return llvm::FixedVectorType::get(element, vector->getNumElements());
    return element;
  }

  static int32_t floatBits(float value) {
    int32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }

  llvm::Value* constant(float value) { return llvm::ConstantFP::get(type_, value); }
  llvm::Value* intConstant(int32_t value) { return llvm::ConstantInt::get(intType_, static_cast<uint64_t>(value), true); }

  /// a * b + c, fused where the target has FMA (llvm.fmuladd never becomes a libm call).
  llvm::Value* mulAdd(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return builder_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type_}, {a, b, c});
  }

  /// c[0] + c[1] t + c[2] t^2 + ... by Horner's rule.
  template <size_t N>
  llvm::Value* polynomial(llvm::Value* t, const float (&coefficients)[N]) {
    llvm::Value* sum = constant(coefficients[N - 1]);
    for (size_t k = N - 1; k-- > 0;) sum = mulAdd(sum, t, constant(coefficients[k]));
    return sum;
  }

  /// 2^n for integer n in [-126, 127], built from its exponent field.
  llvm::Value* powerOfTwo(llvm::Value* n) {
    llvm::Value* field = builder_.CreateShl(builder_.CreateAdd(n, intConstant(127)), intConstant(23));
    return builder_.CreateBitCast(field, type_);
  }

  llvm::IRBuilderBase& builder_;
  llvm::Type* type_;
  llvm::Type* intType_;
};

}  // namespace

llvm::Value* emitFloat32SinOrCos(llvm::IRBuilderBase& builder, llvm::Value* x, bool cosine) {
  return Float32MathEmitter(builder, x->getType()).sinOrCos(x, cosine);
}

bool hasFloat32MathKernel(Intrinsic op) {
  switch (op) {
    case Intrinsic::Exp:
    case Intrinsic::Log:
    case Intrinsic::Tanh:
    case Intrinsic::Erf:
    case Intrinsic::Sigmoid: return true;
    default: return false;
  }
}

llvm::Value* emitFloat32Math(llvm::IRBuilderBase& builder, Intrinsic op, llvm::Value* x) {
  Float32MathEmitter emitter(builder, x->getType());
  switch (op) {
    case Intrinsic::Exp: return emitter.exp(x);
    case Intrinsic::Log: return emitter.log(x);
    case Intrinsic::Tanh: return emitter.tanh(x);
    case Intrinsic::Erf: return emitter.erf(x);
    case Intrinsic::Sigmoid: return emitter.sigmoid(x);
    default: break;
  }
  TESSEL_ICHECK(false) << "no float32 math kernel for " << intrinsicName(op);
  return nullptr;
}

}  // namespace tessel
