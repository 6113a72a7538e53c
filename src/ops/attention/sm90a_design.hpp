// What the sm90a attention designs share on the warp-specialized template:
// their configuration (two consumer warpgroups sharing each item, the
// producer's registers given to them), and the work source of one item a
// CTA that the backward and the TMA-fed decode take (the forward walks its
// items in persistent CTAs instead).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "warpforge/dsl.hpp"
#include "warpforge/tile/warp_specialized.hpp"

namespace warpforge::ops {

// `consumers` consumer warpgroups on each item (cooperative), a pipeline of
// `stages` slots of stage_bytes at these barrier offsets; the producer's 24
// registers a thread and the consumers' share of the rest fill the 65536 of
// an SM: 128·24 + 256·240 (two), + 384·160 (three) (PTX ISA 9.7.19.5
// setmaxnreg: a multiple of 8).
tile::WarpSpecializedConfig sm90a_attention_config(int stages, std::uint32_t full_barriers,
                                                   std::uint32_t empty_barriers, std::uint32_t stage_bytes,
                                                   int consumers = 2);

// One work item a CTA, shared by the consumers: a design's source sets
// item_ and valid_ (whether the CTA has its item) in its constructor.
class OneItemPerCta : public tile::WorkSource {
 public:
  void for_each(const std::function<void(const tile::WorkItem&)>& body, const dsl::Reg* offset,
                int stride) const override;

 protected:
  OneItemPerCta(dsl::Kernel& k, std::string name) : k_(k), name_(std::move(name)) {}
  dsl::Kernel& k_;
  std::string name_;
  tile::WorkItem item_;
  dsl::Pred valid_;
};

}  // namespace warpforge::ops
