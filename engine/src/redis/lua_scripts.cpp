#include "redis/lua_scripts.h"

#include <openssl/evp.h>

#include "redis/lua_text.h"
#include "support/hex.h"

namespace ratelab::redis {

namespace {

// The shebang makes Redis treat every script as a write: under maxmemory with noeviction it
// refuses the script outright (OOM), even when the decision would only have read. Without it a
// refusal that reads only would still answer Ok while the server is out of memory.
constexpr std::string_view kShebang = "#!lua\n";

// The pieces (lua/*.lua, embedded by the build as redis/lua_text.h). Times are int64
// nanoseconds, far above 2^53 (where Lua's doubles stop being exact) with server time, so a time
// is held as a pair (s, n): s = floor(t / 1e9), n = t - s*1e9 in [0, 1e9). Durations are
// validated below kMaxDuration (< 2^53) and stay plain numbers; math.fmod is exact on doubles, so
// idiv/cdiv (common.lua) are exact where a / b and floor() might round. Numbers below 2^53 go to
// redis.call as numbers (Redis prints them exactly); larger ones are formatted with %d, never with
// tostring (%.14g).
//
// Each script includes only the helpers it uses, and the helpers reach library functions as
// globals and capture nothing (out() captures fmt, nonneg() and atLeastOne() capture out): in
// Redis' Lua every captured variable and every call costs on each run of the script (figures:
// docs/BENCHMARKS.md, "Why the code is as it is"). `s + 0` converts numeric text exactly as
// tonumber(s) does, without the call.
enum Helper : unsigned {
    kParse = 1u << 0,
    kFmt = 1u << 1,
    kAdd = 1u << 2,
    kDiff = 1u << 3,
    kLater = 1u << 4,
    kOut = 1u << 5,         // needs kFmt
    kNonneg = 1u << 6,      // needs kOut
    kAtLeastOne = 1u << 7,  // needs kOut
    kFromMs = 1u << 8,
    kCalendar = 1u << 9,
};

struct HelperText {
    Helper helper;
    std::string_view text;
};

// In the order they are defined in a script (a helper follows those it calls).
constexpr HelperText kHelpers[] = {
    {kParse, lua::kParse},   {kFmt, lua::kFmt},
    {kAdd, lua::kAdd},       {kDiff, lua::kDiff},
    {kLater, lua::kLater},   {kOut, lua::kOut},
    {kNonneg, lua::kNonneg}, {kAtLeastOne, lua::kAtLeastOne},
    {kFromMs, lua::kFromMs}, {kCalendar, lua::kCalendar},
};

// Each piece starts on a line of its own.
void appendPiece(std::string& source, std::string_view piece) {
    source.append("\n").append(piece);
}

Script makeScript(std::string_view name, unsigned helpers, std::string_view body) {
    Script s;
    s.name = name;
    s.source.append(kShebang);
    s.source.append("-- ratelab ").append(name).append(" v3");
    appendPiece(s.source, lua::kCommon);
    for (const HelperText& h : kHelpers)
        if (helpers & h.helper) appendPiece(s.source, h.text);
    appendPiece(s.source, lua::kEntry);
    appendPiece(s.source, body);
    if (name != "settle") appendPiece(s.source, lua::kEpilogue);
    s.sha1 = sha1Hex(s.source);
    return s;
}

}  // namespace

ScriptId scriptFor(Algorithm algorithm) {
    switch (algorithm) {
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            return ScriptId::Rate;
        case Algorithm::FixedWindow:
            return ScriptId::FixedWindow;
        case Algorithm::SlidingWindow:
            return ScriptId::SlidingWindow;
        case Algorithm::SlidingLog:
            return ScriptId::SlidingLog;
        case Algorithm::HaproxyRate:
            return ScriptId::HaproxyRate;
        case Algorithm::LeakyBucket:
            break;
    }
    return ScriptId::LeakyBucket;
}

const std::array<Script, kScriptCount>& scripts() {
    static const std::array<Script, kScriptCount> all = {
        makeScript("rate", kParse | kFmt | kAdd | kDiff | kLater, lua::kRate),
        makeScript("fixed_window",
                   kParse | kFmt | kAdd | kDiff | kLater | kOut | kFromMs | kCalendar,
                   lua::kFixedWindow),
        makeScript("sliding_window", kParse | kFmt | kAdd | kDiff | kOut | kNonneg | kAtLeastOne,
                   lua::kSlidingWindow),
        makeScript("sliding_log",
                   kParse | kFmt | kAdd | kDiff | kLater | kOut | kNonneg | kAtLeastOne,
                   lua::kSlidingLog),
        makeScript("leaky_bucket", kFmt | kDiff | kOut | kNonneg | kAtLeastOne | kFromMs,
                   lua::kLeakyBucket),
        makeScript("haproxy_rate", kFmt | kDiff | kOut | kNonneg | kAtLeastOne | kFromMs,
                   lua::kHaproxyRate),
        makeScript("settle", kParse | kFmt | kAdd | kDiff | kLater, lua::kSettle),
    };
    return all;
}

const Script& keyspaceScript() {
    // Reads only, so a server out of memory still answers it; its keys are every slot's.
    static const Script script = [] {
        Script s;
        s.name = "keyspace";
        s.source.append("#!lua flags=no-writes,allow-cross-slot-keys\n-- ratelab keyspace v1");
        appendPiece(s.source, lua::kCommon);
        for (const HelperText& h : kHelpers)
            if (h.helper & (kParse | kAdd | kLater | kFromMs)) appendPiece(s.source, h.text);
        appendPiece(s.source, lua::kKeyspace);
        s.sha1 = sha1Hex(s.source);
        return s;
    }();
    return script;
}

std::string sha1Hex(std::string_view text) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha1(), nullptr);
    std::string hex(2 * length, '0');
    writeHex(digest, length, hex.data());
    return hex;
}

}  // namespace ratelab::redis
