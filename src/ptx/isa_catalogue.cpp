#include "isa_catalogue.hpp"

#include <algorithm>
#include <iterator>


namespace warpforge::ptx {
namespace {

struct TargetName {
  std::string_view name;
  PtxVersion first;
};

// Each `.target` name with the first version that accepts it, as ptxas 13.0
// (PTX ISA 9.0) does: measured by assembling `.version V .target T` for every
// published V (PTX ISA 13 "Release Notes" introduce most at these versions).
constexpr TargetName kTargets[] = {
    {"sm_10", {1, 0}},    {"sm_11", {1, 0}},    {"sm_12", {1, 2}},    {"sm_13", {1, 2}},
    {"sm_20", {2, 0}},    {"sm_21", {2, 0}},    {"sm_30", {3, 0}},    {"sm_32", {4, 0}},
    {"sm_35", {3, 1}},    {"sm_37", {4, 1}},    {"sm_50", {4, 0}},    {"sm_52", {4, 1}},
    {"sm_53", {4, 2}},    {"sm_60", {5, 0}},    {"sm_61", {5, 0}},    {"sm_62", {5, 0}},
    {"sm_70", {5, 1}},    {"sm_72", {6, 1}},    {"sm_75", {6, 3}},    {"sm_80", {7, 0}},
    {"sm_86", {7, 1}},    {"sm_87", {7, 4}},    {"sm_88", {7, 3}},    {"sm_89", {7, 8}},
    {"sm_90", {7, 8}},    {"sm_90a", {8, 0}},   {"sm_100", {8, 6}},   {"sm_100a", {8, 6}},
    {"sm_100f", {8, 8}},  {"sm_101", {8, 6}},   {"sm_101a", {8, 6}},  {"sm_101f", {8, 8}},
    {"sm_103", {8, 8}},   {"sm_103a", {8, 8}},  {"sm_103f", {8, 8}},  {"sm_110", {9, 0}},
    {"sm_110a", {9, 0}},  {"sm_110f", {9, 0}},  {"sm_120", {8, 7}},   {"sm_120a", {8, 7}},
    {"sm_120f", {8, 8}},  {"sm_121", {8, 8}},   {"sm_121a", {8, 8}},  {"sm_121f", {8, 8}},
};

constexpr std::string_view kTargetOptions[] = {"debug", "map_f64_to_f32", "texmode_unified",
                                               "texmode_independent"};

// Published versions: major and its last minor (1.0-1.5, 2.0-2.3, ...), the
// ones ptxas 13.0 accepts.
constexpr PtxVersion kLastMinor[] = {{1, 5}, {2, 3}, {3, 2}, {4, 3}, {5, 1},
                                     {6, 5}, {7, 8}, {8, 8}, {9, 0}};

}  // namespace

std::optional<PtxVersion> first_version_with_target(std::string_view name) {
  for (const TargetName& t : kTargets)
    if (t.name == name) return t.first;
  return std::nullopt;
}

bool is_target_option(std::string_view name) {
  return std::find(std::begin(kTargetOptions), std::end(kTargetOptions), name) !=
         std::end(kTargetOptions);
}

bool is_isa_version(int major, int minor) {
  return std::any_of(std::begin(kLastMinor), std::end(kLastMinor), [&](PtxVersion v) {
    return v.major == major && minor >= 0 && minor <= v.minor;
  });
}

std::string isa_versions() {
  std::string out;
  for (const PtxVersion& v : kLastMinor) {
    out += out.empty() ? "" : ", ";
    out += std::to_string(v.major) + ".0";
    if (v.minor > 0) out += "-" + std::to_string(v.major) + "." + std::to_string(v.minor);
  }
  return out;
}

}  // namespace warpforge::ptx
