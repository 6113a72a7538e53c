// Atomics (PTX ISA 9.7.13.5 atom, 9.7.13.6 red) on global and shared memory.
// Each thread updates its own cell (whose first value and operands are
// generated), and returns the old value and the cell's new one: the
// operation's arithmetic, free of the order in which threads reach a shared
// cell, which the GPU does not fix. The contended forms, where a warp's 32
// lanes update one cell, are the order-independent ones (integer add and the
// logic, min and max operations); they return the cell after bar.warp.sync.
#include "difftest/families.hpp"
#include "difftest/instruction_kernel.hpp"

namespace warpforge::difftest {

using namespace dsl;

namespace {

struct Kind {
  std::string op, type;
  int width;
  bool is_float;
};

std::uint64_t operand(Rng& rng, const Kind& k) {
  if (!k.is_float)
    return k.op == "inc" || k.op == "dec" ? (rng.percent(60) ? rng.below(20) : int_value(rng, 32))
                                          : int_value(rng, k.width);
  return float_value(rng, k.width == 64   ? kF64
                          : k.width == 16 ? (k.type == "bf16" ? kBF16 : kF16)
                                          : kF32);
}

// The operand registers of one value (1 or 2 words from `at`).
Reg value_reg(Kernel& k, const ThreadIo& io, std::size_t at, int width) {
  if (width == 64) return join64(k, b64, io.in[at], io.in[at + 1]);
  if (width == 16) return low16(k, b16, io.in[at]);
  return io.in[at];
}

void to_words(Kernel& k, const Reg& v, const ThreadIo& io, std::size_t at, int width) {
  if (width == 64)
    split64(k, v, io.out[at], io.out[at + 1]);
  else if (width == 16)
    widen16(k, io.out[at], v);
  else
    k.mov(io.out[at], v);
}

}  // namespace

Family atomic_family() {
  Family f{
      "atomics", "atom and red on global and shared memory, one cell per thread or per warp", {}};
  const std::vector<Kind> kinds = {
      {"add", "u32", 32, false},       {"add", "s32", 32, false}, {"add", "u64", 64, false},
      {"add", "f32", 32, true},        {"add", "f64", 64, true},  {"add.noftz", "f16", 16, true},
      {"add.noftz", "bf16", 16, true}, {"min", "u32", 32, false}, {"min", "s32", 32, false},
      {"min", "u64", 64, false},       {"min", "s64", 64, false}, {"max", "u32", 32, false},
      {"max", "s32", 32, false},       {"max", "u64", 64, false}, {"max", "s64", 64, false},
      {"inc", "u32", 32, false},       {"dec", "u32", 32, false}, {"exch", "b32", 32, false},
      {"exch", "b64", 64, false},      {"cas", "b32", 32, false}, {"cas", "b64", 64, false},
      {"and", "b32", 32, false},       {"and", "b64", 64, false}, {"or", "b32", 32, false},
      {"or", "b64", 64, false},        {"xor", "b32", 32, false}, {"xor", "b64", 64, false},
  };
  for (const char* space : {"global", "shared"})
    for (const Kind& kind : kinds) {
      if (kind.width == 16 && std::string(space) == "shared")
        continue;  // 16-bit atom.add is global-only
      const bool cas = kind.op == "cas";
      const int words = kind.width == 64 ? 2 : 1;
      InstructionForm form;
      form.name = std::string("atom.") + space + "." + kind.op + "." + kind.type;
      form.threads = 512;
      form.in_words = (cas ? 3 : 2) * words;  // the cell's first value, b, and cas's c
      form.out_words = 2 * words;             // the old value, the cell afterwards
      form.inputs = per_thread([kind, cas, words](Rng& rng, std::uint32_t* w) {
        std::uint64_t v[3] = {operand(rng, kind), operand(rng, kind), operand(rng, kind)};
        if (cas && rng.percent(50)) v[1] = v[0];  // the compare holds: the swap happens
        for (int i = 0; i < (cas ? 3 : 2); ++i) {
          w[i * words] = static_cast<std::uint32_t>(v[i]);
          if (words == 2) w[i * words + 1] = static_cast<std::uint32_t>(v[i] >> 32);
        }
      });
      const bool shared = std::string(space) == "shared";
      form.body = [kind, cas, words, shared, opcode = form.name](Kernel& k, const ThreadIo& io) {
        const Type bits = kind.width == 64 ? b64 : kind.width == 16 ? b16 : b32;
        Reg first = value_reg(k, io, 0, kind.width),
            b = value_reg(k, io, static_cast<std::size_t>(words), kind.width);
        Reg old = k.reg(bits), after = k.reg(bits);
        // The cell: 8 bytes per thread of a shared array, or the output's second half.
        Reg cell;
        if (shared) {
          Shared cells = k.shared("cells", 8 * kBlockThreads, 8);
          cell = k.address_of(cells) + (k.sreg(SReg::tid_x) << 3);
        } else {
          cell = io.out_address + 4 * words;
        }
        const Space sp = shared ? Space::shared : Space::global;
        k.st(sp, bits, at(cell), first);
        if (cas)
          k.inst(opcode, old, at(cell), b,
                 value_reg(k, io, static_cast<std::size_t>(2 * words), kind.width));
        else
          k.inst(opcode, old, at(cell), b);
        k.ld(sp, bits, after, at(cell));
        to_words(k, old, io, 0, kind.width);
        to_words(k, after, io, static_cast<std::size_t>(words), kind.width);
      };
      f.units.push_back(instruction_unit(std::move(form)));
    }
  // red: the update without the old value.
  for (const Kind& kind : {kinds[0], kinds[3], kinds[8], kinds[21]}) {
    InstructionForm form;
    form.name = "red.global." + kind.op + "." + kind.type;
    form.threads = 512;
    form.in_words = 2;
    form.out_words = 1;
    form.inputs = per_thread([kind](Rng& rng, std::uint32_t* w) {
      w[0] = static_cast<std::uint32_t>(operand(rng, kind));
      w[1] = static_cast<std::uint32_t>(operand(rng, kind));
    });
    form.body = [opcode = form.name](Kernel& k, const ThreadIo& io) {
      k.st(Space::global, b32, at(io.out_address), io.in[0]);
      k.inst(opcode, at(io.out_address), io.in[1]);
      k.ld(Space::global, b32, io.out[0], at(io.out_address));
    };
    f.units.push_back(instruction_unit(std::move(form)));
  }
  // Contended: a warp's lanes on one shared cell, order-independent operations.
  for (const Kind& kind : {kinds[0], kinds[8], kinds[11], kinds[21], kinds[23], kinds[25]}) {
    InstructionForm form;
    form.name = "atom.shared." + kind.op + "." + kind.type + " (32 lanes, one cell)";
    form.threads = 2048;
    form.in_words = 2;
    form.out_words = 1;
    form.inputs = per_thread([kind](Rng& rng, std::uint32_t* w) {
      w[0] = static_cast<std::uint32_t>(operand(rng, kind));
      // 32 random words AND to 0 and OR to all ones: one bit clear (and) or set (or).
      if (kind.op == "and")
        w[1] = ~(1u << rng.below(32));
      else if (kind.op == "or")
        w[1] = 1u << rng.below(32);
      else if (kind.op == "max")
        w[1] = static_cast<std::uint32_t>(rng.percent(90) ? rng.u32() >> rng.below(32)
                                                          : int_value(rng, 32));
      else
        w[1] = static_cast<std::uint32_t>(operand(rng, kind));
    });
    form.body = [opcode = "atom.shared." + kind.op + "." + kind.type](Kernel& k,
                                                                      const ThreadIo& io) {
      Shared cells = k.shared("cells", 4 * kBlockThreads / 32, 4);
      Reg tid = k.sreg(SReg::tid_x);
      Reg cell = k.address_of(cells) + ((tid >> 5) << 2);
      Reg lane = tid & 31;
      // Lane 0 sets the cell's first value (its own first word) before the others update it.
      k.if_then(k.setp(Cmp::eq, lane, 0), [&] { k.st(Space::shared, b32, at(cell), io.in[0]); });
      k.bar_warp_sync();
      Reg ignored = k.reg(b32);
      k.inst(opcode, ignored, at(cell), io.in[1]);
      k.bar_warp_sync();
      k.ld(Space::shared, b32, io.out[0], at(cell));
    };
    f.units.push_back(instruction_unit(std::move(form)));
  }
  return f;
}

}  // namespace warpforge::difftest
