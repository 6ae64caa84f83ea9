#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace ratelab::sim {

/// Streams CSV rows to a file through one large buffer, written out whenever it nears its size,
/// so that a replay of millions of requests makes few write calls. Fields are quoted as RFC 4180
/// says (a field holding a comma, a quote or a line break in quotes, its quotes doubled); the
/// writer puts the commas between a row's fields. Not thread-safe; one writer per file.
class CsvWriter {
public:
    /// Writes `header`, the column names already joined by commas, as the first row.
    CsvWriter(std::FILE* out, std::string_view header);
    CsvWriter(const CsvWriter&) = delete;
    CsvWriter& operator=(const CsvWriter&) = delete;

    /// The row's next field, quoted when it needs to be.
    void text(std::string_view value);
    /// The row's next field as it is. REQUIRES: no comma, quote or line break in `value`.
    void plain(std::string_view value);
    void number(std::int64_t value);
    /// Ends the row.
    void endRow();
    /// Writes out what is buffered and flushes the file; false when any write failed.
    bool finish();

private:
    void separate();
    void flush();

    std::FILE* out_;
    std::string buffer_;
    bool rowStarted_ = false;
    bool ok_ = true;
};

}  // namespace ratelab::sim
