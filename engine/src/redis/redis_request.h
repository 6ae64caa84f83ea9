#pragma once

// ConsumeRequest <-> the scripts' calling convention (lua_scripts.h): key names, arguments, the
// range of limits the scripts compute exactly, and the reply's fields.

#include <hiredis/hiredis.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/store.h"
#include "redis/lua_scripts.h"
#include "redis/redis_client.h"

namespace ratelab::redis {

struct EncodeSettings {
    std::string_view keyNamespace;
    bool callerTime = false;
    std::int64_t minKeyLifetimeMs = 0;  ///< ARGV[7]; caller time only
};

/// One request, encoded. Holds views into its own text: never copy or move it once encoded.
struct EncodedRequest {
    ScriptId script = ScriptId::Rate;
    int slot = 0;
    std::string text;
    /// numkeys, KEYS, ARGV: 1 + (1 + 2 levels) + (9 + 2 levels) with a budget chain.
    std::array<std::string_view, 1 + 1 + 9 + 4 * kMaxBudgetLevels> args;
    std::size_t argc = 0;

    ScriptCall call() const { return ScriptCall{script, slot, {args.data(), argc}}; }
};

/// "<namespace>:{<partition>}:<limitName>:<key>".
std::string bucketKeyName(std::string_view keyNamespace, std::string_view partition,
                          std::string_view limitName, std::string_view key);
/// "<namespace>:{<partition>}:<limitName>:scope:<scope>".
std::string scopeKeyName(std::string_view keyNamespace, std::string_view partition,
                         std::string_view limitName, std::string_view scope);

/// Checks that the scripts compute `request` exactly (every duration below kMaxDuration, counts
/// below 2^53, a partition that makes a hash tag) and encodes it. False with the reason otherwise:
/// the store refuses such a request (StoreStatus::Refused), it never guesses.
bool encodeRequest(const ConsumeRequest& request, const EncodeSettings& settings,
                   EncodedRequest* out, std::string* error);

/// Reads a script's reply into out->decision, out->chargedFallback and out->stamp (in the
/// caller's time, as the request was encoded with `settings`). False with the reason when the
/// reply is not what the scripts send.
bool decodeReply(const redisReply& reply, const ConsumeRequest& request,
                 const EncodeSettings& settings, ConsumeResult* out, std::string* error);

/// The settle script's call for `request` (ScriptId::Settle), checked like encodeRequest. False
/// with the reason for a limit the script cannot settle (not token bucket, GCRA or fixed window,
/// or without Limit::settles) or cannot compute exactly.
bool encodeSettle(const SettleRequest& request, const EncodeSettings& settings, EncodedRequest* out,
                  std::string* error);

/// The keyspace script's fields of one limit (lua_scripts.h keyspaceScript), appended to
/// `args`: its name, kind, window or leaky rate, `now` in the time its scripts are given, and
/// its budget slots' lifetime in ms (0: unknown).
void appendKeyspaceLimit(std::string_view limitName, const Limit& limit,
                         std::int64_t slotLifetimeMs, Nanos now, const EncodeSettings& settings,
                         std::vector<std::string>* args);

/// `now` as the scripts take it (ARGV[1], [2]): floor seconds and nanoseconds, or "" and "0"
/// on server time; appended to `args`.
void appendKeyspaceNow(Nanos now, const EncodeSettings& settings, std::vector<std::string>* args);

/// The MATCH pattern of every key of the namespace: "<namespace>:{*", glob characters escaped.
std::string keyspacePattern(std::string_view keyNamespace);

/// Reads the settle script's reply into out->applied. False when it is not 0 or 1.
bool decodeSettleReply(const redisReply& reply, SettleResult* out);

}  // namespace ratelab::redis
