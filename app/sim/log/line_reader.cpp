#include "sim/log/line_reader.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "io/text_file.h"

namespace ratelab::sim {

namespace {

constexpr std::size_t kRawChunk = 256 << 10;
constexpr std::size_t kTextBuffer = 2 * kMaxLogLineBytes;
constexpr std::size_t kHeadBytes = 4096;

}  // namespace

struct LogInput::Inflater {
    z_stream zs{};
    bool initialised = false;
    bool memberEnded = false;  // the last member's trailer was read
    ~Inflater() {
        if (initialised) inflateEnd(&zs);
    }
};

std::unique_ptr<LogInput> LogInput::open(const std::string& path, std::string& error) {
    std::unique_ptr<LogInput> in(new LogInput());
    in->path_ = path;
    if (path == "-") {
        in->file_ = stdin;
    } else {
        in->file_ = io::openForReading(path, &error).release();
        if (!in->file_) return nullptr;
        in->ownsFile_ = true;
        struct stat st {};
        if (::fstat(fileno(in->file_), &st) == 0 && S_ISREG(st.st_mode)) in->size_ = st.st_size;
    }
    in->raw_.resize(kRawChunk);
    in->text_.resize(kTextBuffer);
    if (!in->readRaw() && !in->error_.empty()) {
        error = in->error_;
        return nullptr;
    }
    if (in->rawEnd_ >= 2 && static_cast<unsigned char>(in->raw_[0]) == 0x1f &&
        static_cast<unsigned char>(in->raw_[1]) == 0x8b) {
        in->gzip_ = true;
        in->inflater_ = std::make_unique<Inflater>();
        if (inflateInit2(&in->inflater_->zs, 15 + 16) != Z_OK) {
            error = "cannot start zlib";
            return nullptr;
        }
        in->inflater_->initialised = true;
    }
    // Decode the first bytes now, so head() can tell text from binary before any line.
    while (in->textEnd_ < kHeadBytes && in->fill()) {
    }
    if (!in->error_.empty()) {
        error = in->error_;
        return nullptr;
    }
    in->head_.assign(in->text_.data(), std::min(in->textEnd_, kHeadBytes));
    return in;
}

LogInput::~LogInput() {
    if (ownsFile_ && file_) std::fclose(file_);
}

std::string_view LogInput::head() const {
    return head_;
}

bool LogInput::readRaw() {
    if (eof_) return false;
    rawPos_ = 0;
    rawEnd_ = std::fread(raw_.data(), 1, raw_.size(), file_);
    bytesRead_ += static_cast<std::int64_t>(rawEnd_);
    if (rawEnd_ < raw_.size()) {
        if (std::ferror(file_)) {
            error_ = std::string("cannot read the file: ") + std::strerror(errno);
            readFailed_ = true;
            return false;
        }
        eof_ = true;
    }
    return rawEnd_ > 0;
}

bool LogInput::fill() {
    if (textEnd_ == text_.size()) return false;
    if (!gzip_) {
        if (rawPos_ == rawEnd_ && !readRaw()) return false;
        const std::size_t n = std::min(rawEnd_ - rawPos_, text_.size() - textEnd_);
        std::memcpy(text_.data() + textEnd_, raw_.data() + rawPos_, n);
        rawPos_ += n;
        textEnd_ += n;
        return true;
    }
    z_stream& zs = inflater_->zs;
    for (;;) {
        if (rawPos_ == rawEnd_ && !readRaw()) {
            // The input ended: cleanly after a member's trailer, or cut off inside one.
            if (!error_.empty()) return false;
            if (!inflater_->memberEnded) truncated_ = true;
            return false;
        }
        if (inflater_->memberEnded) {
            // Another member follows (cat a.gz b.gz), or padding that is not gzip: ignored,
            // as gzip -d ignores trailing garbage.
            if (static_cast<unsigned char>(raw_[rawPos_]) != 0x1f) {
                rawPos_ = rawEnd_;
                eof_ = true;
                return false;
            }
            inflateReset(&zs);
            inflater_->memberEnded = false;
        }
        zs.next_in = reinterpret_cast<Bytef*>(raw_.data() + rawPos_);
        zs.avail_in = static_cast<uInt>(rawEnd_ - rawPos_);
        zs.next_out = reinterpret_cast<Bytef*>(text_.data() + textEnd_);
        zs.avail_out = static_cast<uInt>(text_.size() - textEnd_);
        const int rc = inflate(&zs, Z_NO_FLUSH);
        const std::size_t produced = text_.size() - textEnd_ - zs.avail_out;
        rawPos_ = rawEnd_ - zs.avail_in;
        textEnd_ += produced;
        if (rc == Z_STREAM_END) {
            inflater_->memberEnded = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            const std::int64_t at = bytesRead_ - static_cast<std::int64_t>(rawEnd_ - rawPos_);
            error_ = "corrupt gzip data near byte " + std::to_string(at) +
                     " (zlib: " + (zs.msg ? zs.msg : "error " + std::to_string(rc)) + ")";
            return false;
        }
        if (produced > 0) return true;
        if (textEnd_ == text_.size()) return false;
    }
}

bool LogInput::next(std::string_view& line) {
    tooLong_ = false;
    for (;;) {
        const char* begin = text_.data() + textPos_;
        const std::size_t available = textEnd_ - textPos_;
        const void* nl = std::memchr(begin, '\n', available);
        if (skipRest_) {
            // The rest of a line too long to keep.
            if (nl) {
                textPos_ += static_cast<std::size_t>(static_cast<const char*>(nl) - begin) + 1;
                skipRest_ = false;
                continue;
            }
            textPos_ = textEnd_ = 0;
            if (!fill()) {
                skipRest_ = false;
                return false;
            }
            continue;
        }
        if (nl) {
            const std::size_t n = static_cast<std::size_t>(static_cast<const char*>(nl) - begin);
            textPos_ += n + 1;
            std::size_t len = n;
            if (len > 0 && begin[len - 1] == '\r') --len;
            if (len > kMaxLogLineBytes) {
                len = kMaxLogLineBytes;
                tooLong_ = true;
            }
            ++lineNumber_;
            line = std::string_view(begin, len);
            return true;
        }
        if (available >= kMaxLogLineBytes) {
            longLine_.assign(begin, kMaxLogLineBytes);
            textPos_ = textEnd_ = 0;
            skipRest_ = true;
            tooLong_ = true;
            ++lineNumber_;
            line = longLine_;
            return true;
        }
        if (textPos_ > 0) {
            std::memmove(text_.data(), begin, available);
            textPos_ = 0;
            textEnd_ = available;
        }
        if (!fill()) {
            if (!error_.empty() || textEnd_ == textPos_) return false;
            // The last line has no newline.
            std::size_t len = textEnd_ - textPos_;
            const char* start = text_.data() + textPos_;
            if (start[len - 1] == '\r') --len;
            textPos_ = textEnd_;
            ++lineNumber_;
            line = std::string_view(start, len);
            return true;
        }
    }
}

}  // namespace ratelab::sim
