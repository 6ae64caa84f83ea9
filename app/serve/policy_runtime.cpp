#include "serve/policy_runtime.h"

#include "formats/import/policy_source.h"
#include "ratelab/policy_file.h"
#include "serve/admin/service_metrics.h"
#include "serve/service_store.h"

namespace ratelab::serve {

std::unique_ptr<PolicyRuntime> PolicyRuntime::open(const std::string& path,
                                                   const LimiterOptions& limiterOptions,
                                                   SidecarMetrics& metrics,
                                                   std::vector<Diagnostic>* diagnostics,
                                                   std::string* error) {
    PolicyLoadResult loaded = formats::loadPolicySource(path);
    if (loaded.unreadable) {
        *error = formatDiagnostic(loaded.diagnostics.at(0));
        return nullptr;
    }
    *diagnostics = std::move(loaded.diagnostics);
    if (!loaded.ok()) return nullptr;
    // A store block that cannot be used as written (an unset password variable, say) is the
    // file's error, reported like its others; an unreachable Redis is not (makeStore).
    std::string why;
    std::shared_ptr<Store> store = makeServiceStore(loaded.policies->store, &why);
    if (!store) {
        Diagnostic d;
        d.file = path;
        d.pointer = "/store";
        d.message = why;
        diagnostics->push_back(std::move(d));
        return nullptr;
    }
    std::unique_ptr<PolicyRuntime> runtime(new PolicyRuntime);
    runtime->path_ = path;
    runtime->limiterOptions_ = limiterOptions;
    runtime->metrics_ = &metrics;
    runtime->store_ = std::move(store);
    runtime->current_ = runtime->build(std::move(*loaded.policies), nullptr, 1);
    runtime->version_.store(1, std::memory_order_release);
    return runtime;
}

std::shared_ptr<const PolicyGeneration> PolicyRuntime::build(PolicySet policies,
                                                             const Limiter* previous,
                                                             std::uint64_t number) {
    auto generation = std::make_shared<PolicyGeneration>();
    for (const Policy& p : policies.policies)
        generation->metricSlots.push_back(metrics_->slotFor(p.name));
    generation->number = number;
    if (previous) {
        generation->limiter =
            std::make_unique<const Limiter>(std::move(policies), *previous, limiterOptions_);
    } else {
        generation->limiter =
            std::make_unique<const Limiter>(std::move(policies), store_, limiterOptions_);
    }
    return generation;
}

std::shared_ptr<const PolicyGeneration> PolicyRuntime::current() const {
    std::lock_guard<std::mutex> lock(currentMutex_);
    return current_;
}

ReloadResult PolicyRuntime::reload() {
    std::lock_guard<std::mutex> reloading(reloadMutex_);
    const std::shared_ptr<const PolicyGeneration> running = current();
    const PolicySet& before = running->limiter->policies();
    ReloadResult result;
    result.generation = running->number;
    PolicyCheckOptions checks;
    checks.previous = &before;
    PolicyLoadResult loaded = formats::loadPolicySource(path_, checks);
    result.diagnostics = std::move(loaded.diagnostics);
    if (!loaded.ok()) {
        result.error = "the policy file has errors; the running policies stay";
        return result;
    }
    if (!(loaded.policies->store == before.store)) {
        result.error =
            "the store block changed; a new store takes a restart (the running policies stay)";
        return result;
    }
    for (const Policy& p : loaded.policies->policies) {
        bool kept = false;
        for (const Policy& q : before.policies)
            kept = kept || keepsBucketState(q, p);
        (kept ? result.kept : result.fresh).push_back(p.name);
    }
    std::shared_ptr<const PolicyGeneration> next =
        build(std::move(*loaded.policies), running->limiter.get(), running->number + 1);
    {
        std::lock_guard<std::mutex> lock(currentMutex_);
        current_ = next;
    }
    version_.fetch_add(1, std::memory_order_acq_rel);
    result.ok = true;
    result.generation = next->number;
    return result;
}

}  // namespace ratelab::serve
