// loom/did_you_mean.h — "did you mean 'add'?" for a mistyped name (an op,
// a device type, a plugin), as the errors that refuse one suggest it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loom {

// The candidate nearest to `name` by edit distance (insertions, deletions,
// substitutions and swaps of neighbours, letters compared case-blind) when
// it is near enough to be a typo — at most a third of the name's length,
// and at least 1 — else "". Ties go to the earlier candidate.
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean 'add'?)" or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace loom
