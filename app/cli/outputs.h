#pragma once

// Writing what a command produces: a path, or "-" for standard output, for every output. A
// failure prints "ratelab-cli CMD: PATH: cannot write: reason" and ends in kIoError.

#include <cstdio>
#include <string>
#include <string_view>

#include "cli/command.h"

namespace ratelab::cli {

/// Writes `text` to an output argument. A regular file is replaced atomically (a failed write
/// leaves the old file); a pipe, a device or a process substitution (>(...)) is written in place;
/// "-" is standard output. Returns kSuccess, or kIoError after printing why.
ExitCode writeOutput(const std::string& path, std::string_view text);

/// An output argument opened for streaming, for outputs too large to hold (decisions).
/// Not thread-safe.
class OutputStream {
public:
    /// Opens `path` ("-": standard output). When it cannot, prints why and file() is null.
    explicit OutputStream(std::string path);
    ~OutputStream();
    OutputStream(const OutputStream&) = delete;
    OutputStream& operator=(const OutputStream&) = delete;

    std::FILE* file() const { return file_; }
    /// Flushes and closes. Returns kSuccess, or kIoError after printing why when any write
    /// failed (`written` false: the caller's own writes failed).
    ExitCode close(bool written = true);

private:
    std::string path_;
    std::FILE* file_ = nullptr;
};

}  // namespace ratelab::cli
