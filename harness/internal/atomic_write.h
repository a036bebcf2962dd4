// Whole-file writes that a reader never sees half done.
#pragma once
#include <string>

namespace tp {

// Writes text to path through a temporary file and a rename: a reader never sees half a file,
// and a failed write leaves what was there. Throws std::runtime_error naming the path.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace tp
