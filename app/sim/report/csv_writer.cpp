#include "sim/report/csv_writer.h"

#include <charconv>

namespace ratelab::sim {

namespace {

// The buffer is written out once a row ends within kRowRoom of kBufferBytes; rows are shorter
// than that, so the buffer keeps the one allocation it starts with.
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
constexpr std::size_t kRowRoom = 1024;

}  // namespace

CsvWriter::CsvWriter(std::FILE* out, std::string_view header) : out_(out) {
    buffer_.reserve(kBufferBytes);
    buffer_.append(header);
    buffer_.push_back('\n');
}

void CsvWriter::separate() {
    if (rowStarted_) buffer_.push_back(',');
    rowStarted_ = true;
}

void CsvWriter::text(std::string_view value) {
    separate();
    if (value.find_first_of(",\"\r\n") == std::string_view::npos) {
        buffer_.append(value);
        return;
    }
    buffer_.push_back('"');
    for (char c : value) {
        if (c == '"') buffer_.push_back('"');
        buffer_.push_back(c);
    }
    buffer_.push_back('"');
}

void CsvWriter::plain(std::string_view value) {
    separate();
    buffer_.append(value);
}

void CsvWriter::number(std::int64_t value) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    plain(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void CsvWriter::endRow() {
    buffer_.push_back('\n');
    rowStarted_ = false;
    if (buffer_.size() >= kBufferBytes - kRowRoom) flush();
}

void CsvWriter::flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) {
        ok_ = false;
    }
    buffer_.clear();
}

bool CsvWriter::finish() {
    flush();
    if (std::fflush(out_) != 0) ok_ = false;
    return ok_;
}

}  // namespace ratelab::sim
