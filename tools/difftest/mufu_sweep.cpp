#include "difftest/mufu_sweep.hpp"

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "difftest/instruction_kernel.hpp"
#include "difftest/scalar_form.hpp"
#include "npy_file.hpp"
#include "warpforge/error.hpp"

namespace warpforge::difftest {

namespace {

using Words = std::vector<std::uint32_t>;

float f32(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}
std::uint32_t bits(float v) {
  return std::bit_cast<std::uint32_t>(v);
}
bool is_nan(std::uint32_t b) {
  return (b & 0x7FFFFFFFu) > 0x7F800000u;
}
std::uint32_t flush(std::uint32_t b) {  // .ftz: a subnormal becomes a zero of its sign
  return (b & 0x7F800000u) == 0 ? b & 0x80000000u : b;
}
// The f32 bits as integers in the order of their values, -0 just below +0
// (so that a zero of the other sign is a difference).
std::int64_t ordered(std::uint32_t b) {
  const std::int64_t mag = b & 0x7FFFFFFFu;
  return b & 0x80000000u ? -mag - 1 : mag;
}

// The sign of x·m² − 1, exactly, for positive finite x and m, m having at
// most 25 significant bits: x = X·2^(ex−24), m = M·2^(em−25), X·M² < 2^74.
int square_vs_one(double x, double m) {
  int ex = 0, em = 0;
  const auto X = static_cast<std::uint64_t>(std::ldexp(std::frexp(x, &ex), 24));
  const auto M = static_cast<std::uint64_t>(std::ldexp(std::frexp(m, &em), 25));
  const unsigned __int128 p = static_cast<unsigned __int128>(M * M) * X;
  const int shift = -(ex - 24 + 2 * (em - 25));  // x·m² = p·2^−shift
  if (shift < 0) return 1;
  if (shift >= 127) return -1;
  const unsigned __int128 one = static_cast<unsigned __int128>(1) << shift;
  return p > one ? 1 : p < one ? -1 : 0;
}

// 1/sqrt(x) rounded to nearest f32, for positive finite x.
float rsqrt_rounded(float x) {
  float r = static_cast<float>(1.0L / std::sqrt(static_cast<long double>(x)));
  for (int step = 0; step < 2; ++step) {
    const float up = std::nextafter(r, INFINITY), down = std::nextafter(r, 0.0f);
    if (square_vs_one(x, (static_cast<double>(r) + up) / 2) < 0)
      r = up;  // 1/sqrt(x) lies above the midpoint
    else if (square_vs_one(x, (static_cast<double>(down) + r) / 2) > 0)
      r = down;
    else
      break;
  }
  return r;
}

}  // namespace

std::uint32_t correctly_rounded_f32(const std::string& opcode, std::uint32_t a, std::uint32_t b) {
  const bool ftz = opcode.find(".ftz") != std::string::npos;
  if (ftz) {
    a = flush(a);
    b = flush(b);
  }
  const long double x = f32(a), y = f32(b);
  float r;
  if (opcode.starts_with("rcp"))
    r = static_cast<float>(1.0L / x);
  else if (opcode.starts_with("sqrt"))
    r = static_cast<float>(std::sqrt(x));
  else if (opcode.starts_with("rsqrt"))
    r = x > 0 && std::isfinite(x) ? rsqrt_rounded(f32(a)) : static_cast<float>(1.0L / std::sqrt(x));
  else if (opcode.starts_with("ex2"))
    r = static_cast<float>(std::exp2(x));
  else if (opcode.starts_with("lg2"))
    r = static_cast<float>(std::log2(x));
  else if (opcode.starts_with("tanh"))
    r = static_cast<float>(std::tanh(x));
  else if (opcode.starts_with("div"))
    r = static_cast<float>(x / y);
  else
    throw Error("mufu sweep: no correctly rounded reference for " + opcode);
  std::uint32_t out = std::isnan(r) ? 0x7FFFFFFFu : bits(r);
  return ftz ? flush(out) : out;
}

namespace {

struct Set {
  std::string folder, name, opcode, rule;
  Words a, b;  // b only for the two-operand forms
};

// ---- the input sets -------------------------------------------------------

Words consecutive(std::uint32_t first, std::uint32_t count) {
  Words w(count);
  for (std::uint32_t i = 0; i < count; ++i) w[i] = first + i;
  return w;
}

Set bits_set(std::string folder, std::string name, std::string opcode, std::uint32_t first,
             std::uint32_t count) {
  std::ostringstream rule;
  rule << "bits 0x" << std::hex << first << std::dec << " " << count;
  return {std::move(folder), std::move(name),           std::move(opcode),
          rule.str(),        consecutive(first, count), {}};
}

Set listed_set(std::string folder, std::string name, std::string opcode, Words inputs) {
  return {std::move(folder), std::move(name), std::move(opcode), "listed", std::move(inputs), {}};
}

// The same `per` random mantissas at every biased exponent in [lo, hi], with
// the signs given; and the edges.
Words exponent_samples(std::uint64_t seed, int per, int lo, int hi, bool negative) {
  Rng rng(seed);
  Words mantissas(static_cast<std::size_t>(per));
  for (auto& m : mantissas) m = rng.u32() & 0x7FFFFFu;
  mantissas[0] = 0;
  mantissas[1] = 0x7FFFFF;
  Words w;
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    if (sign && !negative) continue;
    for (int e = lo; e <= hi; ++e)
      for (std::uint32_t m : mantissas) w.push_back(sign | static_cast<std::uint32_t>(e) << 23 | m);
  }
  return w;
}

Words edges() {
  return {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
          0x00400000, 0x00800000, 0x80800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF,
          0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FFFFFFF, 0x7FC00000, 0xFFC00001};
}

// Values for the forms without .ftz, and their .ftz twins: subnormal
// operands, operands whose results are subnormal or near the ends of the
// range, and moderate ones.
Words range_ends(std::uint64_t seed, int per, const std::vector<std::pair<float, float>>& ranges) {
  Rng rng(seed);
  Words w = edges();
  for (int i = 0; i < per; ++i) w.push_back(rng.u32() & 0x807FFFFFu);  // subnormals
  for (const auto& [lo, hi] : ranges)
    for (int i = 0; i < per; ++i) {
      const double t = static_cast<double>(rng.bits() >> 11) * 0x1p-53;
      w.push_back(bits(static_cast<float>(lo + (hi - lo) * t)));
    }
  for (int i = 0; i < per; ++i) w.push_back(rng.u32());  // any bits
  return w;
}

void add_ftz_pair(std::vector<Set>& sets, const std::string& folder, const std::string& fn,
                  const Words& inputs) {
  sets.push_back(listed_set(folder, "plain", fn + ".approx.f32", inputs));
  sets.push_back(listed_set(folder, "ftz_same", fn + ".approx.ftz.f32", inputs));
}

std::vector<Set> all_sets() {
  std::vector<Set> s;
  constexpr std::uint32_t k2To23 = 1u << 23, k2To24 = 1u << 24;
  const std::uint32_t one = 0x3F800000, half = 0x3F000000;
  // rcp: every mantissa of [1, 2); the exponent only shifts it (checked
  // with the same mantissas at every exponent, both signs).
  s.push_back(bits_set("rcp", "ftz_1to2", "rcp.approx.ftz.f32", one, k2To23));
  s.push_back(listed_set("rcp", "ftz_exponents", "rcp.approx.ftz.f32",
                         exponent_samples(11, 2048, 1, 254, true)));
  add_ftz_pair(s, "rcp", "rcp", range_ends(12, 8192, {{0x1p125f, 0x1p127f}, {-8.0f, 8.0f}}));
  // sqrt and rsqrt: every mantissa of both exponent parities, [1, 4).
  for (const std::string fn : {"sqrt", "rsqrt"}) {
    s.push_back(bits_set(fn, "ftz_1to4", fn + ".approx.ftz.f32", one, k2To24));
    s.push_back(listed_set(fn, "ftz_exponents", fn + ".approx.ftz.f32",
                           exponent_samples(13, 2048, 1, 254, false)));
    add_ftz_pair(s, fn, fn, range_ends(14, 8192, {{0x1p-126f, 0x1p-120f}, {0.0f, 16.0f}}));
  }
  // ex2: every x = k·2^-23 in [-1, 1), the inputs that reach the fraction if
  // the unit reads x in fixed point with 23 fraction bits; then x with finer
  // bits (every exponent down to 2^-40, random mantissas) and large |x|
  // (random values of every integer part from -150 to 127), which show how it
  // quantizes x and whether the integer part only scales.
  s.push_back({"ex2",
               "ftz_grid",
               "ex2.approx.ftz.f32",
               "grid " + std::to_string(-static_cast<std::int64_t>(k2To23)) + " " +
                   std::to_string(k2To24) + " -23",
               {},
               {}});
  for (std::uint32_t i = 0; i < k2To24; ++i)
    s.back().a.push_back(
        bits(std::ldexp(static_cast<float>(static_cast<std::int64_t>(i) - k2To23), -23)));
  s.push_back(listed_set("ex2", "ftz_fine", "ex2.approx.ftz.f32",
                         exponent_samples(15, 4096, 127 - 40, 126, true)));
  {
    Rng rng(16);
    Words w;
    for (int n = -150; n <= 127; ++n)
      for (int i = 0; i < 2048; ++i) {
        const double t = static_cast<double>(rng.bits() >> 11) * 0x1p-53;
        w.push_back(bits(static_cast<float>(n + t)));
      }
    s.push_back(listed_set("ex2", "ftz_large", "ex2.approx.ftz.f32", std::move(w)));
  }
  add_ftz_pair(s, "ex2", "ex2", range_ends(17, 8192, {{-152.0f, -124.0f}, {124.0f, 130.0f}}));
  // lg2: every mantissa of [0.5, 2), where the result nears 0; the same
  // mantissas at every exponent.
  s.push_back(bits_set("lg2", "ftz_half_to_2", "lg2.approx.ftz.f32", half, k2To24));
  s.push_back(listed_set("lg2", "ftz_exponents", "lg2.approx.ftz.f32",
                         exponent_samples(18, 2048, 1, 254, false)));
  add_ftz_pair(s, "lg2", "lg2", range_ends(19, 8192, {{0x1p-126f, 0x1p-120f}, {0.0f, 4.0f}}));
  // tanh (no .ftz form). The H200 sweep of every mantissa of [0.5, 2)
  // (session 4) showed that the unit reads x there to 2^-20 (each 16, then 8,
  // consecutive inputs give one result); the exponents' samples that it is
  // odd, correctly rounded below 2^-10 and ±1 from 16. So: every x = k·2^-20
  // in [2^-10, 16); 65,536 consecutive inputs from each power of two in
  // [2^-10, 8], which show how it reads x in each binade; the same mantissas
  // at every exponent, both signs; the ends of the range.
  s.push_back({"tanh", "grid", "tanh.approx.f32", "grid 1024 " + std::to_string(k2To24 - 1024) + " -20", {}, {}});
  for (std::uint32_t k = 1024; k < k2To24; ++k) s.back().a.push_back(bits(std::ldexp(static_cast<float>(k), -20)));
  {
    Words starts;
    for (int e = -10; e <= 3; ++e)
      for (std::uint32_t i = 0; i < 65536; ++i) starts.push_back(bits(std::ldexp(1.0f, e)) + i);
    s.push_back(listed_set("tanh", "binade_starts", "tanh.approx.f32", std::move(starts)));
  }
  s.push_back(listed_set("tanh", "exponents", "tanh.approx.f32", exponent_samples(21, 2048, 1, 254, true)));
  s.push_back(listed_set("tanh", "plain", "tanh.approx.f32",
                         range_ends(22, 8192, {{0x1p-14f, 0x1p-10f}, {-12.0f, 12.0f}})));
  // div.full and div.approx: a·rcp(b)? The same pairs for each, and
  // rcp.approx.ftz.f32 of every b.
  {
    Rng rng(20);
    Words a, b;
    for (int i = 0; i < 65536; ++i) {
      a.push_back(static_cast<std::uint32_t>(float_value(rng, kF32)));
      std::uint32_t y = static_cast<std::uint32_t>(float_value(rng, kF32));
      if (i % 4 == 0) y = (y & 0x807FFFFFu) | (rng.percent(50) ? 253u : 254u) << 23;  // |b| > 2^126
      b.push_back(y);
    }
    for (const auto& [name, op] : {std::pair{"full", "div.full.f32"},
                                   {"full_ftz", "div.full.ftz.f32"},
                                   {"approx", "div.approx.f32"},
                                   {"approx_ftz", "div.approx.ftz.f32"}})
      s.push_back({"div", name, op, "listed", a, b});
    s.push_back({"div", "rcp_of_b", "rcp.approx.ftz.f32", "listed", b, {}});
  }
  return s;
}

// ---- the run and the files ------------------------------------------------

Words thinned(const Words& w, std::uint32_t thin) {
  if (thin <= 1) return w;
  Words t;
  for (std::size_t i = 0; i < w.size(); i += thin) t.push_back(w[i]);
  return t;
}

// The GPU's (or simulator's) results of `opcode` on every input.
Words run_form(const runtime::Device& device, const std::string& opcode, const Words& a,
               const Words& b) {
  const bool two = !b.empty();
  const std::size_t n = a.size();
  const std::size_t threads = (n + kBlockThreads - 1) / kBlockThreads * kBlockThreads;
  auto words = std::make_shared<Words>();
  words->reserve(threads * (two ? 2 : 1));
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t i = std::min(t, n - 1);  // the padding repeats the last input
    words->push_back(a[i]);
    if (two) words->push_back(b[i]);
  }
  InstructionForm form = scalar_form({opcode,
                                      32,
                                      two ? std::vector<int>{32, 32} : std::vector<int>{32},
                                      nullptr,
                                      {},
                                      static_cast<int>(threads)});
  form.inputs = [words](Rng&, Words& out, int) { out = *words; };
  const Outcome o = instruction_unit(std::move(form)).run(device, 0);
  Words result(n);
  std::memcpy(result.data(), o.bytes.data(), n * 4);
  return result;
}

template <typename T>
void write_array(const std::filesystem::path& path, const std::vector<T>& v,
                 std::string_view descr) {
  cli::write_npy(path, descr, {static_cast<std::int64_t>(v.size())}, v.data(),
                 v.size() * sizeof(T));
}

struct Differences {
  std::vector<std::int8_t> d;
  Words xi, xb;
};

Differences differences(const Set& s, const Words& a, const Words& b, const Words& gpu) {
  Differences out;
  out.d.resize(gpu.size());
  const unsigned parts = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  const std::size_t step = (gpu.size() + parts - 1) / parts;
  for (unsigned p = 0; p < parts; ++p)
    pool.emplace_back([&, p] {
      for (std::size_t i = p * step; i < std::min(gpu.size(), (p + 1) * step); ++i) {
        const std::uint32_t cr = correctly_rounded_f32(s.opcode, a[i], b.empty() ? 0 : b[i]);
        const std::int64_t d = is_nan(cr) || is_nan(gpu[i])
                                   ? (is_nan(cr) && is_nan(gpu[i]) ? 0 : 1000)
                                   : ordered(gpu[i]) - ordered(cr);
        out.d[i] = static_cast<std::int8_t>(d >= -127 && d <= 127 ? d : -128);
      }
    });
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < gpu.size(); ++i)
    if (out.d[i] == -128) {
      out.xi.push_back(static_cast<std::uint32_t>(i));
      out.xb.push_back(gpu[i]);
    }
  return out;
}

}  // namespace

void mufu_sweep(const runtime::Device& device, const std::filesystem::path& out,
                std::uint32_t thin, const std::set<std::string>& functions) {
  const std::vector<Set> sets = all_sets();
  std::set<std::string> known;
  for (const Set& s : sets) known.insert(s.folder);
  for (const std::string& f : functions)
    if (!known.count(f)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error("mufu sweep: no function '" + f + "' (accepted: " + list + ")");
    }
  std::filesystem::create_directories(out);
  std::string last_folder;
  for (const Set& s : sets) {
    if (!functions.empty() && !functions.count(s.folder)) continue;
    const auto start = std::chrono::steady_clock::now();
    const std::filesystem::path dir = out / s.folder;
    std::filesystem::create_directories(dir);
    const Words a = thinned(s.a, thin), b = thinned(s.b, thin);
    const std::string rule = thin > 1 && s.rule != "listed" ? "listed" : s.rule;
    const Words gpu = run_form(device, s.opcode, a, b);
    const Differences d = differences(s, a, b, gpu);
    write_array(dir / (s.name + ".d.npy"), d.d, "|i1");
    write_array(dir / (s.name + ".xi.npy"), d.xi, "<u4");
    write_array(dir / (s.name + ".xb.npy"), d.xb, "<u4");
    if (rule == "listed") {
      write_array(dir / (s.name + ".a.npy"), a, "<u4");
      if (!b.empty()) write_array(dir / (s.name + ".b.npy"), b, "<u4");
    }
    std::ofstream(dir / "sets.txt", s.folder == last_folder ? std::ios::app : std::ios::trunc)
        << s.name << "\t" << s.opcode << "\t" << rule << "\n";
    last_folder = s.folder;
    std::size_t exact = 0, within1 = 0;
    std::int64_t lo = 0, hi = 0;
    for (std::int8_t v : d.d) {
      exact += v == 0;
      within1 += v >= -1 && v <= 1;
      if (v != -128) lo = std::min<std::int64_t>(lo, v), hi = std::max<std::int64_t>(hi, v);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "mufu: " << s.folder << "/" << s.name << " " << s.opcode << ": " << a.size()
              << " inputs, " << exact << " correctly rounded, " << within1 << " within 1 ulp, "
              << "ulps [" << lo << ", " << hi << "], " << d.xi.size() << " outside, " << seconds
              << " s\n";
  }
}

}  // namespace warpforge::difftest
