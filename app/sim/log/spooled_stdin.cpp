#include "sim/log/spooled_stdin.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ratelab::sim {

std::unique_ptr<SpooledStdin> SpooledStdin::make(std::string& error) {
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir && *dir ? dir : "/tmp") + "/ratelab-stdin-XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
        error = "cannot keep standard input for a second reading: " + name + ": " +
                std::strerror(errno);
        return nullptr;
    }
    std::unique_ptr<SpooledStdin> spool(new SpooledStdin(name));  // removes the file on failure
    std::vector<char> buffer(1 << 20);
    while (true) {
        const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), stdin);
        if (n == 0) break;
        for (std::size_t done = 0; done < n;) {
            const ssize_t w = ::write(fd, buffer.data() + done, n - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                error = "cannot keep standard input for a second reading: " + name + ": " +
                        std::strerror(w < 0 ? errno : ENOSPC);
                ::close(fd);
                return nullptr;
            }
            done += static_cast<std::size_t>(w);
        }
    }
    const bool readFailed = std::ferror(stdin) != 0;
    if (::close(fd) != 0 || readFailed) {
        error = readFailed ? std::string("cannot read standard input: ") + std::strerror(errno)
                           : "cannot keep standard input for a second reading: " + name + ": " +
                                 std::strerror(errno);
        return nullptr;
    }
    return spool;
}

SpooledStdin::~SpooledStdin() {
    ::unlink(path_.c_str());
}

}  // namespace ratelab::sim
