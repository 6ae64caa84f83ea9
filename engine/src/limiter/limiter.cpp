#include "ratelab/limiter.h"

#include <ctime>
#include <span>

#include "http/rendering.h"
#include "limiter/limiter_impl.h"

namespace ratelab {

Limiter::Limiter(PolicySet policies, std::shared_ptr<Store> store, LimiterOptions options)
    : impl_(std::make_unique<Impl>(std::move(policies), std::move(store), options)) {}

Limiter::Limiter(PolicySet policies, const Limiter& previous, LimiterOptions options)
    : impl_(std::make_unique<Impl>(std::move(policies), previous.impl_->store, options,
                                   previous.impl_.get())) {}

Limiter::~Limiter() = default;

Nanos unixTimeOfMonotonicZero() {
    timespec real{};
    timespec monotonic{};
    clock_gettime(CLOCK_MONOTONIC, &monotonic);
    clock_gettime(CLOCK_REALTIME, &real);
    return (static_cast<Nanos>(real.tv_sec) - monotonic.tv_sec) * kNanosPerSecond +
           (real.tv_nsec - monotonic.tv_nsec);
}

const PolicySet& Limiter::policies() const {
    return impl_->policies;
}
Store& Limiter::store() const {
    return *impl_->store;
}
const Store* Limiter::localStore() const {
    return impl_->local.get();
}

std::uint32_t Limiter::limitId(std::size_t policyIndex, std::size_t tier) const {
    return impl_->compiled[policyIndex].firstLimitId + static_cast<std::uint32_t>(tier);
}

void Limiter::retune(std::size_t policyIndex, const PolicyTuning& tuning) {
    Policy& policy = impl_->policies.policies[policyIndex];
    applyTuning(policy, tuning);
    impl_->compiled[policyIndex].recompile(policy, impl_->policies.store.replicas);
    impl_->makeLocalStore();
}

// --- settling ------------------------------------------------------------------------------
//
// A settle is addressed by what the decision recorded (PolicyResult::Charge), never by deriving
// the key again: the request may be gone, and the same request could now be charged to another
// bucket (a budget that filled up since). The generation check makes a Check from another
// limiter, or from before a retune changed the limits, a no-op.

struct Limiter::SettleBatch {
    const Impl& impl;
    // Scratch reused by the thread's batches, so that steady-state settles do not allocate.
    struct Work {
        std::vector<SettleRequest> shared;
        std::vector<SettleRequest> local;
        std::vector<SettleResult> results;
    };
    Work& work;

    explicit SettleBatch(const Impl& i) : impl(i), work(scratch()) {
        work.shared.clear();
        work.local.clear();
    }

    static Work& scratch() {
        thread_local Work w;
        return w;
    }

    void add(const Check& check, int status, Nanos now) {
        if (!check.settles()) return;
        for (const PolicyResult& r : check.policies()) {
            SettleRequest s;
            if (impl.settleRequest(r, status, now, s))
                (r.charge.local ? work.local : work.shared).push_back(s);
        }
    }

    void run() {
        send(*impl.store, work.shared);
        if (impl.local) send(*impl.local, work.local);
    }

    void send(Store& store, const std::vector<SettleRequest>& requests) {
        if (requests.empty()) return;
        if (work.results.size() < requests.size()) work.results.resize(requests.size());
        store.settleBatch(requests, work.results);
    }
};

void Limiter::settle(const Check& check, int status, Nanos now) const {
    if (!check.settles()) return;
    for (const PolicyResult& r : check.policies()) {
        SettleRequest s;
        if (impl_->settleRequest(r, status, now, s))
            (r.charge.local ? *impl_->local : *impl_->store).settle(s);
    }
}

void Limiter::settleBatch(std::span<const Check> checks, std::span<const int> statuses,
                          Nanos now) const {
    SettleBatch batch(*impl_);
    for (std::size_t i = 0; i < checks.size(); ++i)
        batch.add(checks[i], statuses[i], now);
    batch.run();
}

void Limiter::settleBatch(std::span<const Check> checks, std::span<const int> statuses,
                          std::span<const Nanos> times) const {
    SettleBatch batch(*impl_);
    for (std::size_t i = 0; i < checks.size(); ++i)
        batch.add(checks[i], statuses[i], times[i]);
    batch.run();
}

void Limiter::decide(const RequestView& request, Nanos now, Verdict& out, bool explain) const {
    out.check.captureKeys = explain;
    check(request, now, out.check);
    render(request, out);
}

void Limiter::decideBatch(std::span<const RequestView> requests, std::span<const Nanos> times,
                          std::span<Verdict> out) const {
    // checkBatch() fills contiguous Checks; the verdicts' own are moved in and back out, so
    // that their storage is reused from call to call.
    thread_local std::vector<Check> checks;
    const std::size_t n = requests.size();
    if (checks.size() < n) checks.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i].check.captureKeys = false;
        checks[i] = std::move(out[i].check);
    }
    checkBatch(requests, times, std::span(checks).first(n));
    for (std::size_t i = 0; i < n; ++i) {
        out[i].check = std::move(checks[i]);
        render(requests[i], out[i]);
    }
}

void Limiter::render(const RequestView& request, Verdict& out) const {
    out.allowed = out.check.allowed;
    out.status = out.check.status;
    out.code = out.check.code;
    const std::size_t count =
        http::renderHeaders(impl_->policies, impl_->compiled, out.check, out.headers, 0);
    out.headers.resize(count);
    if (out.allowed) {
        out.contentType.clear();
        out.body.clear();
    } else {
        out.contentType = "application/problem+json";
        const PolicyResult& refusing = out.check.policies().back();
        const std::int64_t cost =
            request.cost > 0 ? request.cost : impl_->policies.policies[refusing.policy].cost;
        http::renderProblem(impl_->policies, out.check, cost, out.body);
    }
}

Verdict Limiter::decide(const RequestView& request, Nanos now, bool explain) const {
    Verdict verdict;
    decide(request, now, verdict, explain);
    return verdict;
}

}  // namespace ratelab
