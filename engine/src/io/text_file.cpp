#include "io/text_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace ratelab::io {

namespace {

bool fail(std::string* error, std::string why) {
    if (error) *error = std::move(why);
    return false;
}

std::string limitText(std::size_t maxBytes) {
    if (maxBytes >= (1u << 20) && maxBytes % (1u << 20) == 0) {
        return std::to_string(maxBytes >> 20) + " MiB";
    }
    return std::to_string(maxBytes) + " bytes";
}

}  // namespace

FilePtr openForReading(const std::string& path, std::string* error) {
    FilePtr file(std::fopen(path.c_str(), "rb"));
    if (!file) {
        fail(error, std::string("cannot open the file: ") + std::strerror(errno));
        return nullptr;
    }
    // fopen() opens a directory for reading on Linux; the first read would fail with EISDIR.
    struct stat info {};
    if (fstat(fileno(file.get()), &info) == 0 && S_ISDIR(info.st_mode)) {
        fail(error, "is a directory");
        return nullptr;
    }
    return file;
}

std::optional<std::string> readAll(std::FILE* in, std::size_t maxBytes, std::string* error) {
    std::string text;
    struct stat info {};
    if (fstat(fileno(in), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
        const auto size = static_cast<std::size_t>(info.st_size);
        if (size > maxBytes) {
            fail(error, "file of " + std::to_string(size) + " bytes is larger than the " +
                            limitText(maxBytes) + " limit");
            return std::nullopt;
        }
        text.reserve(size);
    }
    char buffer[1 << 16];
    for (;;) {
        const std::size_t n = std::fread(buffer, 1, sizeof buffer, in);
        if (n > maxBytes - text.size()) {
            fail(error, "input is larger than the " + limitText(maxBytes) + " limit");
            return std::nullopt;
        }
        text.append(buffer, n);
        if (n < sizeof buffer) break;
    }
    if (std::ferror(in)) {
        fail(error, std::string("cannot read the file: ") + std::strerror(errno));
        return std::nullopt;
    }
    return text;
}

std::optional<std::string> readTextFile(const std::string& path, std::size_t maxBytes,
                                        std::string* error) {
    FilePtr file = openForReading(path, error);
    if (!file) return std::nullopt;
    return readAll(file.get(), maxBytes, error);
}

}  // namespace ratelab::io
