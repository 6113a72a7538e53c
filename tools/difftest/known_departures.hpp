// Where the simulator is known to depart from the recorded GPU, unit by
// unit, with the most differing cases the recording showed and why: the
// open work of making the simulator compute the hardware's bits (issue 26
// item 4). A replay passes such a unit while it differs in no more cases than
// stated, and fails it when it differs in more; a unit that has come to agree
// is reported, so that its entry is removed. An entry is never a way to pass
// a new difference: each names the rule still to find or to implement.
#pragma once

#include <cstdint>
#include <string_view>

namespace warpforge::difftest {

struct KnownDeparture {
  std::string_view family, unit;
  std::int64_t max_differing_cases;
  std::string_view why;
};

// nullptr when the unit has no known departure.
const KnownDeparture* known_departure(std::string_view family, std::string_view unit);

}  // namespace warpforge::difftest
