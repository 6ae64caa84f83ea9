#pragma once

// Reading a log as it is stored (simulator internals): a file or standard input ("-"), plain or
// gzip (by its magic bytes, not its name; concatenated members as `cat a.gz b.gz` makes them),
// line by line through a fixed buffer, so memory stays bounded whatever the file's size.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab::sim {

/// Lines longer than this are reported and skipped (no access log writes a megabyte per line).
inline constexpr std::size_t kMaxLogLineBytes = 1 << 20;

/// One input, line by line. Not thread-safe.
class LogInput {
public:
    /// Opens `path` ("-" is standard input) with io::openForReading. Null with `error` set
    /// ("cannot open the file: No such file or directory", "is a directory"); messages do not
    /// repeat the path.
    static std::unique_ptr<LogInput> open(const std::string& path, std::string& error);
    ~LogInput();
    LogInput(const LogInput&) = delete;
    LogInput& operator=(const LogInput&) = delete;

    /// The next line, without "\n" or "\r\n"; valid until the next call. False at the end, or
    /// on an error (then error() is set). A line over kMaxLogLineBytes comes back truncated
    /// to that length with tooLong() set.
    bool next(std::string_view& line);
    /// 1-based number of the line next() returned last.
    std::int64_t lineNumber() const { return lineNumber_; }
    bool tooLong() const { return tooLong_; }

    /// Why reading stopped early: corrupt gzip data, a read error. Empty otherwise.
    const std::string& error() const { return error_; }
    /// The error is the system's (the file could not be read), not the data's.
    bool readFailed() const { return readFailed_; }
    /// The gzip stream ended without its trailer: the file was cut off (the lines before the
    /// cut were read). A warning, not an error.
    bool truncated() const { return truncated_; }
    bool gzip() const { return gzip_; }
    /// Bytes of the stored file consumed so far, and its size (-1 for a pipe): for progress.
    std::int64_t bytesRead() const { return bytesRead_; }
    std::int64_t size() const { return size_; }
    /// The first bytes of text (after gunzip), as read: for telling a binary file early.
    std::string_view head() const;

private:
    LogInput() = default;
    bool fill();     // appends decoded bytes to text_; false at the end or on error
    bool readRaw();  // refills raw_ from the file

    std::string path_;
    std::FILE* file_ = nullptr;
    bool ownsFile_ = false;
    bool readFailed_ = false;
    bool gzip_ = false;
    bool eof_ = false;
    bool truncated_ = false;
    bool tooLong_ = false;
    std::string error_;
    std::int64_t lineNumber_ = 0;
    std::int64_t bytesRead_ = 0;
    std::int64_t size_ = -1;

    std::vector<char> raw_;  // compressed (or plain) bytes read from the file
    std::size_t rawPos_ = 0, rawEnd_ = 0;
    std::vector<char> text_;  // decoded bytes; [textPos_, textEnd_) not yet returned
    std::size_t textPos_ = 0, textEnd_ = 0;
    std::string head_;
    std::string longLine_;   // the kept start of a line over kMaxLogLineBytes
    bool skipRest_ = false;  // dropping the rest of that line
    struct Inflater;
    std::unique_ptr<Inflater> inflater_;
};

}  // namespace ratelab::sim
