#include "serve/rls_runtime.h"

#include <algorithm>

#include "formats/envoy/rls_config.h"

namespace ratelab::serve {

namespace {

// serve/rls's decider as the gRPC listener asks it.
class DeciderDecisions final : public RlsDecisions {
public:
    explicit DeciderDecisions(std::unique_ptr<const rls::RlsDecider> decider)
        : decider_(std::move(decider)) {}
    rls::RlsResult decide(const rls::RlsRequest& request, Nanos now) override {
        return decider_->decide(request, now);
    }
    void decideBatch(std::span<const rls::RlsRequest> requests, Nanos now, Nanos storeTimeout,
                     std::span<rls::RlsResult> out) override {
        decider_->decideBatch(requests, now, out, storeTimeout);
    }
    const rls::RlsDecider* decider() const override { return decider_.get(); }

private:
    std::unique_ptr<const rls::RlsDecider> decider_;
};

}  // namespace

RlsLoadOutcome loadRlsDecisions(const RlsLoadContext& context) {
    namespace fe = formats::envoy;
    RlsLoadOutcome outcome;
    fe::RlsLoadResult loaded = fe::loadRlsConfig(context.path);
    if (loaded.unreadable) {
        outcome.error = loaded.diagnostics.empty() ? context.path + ": cannot be read"
                                                   : formatDiagnostic(loaded.diagnostics.front());
        return outcome;
    }
    outcome.diagnostics = std::move(loaded.diagnostics);
    if (!loaded.ok()) return outcome;
    auto config = std::make_shared<const fe::RlsConfig>(std::move(*loaded.config));
    for (const fe::DomainConfig& d : config->domains)
        outcome.domains.push_back(d.domain);
    const rls::RlsDecider* previous = context.running ? context.running->decider() : nullptr;
    auto decider =
        previous ? std::make_unique<const rls::RlsDecider>(config, *previous, context.options)
                 : std::make_unique<const rls::RlsDecider>(config, context.store, context.options);
    outcome.decisions = std::make_shared<DeciderDecisions>(std::move(decider));
    return outcome;
}

std::unique_ptr<RlsRuntime> RlsRuntime::open(const std::string& path, RlsLoader loader,
                                             std::shared_ptr<Store> store,
                                             rls::RlsDeciderOptions options,
                                             std::vector<Diagnostic>* diagnostics,
                                             std::string* error) {
    RlsLoadOutcome loaded = loader(RlsLoadContext{path, store, nullptr, options});
    *diagnostics = std::move(loaded.diagnostics);
    if (!loaded.error.empty()) {
        *error = std::move(loaded.error);
        return nullptr;
    }
    if (!loaded.decisions) return nullptr;
    std::unique_ptr<RlsRuntime> runtime(new RlsRuntime);
    runtime->path_ = path;
    runtime->loader_ = std::move(loader);
    runtime->store_ = std::move(store);
    runtime->options_ = options;
    auto generation = std::make_shared<RlsGeneration>();
    generation->decisions = std::move(loaded.decisions);
    generation->domains = std::move(loaded.domains);
    runtime->current_ = std::move(generation);
    return runtime;
}

std::shared_ptr<const RlsGeneration> RlsRuntime::current() const {
    std::lock_guard<std::mutex> lock(currentMutex_);
    return current_;
}

rls::RlsResult RlsRuntime::decide(const rls::RlsRequest& request, Nanos now) {
    return current()->decisions->decide(request, now);
}

void RlsRuntime::decideBatch(std::span<const rls::RlsRequest> requests, Nanos now,
                             Nanos storeTimeout, std::span<rls::RlsResult> out) {
    current()->decisions->decideBatch(requests, now, storeTimeout, out);
}

const rls::RlsDecider* RlsRuntime::decider() const {
    return current()->decisions->decider();
}

ReloadResult RlsRuntime::reload() {
    std::lock_guard<std::mutex> reloading(reloadMutex_);
    const std::shared_ptr<const RlsGeneration> running = current();
    ReloadResult result;
    result.config = "rls";
    result.generation = running->number;
    RlsLoadOutcome loaded =
        loader_(RlsLoadContext{path_, store_, running->decisions.get(), options_});
    result.diagnostics = std::move(loaded.diagnostics);
    if (!loaded.error.empty() || !loaded.decisions) {
        result.error = loaded.error.empty()
                           ? "the rate limit configuration has errors; the running one stays"
                           : loaded.error + "; the running rate limit configuration stays";
        return result;
    }
    for (const std::string& domain : loaded.domains) {
        const bool served = std::find(running->domains.begin(), running->domains.end(), domain) !=
                            running->domains.end();
        (served ? result.kept : result.fresh).push_back(domain);
    }
    auto next = std::make_shared<RlsGeneration>();
    next->decisions = std::move(loaded.decisions);
    next->domains = std::move(loaded.domains);
    next->number = running->number + 1;
    {
        std::lock_guard<std::mutex> lock(currentMutex_);
        current_ = next;
    }
    result.ok = true;
    result.generation = next->number;
    return result;
}

}  // namespace ratelab::serve
