#include "attention_path.hpp"

namespace warpforge::ops {

const std::vector<const AttentionPath*>& attention_paths() {
  // sm90a first: it refuses devices without wgmma, and sm80 runs everywhere.
  static const std::vector<const AttentionPath*> paths = {&sm90a_attention_path(), &sm80_attention_path()};
  return paths;
}

const std::vector<const AttentionBackwardPath*>& attention_backward_paths() {
  // sm90a first: it refuses devices without wgmma and head dims other than
  // 64 and 128, which the sm80 kernels run.
  static const std::vector<const AttentionBackwardPath*> paths = {&sm90a_attention_backward_path(),
                                                                  &sm80_attention_backward_path()};
  return paths;
}

}  // namespace warpforge::ops
