#pragma once

// Reading input files, for every reader in the tree (policy files, scenarios, access logs, the
// CLI's standard input): one place says what an unreadable input is called.

#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace ratelab::io {

struct FileCloser {
    void operator()(std::FILE* f) const {
        if (f) std::fclose(f);
    }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

/// Opens `path` for reading: a regular file, a FIFO, a character device such as /dev/stdin, or
/// a process substitution (/dev/fd/N). Null, with the reason in *error when `error` is not
/// null, when it cannot: "is a directory", "cannot open the file: No such file or directory".
/// The reason does not repeat the path. Thread-safe.
FilePtr openForReading(const std::string& path, std::string* error);

/// Reads `in` to its end, never sizing it by seeking (a pipe has no size), refusing more than
/// `maxBytes`. Nullopt, with the reason in *error, on a read error or an oversized input.
std::optional<std::string> readAll(std::FILE* in, std::size_t maxBytes, std::string* error);

/// openForReading() then readAll(): the whole text of `path`.
std::optional<std::string> readTextFile(const std::string& path, std::size_t maxBytes,
                                        std::string* error);

}  // namespace ratelab::io
