#include "ratelab/store.h"

namespace ratelab {

void Store::consumeBatch(std::span<const ConsumeRequest> requests,
                         std::span<ConsumeResult> results) {
    for (std::size_t i = 0; i < requests.size(); ++i)
        results[i] = consume(requests[i]);
}

SettleResult Store::settle(const SettleRequest&) {
    SettleResult result;
    result.status = StoreStatus::Refused;
    result.error = std::string(kind()) + " store cannot settle outcomes";
    return result;
}

void Store::settleBatch(std::span<const SettleRequest> requests, std::span<SettleResult> results) {
    for (std::size_t i = 0; i < requests.size(); ++i)
        results[i] = settle(requests[i]);
}

std::string_view storeStatusName(StoreStatus status) {
    switch (status) {
        case StoreStatus::Ok:
            return "ok";
        case StoreStatus::Transport:
            return "transport";
        case StoreStatus::Refused:
            return "refused";
        case StoreStatus::Full:
            return "full";
    }
    return "";
}

KeyspaceStats Store::keyspaceAt(Nanos) const {
    return keyspace();
}

ConsumeResult Store::probe() {
    return ConsumeResult{};
}

}  // namespace ratelab
