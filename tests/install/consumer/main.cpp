// Links the installed engine and decides three requests under a limit of two.
#include <ratelab/limiter.h>
#include <ratelab/memory_store.h>

#include <cstdio>

int main() {
    ratelab::Policy api;
    api.name = "api";
    api.capacity = 2;
    api.refillPerSecond = 1.0;
    ratelab::PolicySet set;
    set.policies.push_back(api);
    ratelab::Limiter limiter(set, ratelab::makeMemoryStore());

    const ratelab::IpAddress peer = *ratelab::IpAddress::parse("198.51.100.7");
    ratelab::RequestView request;
    request.method = "GET";
    request.path = "/";
    request.peer = &peer;
    int statuses[3];
    for (int& status : statuses)
        status = limiter.decide(request, 0).status;
    std::printf("statuses: %d %d %d\n", statuses[0], statuses[1], statuses[2]);
    return statuses[0] == 200 && statuses[1] == 200 && statuses[2] == 429 ? 0 : 1;
}
