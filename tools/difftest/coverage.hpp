// What the harness does not cover, and why: the one list that, together
// with the families' units (families()), says which instruction forms the
// recorded truth checks. Each family builds its units from lists of opcodes,
// types and modifiers in its own file; once ptx/ has its vocabulary table
// (issue 26 item 0) those lists become queries of it, and this list the forms
// the query returns that no family takes.
#pragma once

#include <string>
#include <vector>

namespace warpforge::difftest {

struct Uncovered {
  std::string form;    // the PTX form or family of forms
  std::string reason;  // why the harness leaves it out
};

const std::vector<Uncovered>& uncovered();

}  // namespace warpforge::difftest
