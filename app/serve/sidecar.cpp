#include "serve/sidecar.h"

#include <thread>

#include "observers/log_line.h"
#include "ratelab/memory_store.h"
#include "serve/service_store.h"

namespace ratelab::serve {

namespace {

unsigned loopsFor(const HttpServerOptions& o) {
    return o.threads > 0 ? static_cast<unsigned>(o.threads)
                         : std::max(1u, std::thread::hardware_concurrency());
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& s : items) {
        if (!out.empty()) out += ",";
        out += s;
    }
    return out;
}

std::string joined(const std::vector<ListenAddress>& addresses) {
    std::vector<std::string> texts;
    for (const ListenAddress& a : addresses)
        texts.push_back(a.toString());
    return joined(texts);
}

}  // namespace

// Counts store errors for /metrics and passes events on to the decision log.
class Sidecar::Observer final : public LimitObserver {
public:
    Observer(SidecarMetrics& metrics, LimitObserver* log) : metrics_(metrics), log_(log) {}
    void onLimitHit(const LimitEvent& event) override {
        if (log_) log_->onLimitHit(event);
    }
    void onStoreError(const StoreErrorEvent& event) override {
        metrics_.countStoreError(metrics_.slotFor(event.policy), event.status);
        if (log_) log_->onStoreError(event);
    }

private:
    SidecarMetrics& metrics_;
    LimitObserver* log_;
};

Sidecar::Sidecar(const SidecarOptions& options)
    : options_(options)
    , log_(options.logSink)
    , keyNamer_(options.keyNameSecret)
    , adminHandler_(*this) {}

Sidecar::~Sidecar() {
    decisions_.reset();
    grpc_.reset();
    admin_.reset();
}

std::unique_ptr<Sidecar> Sidecar::open(const SidecarOptions& options,
                                       std::vector<Diagnostic>* diagnostics, std::string* error) {
    std::unique_ptr<Sidecar> s(new Sidecar(options));
    const unsigned loops = loopsFor(options.http);
    s->metrics_ = std::make_unique<SidecarMetrics>(loops, options.version);
    if (!options.policyPath.empty()) {
        if (options.logDecisions) {
            JsonLogOptions logOptions;
            logOptions.keyNamer = &s->keyNamer_;
            ServiceLog* log = &s->log_;
            s->decisionLog_ = std::make_unique<JsonLogObserver>(
                [log](std::string_view line) { log->writeText(line); }, std::move(logOptions));
        }
        s->observer_ = std::make_unique<Observer>(*s->metrics_, s->decisionLog_.get());
        LimiterOptions limiterOptions;
        limiterOptions.observer = s->observer_.get();
        limiterOptions.maxStoreTimeout = options.storeTimeout;
        // Decisions are taken on CLOCK_MONOTONIC (decision_handler.cpp); calendar windows need
        // to know which Unix time that is.
        limiterOptions.unixTimeAtZero = unixTimeOfMonotonicZero();
        s->runtime_ = PolicyRuntime::open(options.policyPath, limiterOptions, *s->metrics_,
                                          diagnostics, error);
        if (!s->runtime_) return nullptr;
        s->metrics_->countReload(true, observers::wallClockNow());
    }
    if (!options.rls.configPath.empty() && !s->openRls(diagnostics, error)) return nullptr;
    s->warmStore();

    if (s->runtime_) {
        HttpServerOptions http = options.http;
        http.threads = static_cast<int>(loops);
        s->decisionHandler_ =
            std::make_unique<DecisionHandler>(*s->runtime_, *s->metrics_, options.decision, loops);
        s->decisions_ = HttpServer::create(http, *s->decisionHandler_, error);
        if (!s->decisions_) return nullptr;
    }
    if (s->rlsRuntime_) {
        const WallClock& clock = options.rls.clock ? *options.rls.clock : systemWallClock();
        RlsServiceOptions service;
        service.batched = storeLeavesProcess(s->store()) && options.storeTimeout > 0;
        service.batcher.storeTimeout = options.storeTimeout;
        s->rlsService_ =
            std::make_unique<RlsService>(*s->rlsRuntime_, clock, s->rlsMetrics_, &s->log_, service);
        Sidecar* self = s.get();
        s->healthService_ = std::make_unique<HealthService>(
            [self] { return self->unreadyReason(); }, s->rlsMetrics_);
        s->grpc_ = GrpcServer::create(options.rls.grpc,
                                      {s->rlsService_.get(), s->healthService_.get()}, error);
        if (!s->grpc_) return nullptr;
    }
    if (options.admin) {
        HttpServerOptions admin = options.http;
        admin.listen = {*options.admin};
        admin.threads = 1;
        admin.maxConnections = 256;
        s->admin_ = HttpServer::create(admin, s->adminHandler_, error);
        if (!s->admin_) return nullptr;
    }
    return s;
}

// The rate limit configuration, on the policy file's store when there is one (so that both
// count in one place), else on the store the options give, else on a memory store.
bool Sidecar::openRls(std::vector<Diagnostic>* diagnostics, std::string* error) {
    std::shared_ptr<Store> store = runtime_ ? runtime_->sharedStore() : options_.rls.store;
    if (!store) store = makeMemoryStore();
    std::vector<Diagnostic> found;
    rls::RlsDeciderOptions decider = options_.rls.decider;
    decider.observer = &rlsMetrics_;
    decider.storeTimeout = options_.storeTimeout;
    RlsLoader loader = options_.rls.loader ? options_.rls.loader : RlsLoader(&loadRlsDecisions);
    rlsRuntime_ = RlsRuntime::open(options_.rls.configPath, std::move(loader), std::move(store),
                                   decider, &found, error);
    diagnostics->insert(diagnostics->end(), found.begin(), found.end());
    if (!rlsRuntime_) return false;
    rlsMetrics_.countReload(true, observers::wallClockNow());
    return true;
}

// A store outside the process opens its connection and loads its scripts on its first call,
// which can take longer than a call's store timeout (--store-timeout-ms): that call would be
// decided by its store-error rule and the store would back off as from a stalled server. So the
// store is asked once before any listener takes a call, within the store's own (longer)
// timeouts; when it does not answer, the service starts anyway and reports unready until it
// does, as /readyz and the gRPC health check say.
void Sidecar::warmStore() {
    const ConsumeResult probe = store().probe();
    warmError_ = probe.status == StoreStatus::Ok
                     ? ""
                     : std::string(storeStatusName(probe.status)) + ": " + probe.error;
}

std::vector<ListenAddress> Sidecar::addresses() const {
    return decisions_ ? decisions_->addresses() : std::vector<ListenAddress>{};
}

std::optional<ListenAddress> Sidecar::grpcAddress() const {
    if (!grpc_) return std::nullopt;
    return grpc_->address();
}

std::vector<ListenAddress> Sidecar::adminAddresses() const {
    return admin_ ? admin_->addresses() : std::vector<ListenAddress>{};
}

void Sidecar::start() {
    if (decisions_) decisions_->start();
    if (admin_) admin_->start();
    LogLine line("info", "started");
    line.field("version", options_.version);
    if (runtime_) {
        const auto generation = runtime_->current();
        line.field("mode", options_.decision.mode == ServeMode::Auth ? "auth" : "origin")
            .field("listen", joined(decisions_->addresses()))
            .field("loops", static_cast<std::int64_t>(decisions_->workers()))
            .field("policy_file", runtime_->path())
            .field("policies",
                   static_cast<std::int64_t>(generation->limiter->policies().policies.size()));
    }
    if (rlsRuntime_) {
        line.field("grpc", grpc_->address().toString())
            .field("rls_config", rlsRuntime_->path())
            .field("domains", joined(rlsRuntime_->current()->domains));
    }
    line.field("admin", joined(adminAddresses()))
        .field("store", store().kind())
        .field("store_timeout_ms", options_.storeTimeout / kNanosPerMilli)
        .flag("store_ready", warmError_.empty());
    log_.write(line);
    if (!warmError_.empty()) {
        log_.write(LogLine("warn", "store_unready")
                       .field("store", store().kind())
                       .field("error", warmError_));
    }
}

Store& Sidecar::store() const {
    return runtime_ ? runtime_->store() : rlsRuntime_->store();
}

std::vector<ReloadResult> Sidecar::reload(std::string_view trigger) {
    std::vector<ReloadResult> results;
    if (runtime_) {
        results.push_back(runtime_->reload());
        metrics_->countReload(results.back().ok, observers::wallClockNow());
        logReload(results.back(), trigger);
    }
    if (rlsRuntime_) {
        results.push_back(rlsRuntime_->reload());
        rlsMetrics_.countReload(results.back().ok, observers::wallClockNow());
        logReload(results.back(), trigger);
    }
    return results;
}

// policy_reloaded / policy_reload_failed, rls_reloaded / rls_reload_failed, and each of the
// file's diagnostics before them.
void Sidecar::logReload(const ReloadResult& result, std::string_view trigger) {
    const std::string prefix = result.config == "rls" ? "rls" : "policy";
    for (const Diagnostic& d : result.diagnostics) {
        log_.write(LogLine(d.severity == Diagnostic::Severity::Error ? "error" : "warn",
                           prefix + "_diagnostic")
                       .field("diagnostic", formatDiagnostic(d)));
    }
    if (result.ok) {
        log_.write(LogLine("info", prefix + "_reloaded")
                       .field("trigger", trigger)
                       .field("generation", static_cast<std::int64_t>(result.generation))
                       .field("kept", joined(result.kept))
                       .field("fresh", joined(result.fresh)));
    } else {
        log_.write(LogLine("error", prefix + "_reload_failed")
                       .field("trigger", trigger)
                       .field("generation", static_cast<std::int64_t>(result.generation))
                       .field("error", result.error));
    }
}

void Sidecar::drain() {
    if (draining_.exchange(true)) return;
    LogLine line("info", "draining");
    line.field("timeout_ms", options_.drainTimeout / kNanosPerMilli);
    if (decisions_) line.field("open_connections", decisions_->stats().openConnections);
    if (grpc_) line.field("grpc_grace_ms", options_.http.drainIdleGrace / kNanosPerMilli);
    log_.write(line);
    if (decisions_) decisions_->drain(options_.drainTimeout);
    if (grpc_) grpc_->drain(options_.http.drainIdleGrace, options_.drainTimeout);
}

void Sidecar::cut() {
    drain();
    if (decisions_) decisions_->drain(0);
    if (grpc_) grpc_->cut();
}

std::int64_t Sidecar::wait() {
    std::int64_t cut = 0;
    HttpServerStats stats;
    if (decisions_) {
        decisions_->wait();
        cut = decisions_->cutByDrain();
        stats = decisions_->stats();
    }
    if (grpc_) grpc_->wait();
    if (admin_) {
        admin_->drain(0);
        admin_->wait();
    }
    LogLine line("info", "stopped");
    line.field("requests", stats.requests).field("connections_cut", cut);
    if (grpc_) line.field("rls_calls", rlsMetrics_.calls(RlsRpc::ShouldRateLimit));
    log_.write(line);
    return cut;
}

std::string Sidecar::unreadyReason() {
    if (draining_.load()) return "draining";
    const ConsumeResult probe = store().probe();
    if (probe.status == StoreStatus::Ok) return "";
    return std::string(store().kind()) + " store " + std::string(storeStatusName(probe.status)) +
           ": " + probe.error;
}

std::string Sidecar::metricsText() {
    MetricsSnapshot s;
    if (decisions_) s.decisions = decisions_->stats();
    if (admin_) s.admin = admin_->stats();
    s.keyspace = store().keyspace();
    s.storeKind = store().kind();
    const Store* counted = &store();
    if (const auto* batching = dynamic_cast<const BatchingStore*>(counted)) {
        s.batching = batching->counters();
        counted = &batching->inner();
    }
    if (const auto* redis = dynamic_cast<const RedisStore*>(counted)) s.redis = redis->counters();
    if (runtime_) {
        s.policies =
            static_cast<std::int64_t>(runtime_->current()->limiter->policies().policies.size());
    }
    s.draining = draining_.load();
    s.ready = unreadyReason().empty();
    std::string out = metrics_->render(s);
    if (rlsRuntime_) rlsMetrics_.render(out);
    return out;
}

}  // namespace ratelab::serve
