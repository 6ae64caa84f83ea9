#pragma once

// Standard input kept in a temporary file, for a reader that must read a log given as "-" more
// than once (a fit reads it twice). The file lives in $TMPDIR (else /tmp) and is removed when
// the SpooledStdin goes.

#include <memory>
#include <string>

namespace ratelab::sim {

class SpooledStdin {
public:
    /// Copies standard input to its end into a new temporary file. Null, with the reason in
    /// `error`, when the file cannot be made or written (a full disk) or stdin cannot be read.
    static std::unique_ptr<SpooledStdin> make(std::string& error);
    ~SpooledStdin();
    SpooledStdin(const SpooledStdin&) = delete;
    SpooledStdin& operator=(const SpooledStdin&) = delete;

    const std::string& path() const { return path_; }

private:
    explicit SpooledStdin(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

}  // namespace ratelab::sim
