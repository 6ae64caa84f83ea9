#pragma once

namespace ratelab::bench {

/// `ratelab-bench --rls [--seconds N]`: an async grpc++ load generator (64 calls in flight over
/// 4 connections) against three ShouldRateLimit servers in this process, in rounds: an empty
/// handler (answers OK at once), ratelab on the memory store, ratelab on a Redis store (a
/// redis-server it starts, behind the service's batching store). Prints each run, then
/// `summary rls_vs_empty_ratio=... rls_redis_vs_empty_ratio=... rls_p99_us=...` (medians of
/// the rounds; p99 of ratelab on the memory store). Returns the process's exit status.
int runRlsBench(int argc, char** argv);

}  // namespace ratelab::bench
