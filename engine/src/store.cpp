#include "ratelab/store.h"

namespace ratelab {

void Store::consumeBatch(std::span<const ConsumeRequest> requests, std::span<ConsumeResult> results) {
    for (std::size_t i = 0; i < requests.size(); ++i) results[i] = consume(requests[i]);
}

}  // namespace ratelab
