// What the PTX ISA defines beyond warpforge's vocabulary (vocabulary.hpp, which
// holds every instruction): the `.target` names and the `.version` numbers,
// so that the verifier tells a misspelt target or version from a real one
// without ptxas. Private to the ptx layer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "warpforge/ptx/target.hpp"

namespace warpforge::ptx {

// The first PTX ISA version whose `.target` may name `name` (sm_80, sm_90a,
// sm_100f, ...); nothing for a name that is no target of the ISA. The
// platform options after the first name (debug, map_f64_to_f32,
// texmode_unified, texmode_independent) are `target_option`s instead.
std::optional<PtxVersion> first_version_with_target(std::string_view name);
bool is_target_option(std::string_view name);

// Whether major.minor is a published PTX ISA version; `isa_versions()`
// lists them ("1.0-1.5, 2.0-2.3, ..., 9.0") for a message.
bool is_isa_version(int major, int minor);
std::string isa_versions();

}  // namespace warpforge::ptx
