// ratelab-bench --rls: Envoy's rate limit service under an async grpc++ load generator, against
// an empty ShouldRateLimit handler served with the same listener settings in the same process,
// so that the ratio says what ratelab's decisions cost over gRPC itself on this machine.

#include "bench/bench_rls.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "fixtures/redis_fixture.h"
#include "ratelab/redis_store.h"
#include "serve/grpc/grpc_server.h"
#include "serve/service_store.h"
#include "serve/sidecar.h"

namespace ratelab::bench {

namespace {

namespace rlsv3 = envoy::service::ratelimit::v3;
using Clock = std::chrono::steady_clock;

constexpr int kClientThreads = 2;
constexpr int kCallsPerThread = 32;  // 64 in flight
constexpr int kChannels = 4;
constexpr int kKeys = 100'000;
constexpr int kRounds = 3;

// The handler the service is measured against: every descriptor OK, nothing decided.
class EmptyRateLimitService final : public rlsv3::RateLimitService::CallbackService {
public:
    grpc::ServerUnaryReactor* ShouldRateLimit(grpc::CallbackServerContext* context,
                                              const rlsv3::RateLimitRequest* request,
                                              rlsv3::RateLimitResponse* response) override {
        response->set_overall_code(rlsv3::RateLimitResponse::OK);
        for (int i = 0; i < request->descriptors_size(); ++i)
            response->add_statuses()->set_code(rlsv3::RateLimitResponse::OK);
        grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
        reactor->Finish(grpc::Status::OK);
        return reactor;
    }
};

struct EmptyServer {
    EmptyRateLimitService service;
    std::unique_ptr<grpc::Server> server;
    int port = 0;

    bool start() {
        grpc::ServerBuilder builder;
        serve::GrpcServerOptions options;
        serve::applyServerLimits(builder, options);
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterService(&service);
        server = builder.BuildAndStart();
        return server && port > 0;
    }
    ~EmptyServer() {
        if (server) server->Shutdown(std::chrono::system_clock::now());
    }
};

// ratelab's service on `store` (memory when null), from one file of one rule that no key
// reaches within a run.
std::unique_ptr<serve::Sidecar> startRatelab(const std::string& dir, std::shared_ptr<Store> store) {
    const std::string path = dir + "/bench.yaml";
    std::ofstream(path) << "domain: bench\ndescriptors:\n  - key: key\n"
                           "    rate_limit: {unit: hour, requests_per_unit: 1000000000}\n";
    serve::SidecarOptions options;
    options.version = "bench";
    options.rls.configPath = path;
    options.rls.grpc.listen = *serve::ListenAddress::parse("127.0.0.1:0", nullptr);
    options.rls.store = std::move(store);
    options.logDecisions = false;
    options.logSink = [](std::string_view) {};
    std::vector<Diagnostic> diagnostics;
    std::string error;
    std::unique_ptr<serve::Sidecar> s = serve::Sidecar::open(options, &diagnostics, &error);
    if (!s) {
        std::fprintf(stderr, "ratelab-bench: serve: %s%s\n", error.c_str(),
                     formatDiagnostics(diagnostics).c_str());
        return nullptr;
    }
    s->start();
    return s;
}

struct LoadResult {
    double callsPerSecond = 0;
    double p50Micros = 0;
    double p99Micros = 0;
    std::int64_t errors = 0;
};

// One client thread: its completion queue keeps kCallsPerThread calls in flight, each new call
// on the next channel with the next key, until `end`; calls finished after `measureFrom` count.
struct ClientThread {
    struct Call {
        grpc::ClientContext context;
        rlsv3::RateLimitResponse response;
        grpc::Status status;
        std::unique_ptr<grpc::ClientAsyncResponseReader<rlsv3::RateLimitResponse>> reader;
        Clock::time_point start;
    };

    std::vector<std::unique_ptr<rlsv3::RateLimitService::Stub>>* stubs = nullptr;
    const std::vector<rlsv3::RateLimitRequest>* requests = nullptr;
    Clock::time_point measureFrom, end;
    std::size_t next = 0;
    std::int64_t done = 0;
    std::int64_t errors = 0;
    std::vector<std::uint32_t> micros;

    void issue(grpc::CompletionQueue& cq) {
        auto* call = new Call;
        call->start = Clock::now();
        auto& stub = *(*stubs)[next % stubs->size()];
        call->reader = stub.PrepareAsyncShouldRateLimit(&call->context,
                                                        (*requests)[next % requests->size()], &cq);
        ++next;
        call->reader->StartCall();
        call->reader->Finish(&call->response, &call->status, call);
    }

    void run(std::size_t firstKey) {
        next = firstKey;
        grpc::CompletionQueue cq;
        int inFlight = 0;
        for (; inFlight < kCallsPerThread; ++inFlight)
            issue(cq);
        void* tag = nullptr;
        bool ok = false;
        while (inFlight > 0 && cq.Next(&tag, &ok)) {
            std::unique_ptr<Call> call(static_cast<Call*>(tag));
            --inFlight;
            const Clock::time_point now = Clock::now();
            if (now >= measureFrom && now < end) {
                if (call->status.ok()) {
                    ++done;
                    micros.push_back(static_cast<std::uint32_t>(
                        std::chrono::duration_cast<std::chrono::microseconds>(now - call->start)
                            .count()));
                } else {
                    ++errors;
                }
            }
            if (now < end) {
                issue(cq);
                ++inFlight;
            }
        }
        cq.Shutdown();
        while (cq.Next(&tag, &ok))
            delete static_cast<Call*>(tag);
    }
};

LoadResult load(int port, double seconds, const std::vector<rlsv3::RateLimitRequest>& requests) {
    std::vector<std::unique_ptr<rlsv3::RateLimitService::Stub>> stubs;
    for (int c = 0; c < kChannels; ++c) {
        grpc::ChannelArguments args;
        args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection each
        args.SetInt("ratelab.bench.channel", c);
        stubs.push_back(rlsv3::RateLimitService::NewStub(grpc::CreateCustomChannel(
            "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args)));
    }
    const Clock::time_point start = Clock::now();
    std::vector<ClientThread> clients(kClientThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kClientThreads; ++t) {
        ClientThread& c = clients[static_cast<std::size_t>(t)];
        c.stubs = &stubs;
        c.requests = &requests;
        c.measureFrom = start + std::chrono::milliseconds(500);
        c.end = c.measureFrom + std::chrono::microseconds(static_cast<std::int64_t>(seconds * 1e6));
        threads.emplace_back([&c, t, &requests] { c.run(requests.size() / kClientThreads * t); });
    }
    for (std::thread& t : threads)
        t.join();
    LoadResult r;
    std::vector<std::uint32_t> all;
    for (const ClientThread& c : clients) {
        r.errors += c.errors;
        all.insert(all.end(), c.micros.begin(), c.micros.end());
    }
    r.callsPerSecond = static_cast<double>(all.size()) / seconds;
    if (!all.empty()) {
        std::sort(all.begin(), all.end());
        r.p50Micros = all[all.size() / 2];
        r.p99Micros = all[std::min(all.size() - 1, all.size() * 99 / 100)];
    }
    return r;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty()      ? 0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int runRlsBench(int argc, char** argv) {
    double seconds = 3;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = std::atof(argv[++i]);
    }
    if (!(seconds > 0)) {
        std::fprintf(stderr, "ratelab-bench --rls: --seconds must be positive\n");
        return 2;
    }
    testing::RedisServer redis;
    std::string error;
    if (!redis.start(&error)) {
        std::fprintf(stderr, "ratelab-bench --rls: redis-server: %s\n", error.c_str());
        return 1;
    }
    char dirTemplate[] = "/tmp/ratelab-bench-rls-XXXXXX";
    if (!::mkdtemp(dirTemplate)) {
        std::fprintf(stderr, "ratelab-bench --rls: cannot make a temporary directory\n");
        return 1;
    }
    const std::string dir = dirTemplate;

    std::vector<rlsv3::RateLimitRequest> requests(kKeys);
    for (int k = 0; k < kKeys; ++k) {
        rlsv3::RateLimitRequest& r = requests[static_cast<std::size_t>(k)];
        r.set_domain("bench");
        auto* e = r.add_descriptors()->add_entries();
        e->set_key("key");
        e->set_value("client-" + std::to_string(k));
    }

    EmptyServer empty;
    std::unique_ptr<serve::Sidecar> memory = startRatelab(dir, nullptr);
    StoreConfig redisConfig;
    redisConfig.kind = StoreConfig::Kind::Redis;
    redisConfig.urls = {redis.url()};
    redisConfig.keyNamespace = "bench" + std::to_string(std::random_device()());
    std::shared_ptr<Store> redisStore = serve::makeServiceStore(redisConfig, &error);
    // How many decisions each Redis round trip carried: the batching store's counters.
    std::shared_ptr<BatchingStore> batching = std::dynamic_pointer_cast<BatchingStore>(redisStore);
    RedisStore* redisInner = batching ? dynamic_cast<RedisStore*>(&batching->inner()) : nullptr;
    std::unique_ptr<serve::Sidecar> onRedis =
        redisStore ? startRatelab(dir, std::move(redisStore)) : nullptr;
    if (!empty.start() || !memory || !onRedis || !redisInner) {
        std::fprintf(stderr, "ratelab-bench --rls: a server did not start %s\n", error.c_str());
        return 1;
    }
    struct Target {
        const char* name;
        int port;
        std::vector<double> rates, p50s, p99s;
    };
    Target targets[] = {{"empty handler", empty.port, {}, {}, {}},
                        {"ratelab memory", memory->grpcAddress()->port, {}, {}, {}},
                        {"ratelab redis", onRedis->grpcAddress()->port, {}, {}, {}}};
    std::printf("%d calls in flight (%d threads x %d, %d connections), %d keys, %.1f s a run\n",
                kClientThreads * kCallsPerThread, kClientThreads, kCallsPerThread, kChannels, kKeys,
                seconds);
    std::vector<double> memoryRatios, redisRatios;
    int status = 0;
    for (int round = 0; round < kRounds; ++round) {
        double rate[3] = {0, 0, 0};
        for (int i = 0; i < 3; ++i) {
            Target& t = targets[(i + round) % 3];  // the order turns each round
            const BatchingStoreCounters before = batching->counters();
            const std::int64_t storeErrorsBefore = redisInner->counters().transportErrors;
            const LoadResult r = load(t.port, seconds, requests);
            const BatchingStoreCounters after = batching->counters();
            const std::int64_t storeErrors =
                redisInner->counters().transportErrors - storeErrorsBefore;
            std::printf("round %d  %-15s %9.0f calls/s  p50 %6.0f us  p99 %6.0f us  errors %lld",
                        round + 1, t.name, r.callsPerSecond, r.p50Micros, r.p99Micros,
                        static_cast<long long>(r.errors));
            if (after.batches > before.batches) {
                std::printf("  %.1f decisions a round trip (largest %lld)",
                            static_cast<double>(after.consumptions - before.consumptions) /
                                static_cast<double>(after.batches - before.batches),
                            static_cast<long long>(after.largestBatch));
            }
            // Redis calls that timed out or found the server backed off; a failed call without
            // one had no store time left when its batch was taken.
            if (storeErrors > 0)
                std::printf("  redis errors %lld", static_cast<long long>(storeErrors));
            std::printf("\n");
            std::fflush(stdout);
            if (r.errors != 0) status = 1;
            t.rates.push_back(r.callsPerSecond);
            t.p50s.push_back(r.p50Micros);
            t.p99s.push_back(r.p99Micros);
            rate[(i + round) % 3] = r.callsPerSecond;
        }
        memoryRatios.push_back(rate[1] / rate[0]);
        redisRatios.push_back(rate[2] / rate[0]);
    }
    for (const Target& t : targets) {
        std::printf("median %-15s %9.0f calls/s  p50 %6.0f us  p99 %6.0f us\n", t.name,
                    median(t.rates), median(t.p50s), median(t.p99s));
    }
    memory->cut();
    memory->wait();
    onRedis->cut();
    onRedis->wait();
    std::filesystem::remove_all(dir);
    std::printf("summary rls_vs_empty_ratio=%.3f rls_redis_vs_empty_ratio=%.3f rls_p99_us=%.0f\n",
                median(memoryRatios), median(redisRatios), median(targets[1].p99s));
    return status;
}

}  // namespace ratelab::bench
