#include "serve/sidecar.h"

#include <thread>

#include "observers/log_line.h"

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
    admin_.reset();
}

std::unique_ptr<Sidecar> Sidecar::open(const SidecarOptions& options,
                                       std::vector<Diagnostic>* diagnostics, std::string* error) {
    std::unique_ptr<Sidecar> s(new Sidecar(options));
    const unsigned loops = loopsFor(options.http);
    s->metrics_ = std::make_unique<SidecarMetrics>(loops, options.version);
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
    s->runtime_ =
        PolicyRuntime::open(options.policyPath, limiterOptions, *s->metrics_, diagnostics, error);
    if (!s->runtime_) return nullptr;
    s->metrics_->countReload(true, observers::wallClockNow());

    HttpServerOptions http = options.http;
    http.threads = static_cast<int>(loops);
    s->decisionHandler_ =
        std::make_unique<DecisionHandler>(*s->runtime_, *s->metrics_, options.decision, loops);
    s->decisions_ = HttpServer::create(http, *s->decisionHandler_, error);
    if (!s->decisions_) return nullptr;
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

std::vector<ListenAddress> Sidecar::adminAddresses() const {
    return admin_ ? admin_->addresses() : std::vector<ListenAddress>{};
}

void Sidecar::start() {
    decisions_->start();
    if (admin_) admin_->start();
    const auto generation = runtime_->current();
    log_.write(LogLine("info", "started")
                   .field("version", options_.version)
                   .field("mode", options_.decision.mode == ServeMode::Auth ? "auth" : "origin")
                   .field("listen", joined(decisions_->addresses()))
                   .field("admin", joined(adminAddresses()))
                   .field("loops", static_cast<std::int64_t>(decisions_->workers()))
                   .field("policy_file", runtime_->path())
                   .field("policies", static_cast<std::int64_t>(
                                          generation->limiter->policies().policies.size()))
                   .field("store", runtime_->store().kind())
                   .field("store_timeout_ms", options_.storeTimeout / kNanosPerMilli));
}

ReloadResult Sidecar::reload(std::string_view trigger) {
    ReloadResult result = runtime_->reload();
    metrics_->countReload(result.ok, observers::wallClockNow());
    for (const Diagnostic& d : result.diagnostics) {
        log_.write(LogLine(d.severity == Diagnostic::Severity::Error ? "error" : "warn",
                           "policy_diagnostic")
                       .field("diagnostic", formatDiagnostic(d)));
    }
    if (result.ok) {
        log_.write(LogLine("info", "policy_reloaded")
                       .field("trigger", trigger)
                       .field("generation", static_cast<std::int64_t>(result.generation))
                       .field("kept", joined(result.kept))
                       .field("fresh", joined(result.fresh)));
    } else {
        log_.write(LogLine("error", "policy_reload_failed")
                       .field("trigger", trigger)
                       .field("generation", static_cast<std::int64_t>(result.generation))
                       .field("error", result.error));
    }
    return result;
}

void Sidecar::drain() {
    if (draining_.exchange(true)) return;
    log_.write(LogLine("info", "draining")
                   .field("timeout_ms", options_.drainTimeout / kNanosPerMilli)
                   .field("open_connections", decisions_->stats().openConnections));
    decisions_->drain(options_.drainTimeout);
}

void Sidecar::cut() {
    drain();
    decisions_->drain(0);
}

std::int64_t Sidecar::wait() {
    decisions_->wait();
    const std::int64_t cut = decisions_->cutByDrain();
    if (admin_) {
        admin_->drain(0);
        admin_->wait();
    }
    const HttpServerStats stats = decisions_->stats();
    log_.write(
        LogLine("info", "stopped").field("requests", stats.requests).field("connections_cut", cut));
    return cut;
}

std::string Sidecar::unreadyReason() {
    if (draining_.load()) return "draining";
    const ConsumeResult probe = runtime_->store().probe();
    if (probe.status == StoreStatus::Ok) return "";
    return std::string(runtime_->store().kind()) + " store " +
           std::string(storeStatusName(probe.status)) + ": " + probe.error;
}

std::string Sidecar::metricsText() {
    MetricsSnapshot s;
    s.decisions = decisions_->stats();
    if (admin_) s.admin = admin_->stats();
    s.keyspace = runtime_->store().keyspace();
    s.storeKind = runtime_->store().kind();
    s.policies =
        static_cast<std::int64_t>(runtime_->current()->limiter->policies().policies.size());
    s.draining = draining_.load();
    s.ready = unreadyReason().empty();
    return metrics_->render(s);
}

}  // namespace ratelab::serve
