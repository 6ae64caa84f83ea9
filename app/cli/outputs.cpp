#include "cli/outputs.h"

#include <sys/stat.h>

#include <QSaveFile>
#include <cerrno>
#include <cstring>

namespace ratelab::cli {

namespace {

ExitCode cannotWrite(const std::string& path, const std::string& why) {
    return fail(kIoError, path + ": cannot write: " + why);
}

// Outputs that are not regular files cannot be replaced by a rename: they are written in place.
bool isSpecialFile(const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

}  // namespace

ExitCode writeOutput(const std::string& path, std::string_view text) {
    if (path == "-" || isSpecialFile(path)) {
        OutputStream out(path);
        if (!out.file()) return kIoError;
        const bool written = std::fwrite(text.data(), 1, text.size(), out.file()) == text.size();
        return out.close(written);
    }
    QSaveFile file(QString::fromStdString(path));
    const auto size = static_cast<qint64>(text.size());
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), size) != size ||
        !file.commit()) {
        return cannotWrite(path, file.errorString().toStdString());
    }
    return kSuccess;
}

OutputStream::OutputStream(std::string path) : path_(std::move(path)) {
    file_ = path_ == "-" ? stdout : std::fopen(path_.c_str(), "wb");
    if (!file_) cannotWrite(path_, std::strerror(errno));
}

OutputStream::~OutputStream() {
    if (file_) close();
}

ExitCode OutputStream::close(bool written) {
    if (!file_) return kIoError;
    bool ok = written && std::fflush(file_) == 0 && !std::ferror(file_);
    const int error = errno;
    if (file_ != stdout && std::fclose(file_) != 0) ok = false;
    file_ = nullptr;
    if (ok) return kSuccess;
    return cannotWrite(path_ == "-" ? "standard output" : path_,
                       std::strerror(error ? error : EIO));
}

}  // namespace ratelab::cli
