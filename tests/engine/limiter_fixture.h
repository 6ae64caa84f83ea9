#pragma once

// Helpers for tests that drive the Limiter: policies built in code, requests from strings, and
// a store whose failures the test chooses.

#include <optional>
#include <string>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "ratelab/policy.h"

namespace ratelab::testing {

inline Policy tokenBucketPolicy(std::string name, std::int64_t capacity, double refillPerSecond,
                                std::string pathPrefix = "/") {
    Policy p;
    p.name = std::move(name);
    p.match.pathPrefix = std::move(pathPrefix);
    p.algorithm = Algorithm::TokenBucket;
    p.capacity = capacity;
    p.refillPerSecond = refillPerSecond;
    return p;
}

inline PolicySet policySet(std::vector<Policy> policies) {
    PolicySet set;
    set.policies = std::move(policies);
    return set;
}

/// A request the test fills in with owned strings; view() borrows them.
struct TestRequest {
    std::string method = "GET";
    std::string path = "/api/items";
    std::vector<std::pair<std::string, std::string>> headers;
    std::optional<IpAddress> peer;
    std::string principal;
    std::vector<std::pair<std::string, std::string>> attributes;
    std::int64_t cost = 0;

    TestRequest& from(std::string_view address) {
        peer = IpAddress::parse(address);
        return *this;
    }
    TestRequest& header(std::string name, std::string value) {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }

    RequestView view() {
        headerViews.clear();
        for (auto& [n, v] : headers)
            headerViews.push_back(Header{n, v});
        attributeViews.clear();
        for (auto& [n, v] : attributes)
            attributeViews.push_back(Attribute{n, v});
        RequestView r;
        r.method = method;
        r.path = path;
        r.headers = headerViews;
        r.peer = peer ? &*peer : nullptr;
        r.principal = principal;
        r.attributes = attributeViews;
        r.cost = cost;
        return r;
    }

    std::vector<Header> headerViews;
    std::vector<Attribute> attributeViews;
};

inline std::string headerValue(const Verdict& v, std::string_view name) {
    for (const HttpHeader& h : v.headers) {
        if (h.name == name) return h.value;
    }
    return "<absent>";
}

/// A store that fails as told, and otherwise delegates to a memory store.
class ScriptedStore final : public Store {
public:
    StoreStatus failWith = StoreStatus::Ok;
    int calls = 0;

    ConsumeResult consume(const ConsumeRequest& request) override {
        ++calls;
        if (failWith == StoreStatus::Ok) return inner_->consume(request);
        ConsumeResult r;
        r.status = failWith;
        r.error =
            failWith == StoreStatus::Transport ? "connection refused" : "OOM command not allowed";
        return r;
    }
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
    std::string_view kind() const override { return "scripted"; }

private:
    std::unique_ptr<Store> inner_ = makeMemoryStore({});
};

}  // namespace ratelab::testing
