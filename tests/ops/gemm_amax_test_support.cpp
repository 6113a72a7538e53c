#include "gemm_amax_test_support.hpp"

#include <cmath>
#include <cstring>
#include <optional>

#include "warpforge/ops/half.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

std::int64_t round_up(std::int64_t v, std::int64_t to) {
  return (v + to - 1) / to * to;
}
int element_bits(DType t) {
  return t == DType::e2m1 ? 4 : runtime::bits(t);
}

void set_element(std::vector<std::uint8_t>& bytes, DType t, std::int64_t element,
                 std::uint32_t code) {
  if (t == DType::e2m1) {
    auto& b = bytes[static_cast<std::size_t>(element / 2)];
    const int shift = 4 * static_cast<int>(element % 2);
    b = static_cast<std::uint8_t>((b & ~(0xF << shift)) | (code << shift));
  } else {
    bytes[static_cast<std::size_t>(element)] = static_cast<std::uint8_t>(code);
  }
}

// A matrix of rows × cols × l with the contiguous dimension padded to 16 bytes.
void lay_out(GemmAmaxTensor& t, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t l,
             bool cols_contiguous) {
  const std::int64_t align = 128 / element_bits(dtype);
  if (cols_contiguous) {
    const std::int64_t ld = round_up(cols, align);
    t.stride_row = ld, t.stride_col = 1, t.stride_batch = ld * rows;
  } else {
    const std::int64_t ld = round_up(rows, align);
    t.stride_row = 1, t.stride_col = ld, t.stride_batch = ld * cols;
  }
  t.bytes.assign(static_cast<std::size_t>((t.stride_batch * l * element_bits(dtype) + 7) / 8), 0);
}

void make_view(GemmAmaxTensor& t, const runtime::Device& device, DType dtype, std::int64_t rows,
               std::int64_t cols, std::int64_t l) {
  t.buffer = std::make_shared<runtime::Buffer>(device, t.bytes.size());
  if (dtype == DType::e2m1)
    t.view.emplace(*t.buffer, DType::u8, std::vector<std::int64_t>{rows, cols / 2, l},
                   std::vector<std::int64_t>{t.stride_row / 2, 1, t.stride_batch / 2});
  else
    t.view.emplace(*t.buffer, dtype, std::vector<std::int64_t>{rows, cols, l},
                   std::vector<std::int64_t>{t.stride_row, t.stride_col, t.stride_batch});
}

void make_data(GemmAmaxTensor& t, const runtime::Device& device, const GemmAmaxCase& c,
               std::int64_t rows, bool k_major, std::mt19937& rng) {
  lay_out(t, c.ab, rows, c.k, c.l, k_major);
  // Padding holds NaN (FP8) or 6 (FP4): a kernel that reads it shows.
  const std::uint8_t poison = c.ab == DType::e2m1 ? 0x77 : 0x7F;
  std::fill(t.bytes.begin(), t.bytes.end(), poison);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (std::int64_t l = 0; l < c.l; ++l)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t kk = 0; kk < c.k; ++kk)
        set_element(t.bytes, c.ab, r * t.stride_row + kk * t.stride_col + l * t.stride_batch,
                    encode(c.ab, u(rng)));
  make_view(t, device, c.ab, rows, c.k, c.l);
}

void make_scales(GemmAmaxTensor& t, const runtime::Device& device, const GemmAmaxCase& c,
                 std::int64_t rows, bool six_dimensional, std::mt19937& rng) {
  const ScaleFactorLayout layout{rows, c.k, c.l, c.vec};
  t.bytes.assign(static_cast<std::size_t>(layout.bytes()), 0);
  const std::uint8_t one = encode(c.sf, 1.0f), two = encode(c.sf, 2.0f);
  for (std::int64_t l = 0; l < c.l; ++l)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t kb = 0; kb < layout.k_blocks(); ++kb)
        t.bytes[static_cast<std::size_t>(layout.offset(r, kb, l))] = rng() % 2 ? one : two;
  t.buffer = std::make_shared<runtime::Buffer>(device, t.bytes.size());
  if (six_dimensional)
    t.view.emplace(*t.buffer, c.sf, layout.shape6(), layout.strides6());
  else
    t.view.emplace(*t.buffer, c.sf, std::vector<std::int64_t>{layout.bytes()});
}

}  // namespace

std::string GemmAmaxCase::describe() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " L" +
         std::to_string(l) + " " + std::string(runtime::name(ab)) + " " +
         std::string(runtime::name(sf)) + "/" + std::to_string(vec) + " -> " +
         std::string(runtime::name(c)) + " A " + (a_k_major ? "k" : "m") + "-major B " +
         (b_k_major ? "k" : "n") + "-major C " + (c_major == CMajor::n ? "n" : "m") + "-major" +
         (precision == GemmAmaxPrecision::fast ? " precision fast" : "");
}

GemmAmaxOptions GemmAmaxSetup::options() const {
  GemmAmaxOptions o;
  o.c_dtype = c.c;
  o.c_major = c.c_major;
  o.sf_vec_size = c.vec;
  o.mma_tile = c.tile;
  o.cluster = c.cluster;
  o.precision = c.precision;
  o.kernel = c.kernel;
  return o;
}

BlockScaledOperand GemmAmaxSetup::host_a() const {
  return {c.ab,           c.m,     c.k,  c.l,   a.stride_row, a.stride_col,
          a.stride_batch, a.bytes, c.sf, c.vec, sfa.bytes};
}
BlockScaledOperand GemmAmaxSetup::host_b() const {
  return {c.ab,           c.n,     c.k,  c.l,   b.stride_row, b.stride_col,
          b.stride_batch, b.bytes, c.sf, c.vec, sfb.bytes};
}

void GemmAmaxSetup::upload(GemmAmaxTensor& t) const {
  t.buffer->copy_from_host(t.bytes.data(), t.bytes.size());
}

std::vector<float> GemmAmaxSetup::c_values() const {
  std::vector<std::uint8_t> bytes(out.bytes.size());
  out.buffer->copy_to_host(bytes.data(), bytes.size());
  std::vector<float> v;
  for (std::int64_t l = 0; l < c.l; ++l)
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const std::int64_t e = i * out.stride_row + j * out.stride_col + l * out.stride_batch;
        const std::uint8_t* p = bytes.data() + e * element_bits(c.c) / 8;
        switch (c.c) {
          case DType::f32: {
            float f;
            std::memcpy(&f, p, 4);
            v.push_back(f);
            break;
          }
          case DType::f16:
          case DType::bf16: {
            std::uint16_t h;
            std::memcpy(&h, p, 2);
            v.push_back(c.c == DType::f16 ? f16_bits_to_f32(h) : bf16_bits_to_f32(h));
            break;
          }
          case DType::e2m1:
            v.push_back(decode(DType::e2m1, e2m1_at(bytes, e)));
            break;
          default:
            v.push_back(decode(c.c, *p));
        }
      }
  return v;
}

float GemmAmaxSetup::amax_value() const {
  float f;
  amax.buffer->copy_to_host(&f, 4);
  return f;
}

GemmAmaxSetup make_gemm_amax(const runtime::Device& device, const GemmAmaxCase& c,
                             std::mt19937& rng) {
  GemmAmaxSetup s{c, {}, {}, {}, {}, {}, {}};
  make_data(s.a, device, c, c.m, c.a_k_major, rng);
  make_data(s.b, device, c, c.n, c.b_k_major, rng);
  make_scales(s.sfa, device, c, c.m, false, rng);
  make_scales(s.sfb, device, c, c.n, true, rng);
  lay_out(s.out, c.c, c.m, c.n, c.l, c.c_major == CMajor::n);
  make_view(s.out, device, c.c, c.m, c.n, c.l);
  s.amax.bytes.assign(4, 0);
  s.amax.buffer = std::make_shared<runtime::Buffer>(device, 4);
  s.amax.view.emplace(*s.amax.buffer, DType::f32, std::vector<std::int64_t>{1});
  for (GemmAmaxTensor* t : {&s.a, &s.b, &s.sfa, &s.sfb}) s.upload(*t);
  return s;
}

std::vector<std::string> run_gemm_amax_and_check(GemmAmaxSetup& s, float initial_amax, GemmAmax* op,
                                                 const runtime::TensorView* workspace) {
  s.out.buffer->fill(0xFF);  // NaN for every float dtype; -6 for FP4
  s.amax.buffer->copy_from_host(&initial_amax, 4);
  std::optional<GemmAmax> own;
  if (!op) op = &own.emplace(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                             s.options());
  auto reasons = op->check_support();
  if (!reasons.empty()) return reasons;
  op->execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, nullptr, workspace);
  s.a.buffer->device().synchronize();

  const GemmAmaxReference ref = gemm_amax_reference(s.host_a(), s.host_b());
  const bool low = s.c.c == DType::e4m3 || s.c.c == DType::e5m2 || s.c.c == DType::e2m1;
  const float tol = low ? 0.1f : 0.01f;
  const std::vector<float> got = s.c_values();
  std::vector<std::string> bad;
  for (std::int64_t l = 0; l < s.c.l; ++l)
    for (std::int64_t i = 0; i < s.c.m; ++i)
      for (std::int64_t j = 0; j < s.c.n; ++j) {
        const float want = round_to(s.c.c, ref.at(i, j, l));
        const float g = got[static_cast<std::size_t>((l * s.c.m + i) * s.c.n + j)];
        const bool ok =
            std::isnan(want) ? std::isnan(g) : std::fabs(g - want) <= tol + tol * std::fabs(want);
        if (!ok && bad.size() < 8)
          bad.push_back("C[" + std::to_string(i) + "," + std::to_string(j) + "," +
                        std::to_string(l) + "] = " + std::to_string(g) + ", reference " +
                        std::to_string(want));
      }
  const float want_amax = std::isnan(ref.amax) ? ref.amax : std::max(ref.amax, initial_amax);
  const float amax = s.amax_value();
  if (std::isnan(want_amax) ? !std::isnan(amax) : !(std::fabs(amax - want_amax) <= 0.1f))
    bad.push_back("amax " + std::to_string(amax) + ", reference " + std::to_string(want_amax));
  return bad;
}

namespace {

// Codes of one operand as make_cancelling lays them out: in every scale
// block, code 0 is `large`, code 1 `large` again (negated in A: their
// products cancel), the others small and positive.
void write_cancelling(GemmAmaxTensor& t, const GemmAmaxCase& c, std::int64_t rows, bool negate, std::mt19937& rng) {
  const float large = c.ab == DType::e2m1 ? 6.0f : 128.0f;
  const float smalls[] = {0.5f, 1.0f, 1.5f};
  for (std::int64_t l = 0; l < c.l; ++l)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t kk = 0; kk < c.k; ++kk) {
        const std::int64_t i = kk % c.vec;
        const float v = i == 0 ? large : i == 1 ? (negate ? -large : large) : smalls[rng() % 3];
        set_element(t.bytes, c.ab, r * t.stride_row + kk * t.stride_col + l * t.stride_batch, encode(c.ab, v));
      }
  t.buffer->copy_from_host(t.bytes.data(), t.bytes.size());
}

// Scales 2^e, e drawn per row and block from [-20, 20] (e8m0) or from
// e4m3's normal range [-6, 8].
void write_cancelling_scales(GemmAmaxTensor& t, const GemmAmaxCase& c, std::int64_t rows, std::mt19937& rng) {
  const ScaleFactorLayout layout{rows, c.k, c.l, c.vec};
  const bool e8m0 = c.sf == DType::e8m0;
  for (std::int64_t l = 0; l < c.l; ++l)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t kb = 0; kb < layout.k_blocks(); ++kb) {
        const int e = e8m0 ? static_cast<int>(rng() % 41) - 20 : static_cast<int>(rng() % 15) - 6;
        t.bytes[static_cast<std::size_t>(layout.offset(r, kb, l))] = encode(c.sf, std::ldexp(1.0f, e));
      }
  t.buffer->copy_from_host(t.bytes.data(), t.bytes.size());
}

}  // namespace

void make_unfoldable_scales(GemmAmaxSetup& s) {
  const bool e8m0 = s.c.sf == runtime::DType::e8m0;
  const std::uint8_t big = e8m0 ? 227 : 0x7E, small = e8m0 ? 27 : 0x03;
  for (std::size_t i = 0; i < s.sfb.bytes.size(); i += 4) s.sfb.bytes[i] = big;
  for (std::size_t i = 0; i < s.sfa.bytes.size(); i += 4) s.sfa.bytes[i] = small;
  s.upload(s.sfa);
  s.upload(s.sfb);
}

void make_cancelling(GemmAmaxSetup& s, std::mt19937& rng) {
  write_cancelling(s.a, s.c, s.c.m, true, rng);
  write_cancelling(s.b, s.c, s.c.n, false, rng);
  write_cancelling_scales(s.sfa, s.c, s.c.m, rng);
  write_cancelling_scales(s.sfb, s.c, s.c.n, rng);
}

std::vector<std::string> run_gemm_amax_and_check_exact(GemmAmaxSetup& s, GemmAmax* op) {
  if (s.c.c != DType::f32) return {"run_gemm_amax_and_check_exact takes f32 C, not " + s.c.describe()};
  s.out.buffer->fill(0xFF);
  const float zero = 0.0f;
  s.amax.buffer->copy_from_host(&zero, 4);
  std::optional<GemmAmax> own;
  if (!op) op = &own.emplace(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  auto reasons = op->check_support();
  if (!reasons.empty()) return reasons;
  op->execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view);
  s.a.buffer->device().synchronize();

  // The operands' values decoded once, (l, row, k) with k fastest.
  const std::vector<double> a = s.host_a().values(), b = s.host_b().values();
  const std::vector<float> got = s.c_values();
  std::vector<std::string> bad;
  double amax_want = 0.0, amax_bound = 0.0;
  for (std::int64_t l = 0; l < s.c.l; ++l)
    for (std::int64_t i = 0; i < s.c.m; ++i)
      for (std::int64_t j = 0; j < s.c.n; ++j) {
        const double* ai = a.data() + (l * s.c.m + i) * s.c.k;
        const double* bj = b.data() + (l * s.c.n + j) * s.c.k;
        double exact = 0.0, magnitude = 0.0;
        for (std::int64_t kk = 0; kk < s.c.k; ++kk) {
          const double p = ai[kk] * bj[kk];
          exact += p;
          magnitude += std::fabs(p);
        }
        const double bound = static_cast<double>(s.c.k) * std::ldexp(magnitude, -23) + std::ldexp(std::fabs(exact), -24);
        const double g = got[static_cast<std::size_t>((l * s.c.m + i) * s.c.n + j)];
        amax_want = std::max(amax_want, std::fabs(exact));
        amax_bound = std::max(amax_bound, bound);
        if (!(std::fabs(g - exact) <= bound) && bad.size() < 8)
          bad.push_back("C[" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(l) + "] = " +
                        std::to_string(g) + ", exact " + std::to_string(exact) + ", off by more than " +
                        std::to_string(bound) + " (K 2^-23 sum|ab|)");
      }
  const double amax = s.amax_value();
  if (!(std::fabs(amax - amax_want) <= amax_bound))
    bad.push_back("amax " + std::to_string(amax) + ", exact " + std::to_string(amax_want));
  return bad;
}

float amax_with_infinity_in_a(GemmAmaxSetup& s) {
  s.a.bytes[static_cast<std::size_t>(7 * s.a.stride_row + 9)] = 0x7C;  // e5m2 +inf
  s.upload(s.a);
  const GemmAmaxResult r = gemm_amax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, s.options());
  float amax = 0.0f;
  r.amax.copy_to_host(&amax, sizeof amax);
  return amax;
}

}  // namespace warpforge::ops::testing
