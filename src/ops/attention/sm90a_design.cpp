#include "sm90a_design.hpp"

#include "warpforge/error.hpp"

namespace warpforge::ops {

tile::WarpSpecializedConfig sm90a_attention_config(int stages, std::uint32_t full_barriers,
                                                   std::uint32_t empty_barriers, std::uint32_t stage_bytes,
                                                   int consumers) {
  tile::WarpSpecializedConfig c;
  c.consumers = consumers;
  c.schedule = tile::ConsumerSchedule::cooperative;
  c.stages = stages;
  c.full_barriers = full_barriers;
  c.empty_barriers = empty_barriers;
  c.stage_bytes = stage_bytes;
  c.producer_registers = 24;
  c.consumer_registers = (65536 - 128 * c.producer_registers) / (128 * consumers) / 8 * 8;
  c.dependent_launch = false;
  return c;
}

void OneItemPerCta::for_each(const std::function<void(const tile::WorkItem&)>& body, const dsl::Reg* offset,
                             int /*stride*/) const {
  if (offset) throw TileError(name_ + ": one item a CTA, shared by the consumers (cooperative)");
  k_.if_then(valid_, [&] { body(item_); });
}

}  // namespace warpforge::ops
