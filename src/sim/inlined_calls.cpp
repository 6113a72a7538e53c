#include "inlined_calls.hpp"

#include <cstdint>
#include <cstdlib>
#include <optional>

namespace warpforge::sim {
namespace {

// DWARF 5 section 7.5.4-7.5.6: the tags, attributes and forms this reads.
constexpr std::uint64_t kInlinedSubroutine = 0x1d;
constexpr std::uint64_t kLowPc = 0x11, kHighPc = 0x12, kCallColumn = 0x57, kCallFile = 0x58,
                        kCallLine = 0x59;

// A section's data as bytes (little-endian, as the target stores them); a
// value that is a symbol (a label, `.debug_abbrev`) is zeros in the bytes and
// its name at its offset.
struct Bytes {
  std::vector<std::uint8_t> data;
  std::map<std::size_t, std::string> symbols;

  explicit Bytes(const ptx::Section& s) {
    for (const auto& line : s.lines) {
      const std::size_t size = line.type == ptx::Type::b64 ? 8 : line.type == ptx::Type::b32 ? 4
                               : line.type == ptx::Type::b16 ? 2 : 1;
      for (const auto& v : line.values) {
        std::uint64_t x = 0;
        if (v.kind == ptx::Operand::Kind::imm_int)
          x = static_cast<std::uint64_t>(std::strtoll(v.text.c_str(), nullptr, 0));
        else
          symbols[data.size()] = v.text;
        for (std::size_t i = 0; i < size; ++i) data.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
      }
    }
  }
};

// Reads a Bytes front to back; any read past the end makes it bad (and
// every later read 0), which ends the parse.
struct Reader {
  const Bytes& bytes;
  std::size_t at = 0;
  bool bad = false;

  bool done() const { return bad || at >= bytes.data.size(); }
  std::uint64_t fixed(std::size_t n) {
    if (at + n > bytes.data.size()) {
      bad = true;
      return 0;
    }
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < n; ++i) x |= std::uint64_t{bytes.data[at + i]} << (8 * i);
    at += n;
    return x;
  }
  std::string symbol(std::size_t n) {  // the symbol stored at this value, or ""
    const auto s = bytes.symbols.find(at);
    fixed(n);
    return s == bytes.symbols.end() ? std::string() : s->second;
  }
  std::uint64_t leb(bool is_signed = false) {  // DWARF 5 section 7.6
    std::uint64_t x = 0;
    int shift = 0;
    std::uint8_t b = 0x80;
    while (b & 0x80) {
      b = static_cast<std::uint8_t>(fixed(1));
      if (bad || shift > 63) return bad = true, 0;
      x |= std::uint64_t{b & 0x7fu} << shift;
      shift += 7;
    }
    if (is_signed && shift < 64 && (b & 0x40)) x |= ~std::uint64_t{0} << shift;
    return x;
  }
  void skip_string() {
    while (!bad && fixed(1) != 0) {
    }
  }
};

struct Abbreviation {
  std::uint64_t tag = 0;
  bool children = false;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::int64_t>> attributes;  // name, form, implicit const
};

std::map<std::uint64_t, Abbreviation> abbreviations(const Bytes& bytes) {
  std::map<std::uint64_t, Abbreviation> table;
  Reader in{bytes};
  while (!in.done()) {
    const std::uint64_t code = in.leb();
    if (code == 0) break;
    Abbreviation& a = table[code];
    a.tag = in.leb();
    a.children = in.fixed(1) != 0;
    for (;;) {
      const std::uint64_t name = in.leb(), form = in.leb();
      const std::int64_t constant = form == 0x21 ? static_cast<std::int64_t>(in.leb(true)) : 0;
      if (in.bad || (name == 0 && form == 0)) break;
      a.attributes.emplace_back(name, form, constant);
    }
  }
  return table;
}

// One attribute's value: the number (data, flag, constant forms), the
// symbol (an address that is a label), or nothing for the forms skipped.
// nullopt: a form this reader does not know, which ends the parse.
struct Value {
  std::uint64_t number = 0;
  std::string symbol;
};

std::optional<Value> read_value(Reader& in, std::uint64_t form, std::int64_t constant, int version,
                                std::size_t address_size) {
  Value v;
  switch (form) {
    case 0x01: v.symbol = in.symbol(address_size); break;                        // addr
    case 0x0b: case 0x11: case 0x25: case 0x29: v.number = in.fixed(1); break;   // data1, ref1, strx1, addrx1
    case 0x05: case 0x12: case 0x26: case 0x2a: v.number = in.fixed(2); break;   // data2, ref2, strx2, addrx2
    case 0x27: case 0x2b: v.number = in.fixed(3); break;                         // strx3, addrx3
    case 0x06: case 0x13: case 0x0e: case 0x17: case 0x1f: case 0x1c: case 0x1d:  // data4, ref4, strp,
    case 0x28: case 0x2c:                                                         // sec_offset, line_strp,
      v.number = in.fixed(4);                                                     // ref_sup4, strp_sup, strx4,
      break;                                                                      // addrx4
    case 0x07: case 0x14: case 0x20: v.number = in.fixed(8); break;              // data8, ref8, ref_sig8
    case 0x1e: in.fixed(8), in.fixed(8); break;                                  // data16
    case 0x10: in.fixed(version <= 2 ? address_size : 4); break;                 // ref_addr
    case 0x0c: v.number = in.fixed(1); break;                                    // flag
    case 0x19: v.number = 1; break;                                              // flag_present
    case 0x21: v.number = static_cast<std::uint64_t>(constant); break;           // implicit_const
    case 0x0d: v.number = in.leb(true); break;                                   // sdata
    case 0x0f: case 0x15: case 0x1a: case 0x1b: case 0x22: case 0x23:            // udata, ref_udata, strx,
      v.number = in.leb();                                                        // addrx, loclistx,
      break;                                                                      // rnglistx
    case 0x08: in.skip_string(); break;                                          // string
    case 0x0a: in.at += in.fixed(1); break;                                      // block1
    case 0x03: in.at += in.fixed(2); break;                                      // block2
    case 0x04: in.at += in.fixed(4); break;                                      // block4
    case 0x09: case 0x18: in.at += in.leb(); break;                              // block, exprloc
    default: return std::nullopt;
  }
  if (in.at > in.bytes.data.size()) in.bad = true;
  return v;
}

const ptx::Section* find_section(const ptx::Module& module, const std::string& name) {
  for (const auto& item : module.items)
    if (const auto* s = std::get_if<ptx::Section>(&item); s && s->name == name) return s;
  return nullptr;
}

}  // namespace

std::vector<InlinedCall> inlined_calls(const ptx::Module& module) {
  const ptx::Section* info = find_section(module, ".debug_info");
  const ptx::Section* abbrev = find_section(module, ".debug_abbrev");
  if (!info || !abbrev) return {};
  const auto table = abbreviations(Bytes(*abbrev));
  const Bytes bytes(*info);
  Reader in{bytes};
  std::vector<InlinedCall> calls;
  while (!in.done()) {  // compile units (DWARF 5 section 7.5.1.1; 2-4 section 7.5.1)
    const std::uint64_t length = in.fixed(4);
    if (length >= 0xfffffff0u) return calls;  // 64-bit DWARF: not what NVPTX writes
    const std::size_t end = in.at + length;
    const int version = static_cast<int>(in.fixed(2));
    std::size_t address_size = 8;
    if (version >= 5) {
      in.fixed(1);  // unit type
      address_size = in.fixed(1);
      in.fixed(4);
    } else {
      in.fixed(4);
      address_size = in.fixed(1);
    }
    std::vector<int> enclosing;  // per open DIE with children: the innermost inlined call in it, or -1
    while (!in.bad && in.at < end) {
      const std::uint64_t code = in.leb();
      if (code == 0) {  // the end of a DIE's children
        if (!enclosing.empty()) enclosing.pop_back();
        continue;
      }
      const auto a = table.find(code);
      if (a == table.end()) return calls;
      InlinedCall call;
      for (const auto& [name, form, constant] : a->second.attributes) {
        const auto v = read_value(in, form, constant, version, address_size);
        if (!v) return calls;
        if (name == kLowPc) call.low_label = v->symbol;
        if (name == kHighPc) call.high_label = v->symbol;  // "" where it is a length (DWARF 4+): skipped
        if (name == kCallFile) std::get<0>(call.call) = static_cast<long long>(v->number);
        if (name == kCallLine) std::get<1>(call.call) = static_cast<long long>(v->number);
        if (name == kCallColumn) std::get<2>(call.call) = static_cast<long long>(v->number);
      }
      int innermost = enclosing.empty() ? -1 : enclosing.back();
      if (a->second.tag == kInlinedSubroutine) {  // kept without labels too: its calls' outer frame
        call.parent = innermost;
        call.depth = innermost < 0 ? 1 : calls[static_cast<std::size_t>(innermost)].depth + 1;
        innermost = static_cast<int>(calls.size());
        calls.push_back(std::move(call));
      }
      if (a->second.children) enclosing.push_back(innermost);
    }
    if (in.bad) return calls;
    in.at = end;
  }
  return calls;
}

}  // namespace warpforge::sim
