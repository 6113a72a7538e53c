// The files a user names on the command line: read only when regular and not
// too large (no input can make a command wait on a FIFO or fill memory from
// /dev/zero), written only under a name, with the reason when they cannot be.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace warpforge::cli {

// The text of the regular file `path`. Anything else (a directory, a FIFO, a
// device such as /dev/zero) or a file over `max_bytes` is refused before a
// byte is read; `what` names such files in the refusal ("PTX files").
std::string read_regular_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// Refuses an empty file name given as `flag`'s value (-o, --svg), before a
// command does its work.
void require_file_name(const std::string& flag, const std::string& path);
// Writes `bytes` to `path`, the value of `flag`: refused when the name is
// empty or the file cannot be written, saying why.
void write_named_file(const std::string& flag, const std::string& path, std::string_view bytes);

}  // namespace warpforge::cli
