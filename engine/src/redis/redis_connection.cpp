#include "redis/redis_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ratelab::redis {

namespace {

std::string errnoText(int error) {
    return std::strerror(error);
}

// hiredis builds replies through these functions (redisReplyObjectFunctions), as its defaults
// do, but takes reply structs and small element arrays from a per-thread free list. A reply is
// freed on the thread that read it (the store's calls run on their caller's thread).
constexpr std::size_t kPooledElements = 8;
constexpr std::size_t kPoolLimit = 4096;

struct ReplyPool {
    std::vector<redisReply*> replies;
    std::vector<redisReply**> arrays;  ///< kPooledElements slots each
    ~ReplyPool() {
        for (redisReply* r : replies)
            std::free(r);
        for (redisReply** a : arrays)
            std::free(a);
    }
};
thread_local ReplyPool pool;

redisReply* newReply(const redisReadTask* task, int type) {
    redisReply* r = nullptr;
    if (!pool.replies.empty()) {
        r = pool.replies.back();
        pool.replies.pop_back();
    } else {
        r = static_cast<redisReply*>(std::malloc(sizeof(redisReply)));
        if (!r) return nullptr;
    }
    std::memset(r, 0, sizeof *r);
    r->type = type;
    if (task->parent) {
        auto* parent = static_cast<redisReply*>(task->parent->obj);
        parent->element[task->idx] = r;
    }
    return r;
}

void* createString(const redisReadTask* task, char* text, size_t length) {
    auto* buffer = static_cast<char*>(std::malloc(length + 1));
    if (!buffer) return nullptr;
    redisReply* r = newReply(task, task->type);
    if (!r) {
        std::free(buffer);
        return nullptr;
    }
    std::memcpy(buffer, text, length);
    buffer[length] = '\0';
    r->str = buffer;
    r->len = length;
    return r;
}

void* createArray(const redisReadTask* task, int elements) {
    redisReply** array = nullptr;
    if (elements > 0) {
        if (static_cast<std::size_t>(elements) <= kPooledElements && !pool.arrays.empty()) {
            array = pool.arrays.back();
            pool.arrays.pop_back();
        } else {
            array = static_cast<redisReply**>(std::malloc(
                sizeof(redisReply*) * std::max<std::size_t>(kPooledElements, elements)));
            if (!array) return nullptr;
        }
    }
    redisReply* r = newReply(task, REDIS_REPLY_ARRAY);
    if (!r) {
        std::free(array);
        return nullptr;
    }
    r->elements = static_cast<std::size_t>(elements);
    r->element = array;
    return r;
}

void* createInteger(const redisReadTask* task, long long value) {
    redisReply* r = newReply(task, REDIS_REPLY_INTEGER);
    if (r) r->integer = value;
    return r;
}

void* createNil(const redisReadTask* task) {
    return newReply(task, REDIS_REPLY_NIL);
}

redisReplyObjectFunctions kPooledFunctions = {createString, createArray, createInteger, createNil,
                                              releaseReply};

}  // namespace

void releaseReply(void* object) {
    auto* r = static_cast<redisReply*>(object);
    if (!r) return;
    if (r->type == REDIS_REPLY_ARRAY) {
        for (std::size_t i = 0; i < r->elements; ++i)
            if (r->element[i]) releaseReply(r->element[i]);
        if (r->element) {
            if (r->elements <= kPooledElements && pool.arrays.size() < kPoolLimit)
                pool.arrays.push_back(r->element);
            else
                std::free(r->element);
        }
    } else if (r->str) {
        std::free(r->str);
    }
    if (pool.replies.size() < kPoolLimit)
        pool.replies.push_back(r);
    else
        std::free(r);
}

std::unique_ptr<Connection> Connection::open(const Endpoint& endpoint, Deadline deadline,
                                             std::string* error) {
    redisContext* context = endpoint.isUnix()
                                ? redisConnectUnixNonBlock(endpoint.unixPath.c_str())
                                : redisConnectNonBlock(endpoint.host.c_str(), endpoint.port);
    if (!context) {
        *error = "connect to " + endpoint.name() + ": out of memory";
        return nullptr;
    }
    if (context->err) {
        *error = "connect to " + endpoint.name() + ": " + context->errstr;
        redisFree(context);
        return nullptr;
    }
    context->reader->fn = &kPooledFunctions;
    std::unique_ptr<Connection> connection(new Connection(context));
    // A non-blocking connect() completes when the socket turns writable; SO_ERROR tells how.
    if (!connection->wait(POLLOUT, deadline)) {
        *error = "connect to " + endpoint.name() + ": " +
                 (connection->failure_ == Failure::Timeout ? "timed out" : connection->error_);
        return nullptr;
    }
    int soError = 0;
    socklen_t length = sizeof soError;
    if (getsockopt(context->fd, SOL_SOCKET, SO_ERROR, &soError, &length) != 0) soError = errno;
    if (soError != 0) {
        *error = "connect to " + endpoint.name() + ": " + errnoText(soError);
        return nullptr;
    }
    connection->lastUse = Clock::now();
    return connection;
}

Connection::~Connection() {
    redisFree(context_);
}

void Connection::fail(Failure failure, std::string error) {
    if (failure_ != Failure::None) return;
    failure_ = failure;
    error_ = std::move(error);
}

bool Connection::wait(short events, Deadline deadline) {
    for (;;) {
        const auto left = deadline - Clock::now();
        if (left <= Clock::duration::zero()) {
            fail(Failure::Timeout, "timed out");
            return false;
        }
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                         static_cast<long>(ns % 1'000'000'000)};
        pollfd fd{context_->fd, events, 0};
        const int n = ppoll(&fd, 1, &timeout, nullptr);
        if (n > 0) return true;  // ready, or an error the next send/recv reports
        if (n == 0) continue;    // re-check the deadline (ppoll may wake a little early)
        if (errno == EINTR) continue;
        fail(Failure::Io, "poll: " + errnoText(errno));
        return false;
    }
}

void Connection::append(std::span<const std::string_view> args) {
    // RESP: *<argc>\r\n then $<length>\r\n<bytes>\r\n per argument. Written here rather than
    // with redisFormatCommandArgv(), which formats every argument with sprintf on each call
    // (docs/BENCHMARKS.md, "Why the code is as it is"); hiredis still parses every reply.
    auto number = [this](char prefix, std::size_t n) {
        char buffer[24];
        buffer[0] = prefix;
        char* end = std::to_chars(buffer + 1, buffer + sizeof buffer - 2, n).ptr;
        *end++ = '\r';
        *end++ = '\n';
        output_.append(buffer, end);
    };
    number('*', args.size());
    for (std::string_view a : args) {
        number('$', a.size());
        output_.append(a);
        output_.append("\r\n", 2);
    }
}

bool Connection::flush(Deadline deadline) {
    std::size_t done = 0;
    while (ok() && done < output_.size()) {
        const ssize_t n =
            ::send(context_->fd, output_.data() + done, output_.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            sent_ += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            wait(POLLOUT, deadline);
        } else {
            fail(Failure::Io, "send: " + errnoText(errno));
        }
    }
    output_.clear();
    lastUse = Clock::now();
    justSent_ = true;
    return ok();
}

Reply Connection::read(Deadline deadline) {
    while (ok()) {
        void* reply = nullptr;
        if (redisReaderGetReply(context_->reader, &reply) != REDIS_OK) {
            fail(Failure::Protocol, std::string("protocol error: ") + context_->reader->errstr);
            break;
        }
        if (reply) return Reply(static_cast<redisReply*>(reply));
        // Right after a send nothing has come back yet: wait first. Later replies of a pipeline
        // usually arrived with the first ones: try the socket before waiting on it.
        if (justSent_ && !wait(POLLIN, deadline)) break;
        justSent_ = false;
        char buffer[16 * 1024];
        const ssize_t n = ::recv(context_->fd, buffer, sizeof buffer, 0);
        if (n > 0) {
            if (redisReaderFeed(context_->reader, buffer, static_cast<std::size_t>(n)) != REDIS_OK)
                fail(Failure::Protocol, std::string("protocol error: ") + context_->reader->errstr);
        } else if (n == 0) {
            fail(Failure::Closed, "server closed the connection");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            if (!wait(POLLIN, deadline)) break;
        } else {
            fail(Failure::Io, "receive: " + errnoText(errno));
        }
    }
    return nullptr;
}

Reply Connection::call(std::span<const std::string_view> args, Deadline deadline) {
    append(args);
    if (!flush(deadline)) return nullptr;
    return read(deadline);
}

bool Connection::stale() {
    char byte;
    const ssize_t n = ::recv(context_->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n >= 0) return true;  // 0: closed; > 0: bytes nobody asked for
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace ratelab::redis
