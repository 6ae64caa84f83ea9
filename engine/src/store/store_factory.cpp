#include "ratelab/store_factory.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ratelab/memory_store.h"
#include "ratelab/redis_store.h"

namespace ratelab {

namespace {

constexpr std::size_t kMaxPasswordBytes = 4096;

// The AUTH password from where the store block says it is. Errors name the variable or the file,
// never what they hold.
bool readPassword(const StoreConfig& config, std::string* password, std::string* error) {
    if (!config.passwordEnv.empty()) {
        const char* value = std::getenv(config.passwordEnv.c_str());
        if (!value || !*value) {
            *error = "store.password_env: the environment variable " + config.passwordEnv +
                     (value ? " is empty" : " is not set");
            return false;
        }
        *password = value;
        return true;
    }
    if (config.passwordFile.empty()) return true;
    const std::string where = "store.password_file: " + config.passwordFile;
    std::FILE* f = std::fopen(config.passwordFile.c_str(), "rb");
    if (!f) {
        *error = where + ": cannot read: " + std::strerror(errno);
        return false;
    }
    char buffer[kMaxPasswordBytes + 2];
    const std::size_t size = std::fread(buffer, 1, sizeof buffer, f);
    const bool failed = std::ferror(f) != 0;
    const int readErrno = errno;
    std::fclose(f);
    if (failed) {
        *error = where + ": cannot read: " + std::strerror(readErrno);
        return false;
    }
    std::string text(buffer, size);
    std::memset(buffer, 0, sizeof buffer);
    if (text.ends_with('\n')) text.pop_back();  // one final line end, as editors and echo leave
    if (text.ends_with('\r')) text.pop_back();
    if (text.size() > kMaxPasswordBytes) {
        *error = where + ": longer than " + std::to_string(kMaxPasswordBytes) +
                 " bytes; the file should hold the password alone";
        return false;
    }
    if (text.empty()) {
        *error = where + ": the file is empty";
        return false;
    }
    if (text.find_first_of("\r\n") != std::string::npos) {
        *error = where + ": more than one line; the file should hold the password alone";
        return false;
    }
    *password = std::move(text);
    return true;
}

}  // namespace

std::unique_ptr<Store> makeStore(const StoreConfig& config, std::string* error) {
    if (config.kind == StoreConfig::Kind::Memory) {
        MemoryStoreOptions options;
        options.maxBuckets = config.maxBuckets;
        return makeMemoryStore(options);
    }
    std::string scratch;
    if (!error) error = &scratch;
    RedisStoreOptions options;
    options.urls = config.urls;
    options.keyNamespace = config.keyNamespace;
    options.username = config.username;
    if (!readPassword(config, &options.password, error)) return nullptr;
    return makeRedisStore(options, error);
}

#if !RATELAB_WITH_REDIS
// A build without hiredis (RATELAB_WITH_REDIS=OFF) still reads policies that name Redis; asking
// for the store is where it says that it has none.
std::unique_ptr<Store> makeRedisStore(const RedisStoreOptions&, std::string* error) {
    if (error) *error = "this ratelab was built without the Redis store (RATELAB_WITH_REDIS=OFF)";
    return nullptr;
}
#endif

}  // namespace ratelab
