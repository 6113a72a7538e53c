// `warpforge layout`: draws a layout that layout/ computes, in the terminal
// or as SVG: the fragment atoms, a Shape:Stride expression (as offsets or as
// a thread-value layout over a tile) and a swizzled shared-memory tile with
// the bank conflicts of a warp's access.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "arguments.hpp"
#include "command.hpp"
#include "command_files.hpp"
#include "pictures/atom_catalogue.hpp"
#include "pictures/layout_grids.hpp"
#include "pictures/smem_banks.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/parse.hpp"

namespace warpforge::cli::layout_command {
namespace {

// Bigger grids are unreadable in a terminal and unwieldy as SVG.
constexpr int64_t kMaxCells = 65536;

struct Options {
  bool list = false;
  std::string atom;  // an atom name, or "smem"
  std::optional<std::string> expr;
  std::optional<std::pair<int64_t, int64_t>> tv;  // --tv ROWSxCOLS
  std::vector<layout::Axis> axes = {layout::Axis::lane, layout::Axis::value};
  pictures::SmemTile tile;
  std::string access = "ldmatrix";
  std::optional<std::string> svg;
  std::vector<std::string> expr_flags, smem_flags;  // given, to refuse them elsewhere
};

// Rows, columns and element bytes: a bound far above any drawable picture
// (kMaxCells refuses those), so that their products cannot overflow.
constexpr int64_t kMaxExtent = 999999999;

std::pair<int64_t, int64_t> rows_by_cols(const std::string& flag, const std::string& text) {
  const auto [rows, cols] = shape_2d(flag, text, kMaxExtent, "16x8");
  return {rows, cols};
}

std::vector<layout::Axis> parse_axes(const std::string& text) {
  static const std::vector<layout::Axis> known = {layout::Axis::lane, layout::Axis::warp,
                                                  layout::Axis::warpgroup, layout::Axis::value};
  std::vector<layout::Axis> axes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    bool found = false;
    for (layout::Axis a : known) {
      if (layout::to_string(a) == name) {
        axes.push_back(a);
        found = true;
      }
    }
    if (!found) {
      throw Error("--axes '" + text + "' refused: '" + name +
                  "' is not a thread or value axis; accepted: lane, warp, warpgroup, value, "
                  "comma-separated, one per mode of the layout");
    }
    start = comma + 1;
  }
  return axes;
}

layout::SmemSwizzle parse_swizzle(const std::string& text) {
  for (auto mode : {layout::SmemSwizzle::none, layout::SmemSwizzle::b32, layout::SmemSwizzle::b64,
                    layout::SmemSwizzle::b128}) {
    if (layout::to_string(mode) == text) return mode;
  }
  one_of("--swizzle", text, {"none", "32B", "64B", "128B"});  // throws, listing them
  return layout::SmemSwizzle::none;
}

Options parse(const std::vector<std::string>& raw) {
  Arguments args("layout", raw);
  Options o;
  o.list = args.flag("--list");
  o.expr = args.value("--expr");
  o.svg = args.value("--svg");
  if (o.svg) require_file_name("--svg", *o.svg);
  if (const auto tv = args.value("--tv")) {
    o.tv = rows_by_cols("--tv", *tv);
    o.expr_flags.push_back("--tv");
  }
  if (const auto axes = args.value("--axes")) {
    o.axes = parse_axes(*axes);
    o.expr_flags.push_back("--axes");
  }
  if (const auto swizzle = args.value("--swizzle")) {
    o.tile.swizzle = parse_swizzle(*swizzle);
    o.smem_flags.push_back("--swizzle");
  }
  for (const auto& [flag, field] : {std::pair<const char*, int64_t*>{"--rows", &o.tile.rows},
                                    {"--cols", &o.tile.cols}}) {
    if (const auto v = args.value(flag)) {
      *field = integer_in(flag, *v, 1, kMaxExtent);
      o.smem_flags.push_back(flag);
    }
  }
  if (const auto bytes = args.value("--bytes")) {
    o.tile.element_bytes = std::stoi(one_of("--bytes", *bytes, {"1", "2", "4", "8"}));
    o.smem_flags.push_back("--bytes");
  }
  if (const auto access = args.value("--access")) {
    o.access = *access;
    o.smem_flags.push_back("--access");
  }
  const auto named = args.positionals(0, 2, "<atom>");
  args.finish();
  if (o.list) {
    const auto other = std::find_if(raw.begin(), raw.end(), [](const std::string& a) { return a != "--list"; });
    if (other != raw.end())
      throw Error("--list prints the catalogue and takes nothing else; got '" + *other + "'");
    return o;
  }
  if (named.size() == 2)
    throw Error("two layouts named, '" + named[0] + "' and '" + named[1] + "'; draw one at a time");
  if (!named.empty()) o.atom = named[0];
  if (o.atom.empty() == !o.expr) {
    throw Error(o.expr ? "both --expr and '" + o.atom + "' given; draw one at a time"
                       : "what to draw? name an atom (`warpforge layout --list`), `smem` or "
                         "--expr SHAPE:STRIDE");
  }
  if (!o.expr_flags.empty() && !o.expr) {
    throw Error(o.expr_flags[0] + " describes an --expr layout's threads and values; give --expr");
  }
  if (!o.smem_flags.empty() && o.atom != "smem") {
    throw Error(o.smem_flags[0] + " describes the shared tile of `warpforge layout smem`, not '" +
                (o.expr ? *o.expr : o.atom) + "'");
  }
  return o;
}

pictures::Grid grid_for(const Options& o) {
  if (o.expr) {
    const layout::Layout l = layout::parse_layout(*o.expr);
    // Refuse a huge grid (or a thread-value layout too big to walk) before building it.
    const int64_t cells = std::max(l.size(), o.tv ? o.tv->first * o.tv->second : 0);
    if (cells > kMaxCells) {
      throw Error("--expr " + *o.expr + ": " + std::to_string(cells) +
                  " cells; the picture draws at most " + std::to_string(kMaxCells));
    }
    if (!o.tv) return pictures::offset_grid(l);
    return pictures::thread_value_grid(layout::NamedLayout(
        *o.expr, o.axes, l, {{layout::Axis::row, o.tv->first}, {layout::Axis::col, o.tv->second}}));
  }
  if (o.atom == "smem") {
    if (o.tile.rows * o.tile.cols > kMaxCells) {
      throw Error("smem: a " + std::to_string(o.tile.rows) + " x " + std::to_string(o.tile.cols) +
                  " tile; the picture draws at most " + std::to_string(kMaxCells) + " elements");
    }
    return pictures::bank_grid(o.tile, pictures::warp_access(o.tile, o.access));
  }
  return pictures::thread_value_grid(pictures::find_atom(o.atom).layout);
}

int run_layout(const std::vector<std::string>& args) {
  const Options o = parse(args);
  if (o.list) {
    for (const auto& e : pictures::atom_catalogue()) {
      std::cout << e.name << std::string(e.name.size() < 20 ? 20 - e.name.size() : 1, ' ')
                << e.description << "\n";
    }
    std::cout << "smem                a shared-memory tile coloured by bank, with a warp "
                 "access's bank conflicts\n"
                 "--expr SHAPE:STRIDE any layout, e.g. \"((8,4),(2,2)):((4,1),(32,64))\"\n";
    return 0;
  }
  const pictures::Grid grid = grid_for(o);
  if (o.svg) {
    write_named_file("--svg", *o.svg, pictures::to_svg(grid));
    std::cout << "wrote " << *o.svg << ": " << grid.title << " (" << grid.rows << " x " << grid.cols
              << " cells)\n";
    return 0;
  }
  std::cout << pictures::to_terminal(grid, ::isatty(STDOUT_FILENO) == 1);
  return 0;
}

const Registration registration({
    .name = "layout",
    .summary = "draw a fragment atom, a layout or a swizzled tile's banks",
    .help =
        "usage: warpforge layout --list\n"
        "       warpforge layout <atom> [--svg FILE]\n"
        "       warpforge layout --expr SHAPE:STRIDE [--tv ROWSxCOLS [--axes A,B,...]] [--svg "
        "FILE]\n"
        "       warpforge layout smem [--swizzle none|32B|64B|128B] [--rows R] [--cols C]\n"
        "                             [--bytes 1|2|4|8] [--access ldmatrix|rows:W|cols:W] [--svg "
        "FILE]\n"
        "\n"
        "Draws a layout as a grid: in the terminal (coloured when stdout is one), or as an SVG\n"
        "file with --svg, whose cells carry data-thread/data-value (or data-offset, data-bank)\n"
        "attributes.\n"
        "\n"
        "<atom>      a fragment atom (`--list` names them): its tile with each element labelled\n"
        "            T<thread>V<value>, the thread (lane + 32 * warp) and operand slot holding "
        "it.\n"
        "--expr      a Shape:Stride layout, e.g. \"((8,4),(2,2)):((4,1),(32,64))\" (a Shape alone\n"
        "            is column-major): rank 1 or 2 drawn as the offset of each coordinate; with\n"
        "            --tv ROWSxCOLS as a thread-value layout, its modes named by --axes (default\n"
        "            lane,value), its offsets read as (row + ROWS * col) of the tile.\n"
        "smem        a rows x cols tile of BYTES-byte elements (default 8 x 64 x 2, 128B swizzle)\n"
        "            as TMA writes it with the swizzle: each 4-byte word labelled with its bank,\n"
        "            the words a warp's access reads in brackets, and that access's bank\n"
        "            conflicts (32 banks of 4 bytes; 128-byte phases):\n"
        "              ldmatrix  ldmatrix.x4 of the first four 8x8 blocks, down the columns first\n"
        "              rows:W    lane t reads W bytes at byte t*W, along the rows\n"
        "              cols:W    lane t reads W bytes of row t mod R at byte W*(t / R), down the\n"
        "                        columns\n",
    .run = run_layout,
});

}  // namespace
}  // namespace warpforge::cli::layout_command
