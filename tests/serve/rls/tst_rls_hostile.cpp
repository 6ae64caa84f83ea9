// Hostile clients of the gRPC listener: bytes that are not HTTP/2, HTTP/1.1, HTTP/2 frames that
// break the protocol, a connection that never sends its settings, and thousands of streams held
// open without a message. Each is closed (or queued by the stream limit) without taking the
// server down, and a well-behaved client's calls keep completing meanwhile, each within its
// deadline.

#include <grpcpp/generic/generic_stub.h>

#include <QtTest>
#include <atomic>
#include <random>
#include <thread>

#include "fixtures/rls_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const RlsFiles kConfig = {{"rl.yaml", R"(domain: rl
descriptors:
  - key: key1
    value: value1
    rate_limit: {unit: second, requests_per_unit: 1000000}
)"}};
constexpr const char* kMethod = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

std::string junk(std::mt19937& random, std::size_t n) {
    std::string out(n, '\0');
    for (char& c : out)
        c = static_cast<char>(random() & 0xff);
    return out;
}

// The HTTP/2 client preface and an empty SETTINGS frame: a client the server accepts.
std::string http2Start() {
    std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    out += std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);
    return out;
}

// `calls` well-behaved calls, each with a 2 s deadline; how many were answered OK.
int wellBehaved(RlsClient& client, int calls) {
    int ok = 0;
    for (int i = 0; i < calls; ++i) {
        auto request = RlsClient::request("rl", {{{"key1", "value1"}}});
        if (client.ask(request, 2000).status.ok()) ++ok;
    }
    return ok;
}

// Streams opened on ShouldRateLimit that never send their message: each holds a slot of the
// server's concurrent streams until cancelled.
class StreamFlood {
public:
    StreamFlood(std::uint16_t port, int channels, int streamsPerChannel) {
        for (int c = 0; c < channels; ++c) {
            grpc::ChannelArguments args;
            args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
            auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                                     grpc::InsecureChannelCredentials(), args);
            stubs_.push_back(std::make_unique<grpc::GenericStub>(channel));
            for (int s = 0; s < streamsPerChannel; ++s) {
                auto context = std::make_unique<grpc::ClientContext>();
                auto call = stubs_.back()->PrepareCall(context.get(), kMethod, &queue_);
                call->StartCall(reinterpret_cast<void*>(1));
                contexts_.push_back(std::move(context));
                calls_.push_back(std::move(call));
            }
        }
    }
    ~StreamFlood() {
        for (auto& context : contexts_)
            context->TryCancel();
        // The queue hands back every pending operation before the calls they belong to go.
        queue_.Shutdown();
        void* tag;
        bool ok;
        while (queue_.Next(&tag, &ok)) {
        }
        calls_.clear();
    }
    /// Waits until `n` streams have started (the server took them; a stream over its limit
    /// waits on the client), `ms` at most. How many did.
    int started(int n, int ms = 10'000) {
        const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
        void* tag;
        bool ok;
        while (started_ < n) {
            if (queue_.AsyncNext(&tag, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) break;
            if (ok) ++started_;
        }
        return started_;
    }

private:
    grpc::CompletionQueue queue_;
    std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts_;
    std::vector<std::unique_ptr<grpc::GenericClientAsyncReaderWriter>> calls_;
    int started_ = 0;
};

}  // namespace

class TestRlsHostile : public QObject {
    Q_OBJECT

private slots:
    void init() {
        server_ = std::make_unique<RlsSidecarUnderTest>(kConfig, [](serve::SidecarOptions& o) {
            o.rls.grpc.handshakeTimeout = 500 * kNanosPerMilli;
            o.rls.grpc.maxConcurrentStreams = 100;
        });
        QVERIFY2(server_->sidecar, server_->error.c_str());
    }
    void cleanup() { server_.reset(); }

    // What is not HTTP/2 ends the connection; the server answers the next client.
    void notHttp2IsClosed_data() {
        QTest::addColumn<QByteArray>("bytes");
        std::mt19937 random(7);
        QTest::newRow("random bytes") << QByteArray::fromStdString(junk(random, 4096));
        QTest::newRow("HTTP/1.1") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        QTest::newRow("preface, then a frame too large") << QByteArray::fromStdString(
            http2Start() + std::string("\xff\xff\xff\x00\x00", 5) + junk(random, 64));
        QTest::newRow("preface, then SETTINGS of a bad length") << QByteArray::fromStdString(
            http2Start() + std::string("\x00\x00\x05\x04\x00\x00\x00\x00\x00", 9) + "abcde");
        QTest::newRow("preface, then HEADERS that do not decode") << QByteArray::fromStdString(
            http2Start() + std::string("\x00\x00\x08\x01\x05\x00\x00\x00\x01", 9) +
            junk(random, 8));
    }
    void notHttp2IsClosed() {
        QFETCH(QByteArray, bytes);
        RawClient raw(server_->port());
        QVERIFY(raw.send(bytes.toStdString()));
        QVERIFY(raw.closedBy(5000));
        RlsClient client(server_->port());
        QCOMPARE(wellBehaved(client, 5), 5);
    }

    // A connection that sends nothing is closed once the time for its settings has passed.
    void aSilentConnectionIsClosed() {
        RawClient raw(server_->port());
        QVERIFY(raw.valid());
        QVERIFY(raw.closedBy(5000));
    }

    // Two hundred junk connections from another thread while a client makes its calls: every
    // call answered.
    void junkDoesNotStopOthers() {
        RlsClient client(server_->port());
        std::atomic<int> closed{0};
        std::thread attacker([&] {
            std::mt19937 random(11);
            for (int i = 0; i < 200; ++i) {
                RawClient raw(server_->port());
                const std::string bytes =
                    i % 2 ? junk(random, 1024) : http2Start() + junk(random, 512);
                raw.send(bytes);
                if (raw.closedBy(5000)) ++closed;
            }
        });
        const int ok = wellBehaved(client, 300);
        attacker.join();
        QCOMPARE(ok, 300);
        QCOMPARE(closed.load(), 200);
    }

    // 3,000 streams held open over 30 connections (100 each, the server's limit per
    // connection), and 500 more on one of them that the limit queues on the client: the server
    // holds every one, and another client's calls are all answered within their deadlines.
    void aStreamFloodDoesNotStopOthers() {
        StreamFlood flood(server_->port(), 30, 100);
        QCOMPARE(flood.started(3000), 3000);
        StreamFlood over(server_->port(), 1, 600);
        QCOMPARE(over.started(101, 500), 100);  // the limit holds the other 500 back
        RlsClient client(server_->port());
        QCOMPARE(wellBehaved(client, 300), 300);
        QCOMPARE(client.health(""), 1);
    }

private:
    std::unique_ptr<RlsSidecarUnderTest> server_;
};

QTEST_GUILESS_MAIN(TestRlsHostile)
#include "tst_rls_hostile.moc"
