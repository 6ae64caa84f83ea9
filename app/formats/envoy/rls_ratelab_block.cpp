// The `ratelab:` block inside a rate_limit: an engine algorithm and its numbers, under the
// field names of a ratelab policy file. The block is checked by the policy file's own loader
// (one owner for what a valid limit is): its fields are written as a one-policy file, loaded,
// and the loader's diagnostics are pinned back to where the YAML wrote each field.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <span>

#include "formats/envoy/rls_config_reader.h"
#include "json/json_text.h"
#include "ratelab/policy_file.h"

namespace ratelab::formats::envoy {

namespace {

// What a block may say. Numbers: as in a policy file. headers: the header style of the
// answer's RateLimit fields. on_store_error: what a store outage does to this limit.
constexpr std::array<std::string_view, 8> kBlockKeys = {
    "algorithm", "capacity", "refill_per_second", "window_ms",
    "delay",     "nodelay",  "headers",           "on_store_error"};
constexpr std::array<std::string_view, 5> kNumberKeys = {"capacity", "refill_per_second",
                                                         "window_ms", "delay", "nodelay"};

constexpr std::string_view kPolicyPointer = "/policies/0";

bool contains(std::span<const std::string_view> keys, std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// `v` as a JSON value, so that the policy loader judges its type as it would in a file.
void appendJsonValue(std::string& out, const YamlNode& v) {
    switch (scalarType(v)) {
        case ScalarType::Null:
            out += "null";
            return;
        case ScalarType::Bool:
            out += *scalarBool(v) ? "true" : "false";
            return;
        case ScalarType::Int:
            json::appendInt(out, *scalarInt(v));
            return;
        case ScalarType::Float:
            if (v.text.find_first_of("nN") == std::string::npos &&
                v.text.find_first_of("iI") == std::string::npos) {
                out += v.text.front() == '.' ? "0" + v.text : v.text;
                return;
            }
            break;  // .inf and .nan are no JSON numbers: a string, which the loader refuses
        case ScalarType::String:
            break;
    }
    json::appendJsonString(out, v.text);
}

std::string numberText(double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", x);
    return buffer;
}

}  // namespace

void readRatelabBlock(const YamlNode& block, const std::string& pointer, RateLimitSpec& spec,
                      RlsDiagnostics& sink) {
    std::map<std::string, const YamlNode*> fields;  // the later of duplicate keys wins
    for (const auto& [k, v] : block.entries) {
        if (!k.isScalar() || scalarType(k) != ScalarType::String) {
            sink.error(k.at, pointer,
                       "a ratelab block's keys are field names, found " + printed(k));
            continue;
        }
        if (!contains(kBlockKeys, k.text)) {
            sink.error(k.at, pointer + "/" + k.text,
                       "unknown key '" + k.text +
                           "' in the ratelab block (algorithm, capacity, refill_per_second, "
                           "window_ms, delay, nodelay, headers, on_store_error)");
            continue;
        }
        if (!v.isNull() && !v.isScalar()) {
            sink.error(v.at, pointer + "/" + k.text, k.text + " must be a single value");
            continue;
        }
        fields[k.text] = &v;
    }

    const bool hasAlgorithm = fields.count("algorithm") > 0;
    if (!hasAlgorithm) {
        // The original's window, with only the answer's style or the store rule chosen.
        for (const auto& [key, node] : fields) {
            if (contains(kNumberKeys, key)) {
                sink.error(node->at, pointer + "/" + key,
                           key +
                               " needs an algorithm in the ratelab block (without one the "
                               "limit is the fixed window of requests_per_unit per unit)");
                return;
            }
        }
    }

    // The policy file the block stands for, its numbers defaulting to the rule's own.
    const std::int64_t unitSecs = unitSeconds(spec.unit);
    std::string text = "{\"version\": 1, \"policies\": [{\"name\": \"rls\"";
    auto field = [&](std::string_view key) {
        text += ", ";
        json::appendJsonString(text, key);
        text += ": ";
    };
    for (const auto& [key, node] : fields) {
        field(key);
        appendJsonValue(text, *node);
    }
    if (hasAlgorithm) {
        if (!fields.count("capacity")) {
            field("capacity");
            json::appendInt(text, spec.requestsPerUnit);
        }
        if (!fields.count("refill_per_second")) {
            field("refill_per_second");
            text += numberText(static_cast<double>(spec.requestsPerUnit) /
                               static_cast<double>(unitSecs));
        }
        if (!fields.count("window_ms")) {
            field("window_ms");
            json::appendInt(text, unitSecs * 1000);
        }
    }
    text += "}]}\n";

    PolicyLoadResult loaded = parsePolicyText(text, sink.file());
    for (const Diagnostic& d : loaded.diagnostics) {
        // "/policies/0/capacity" -> the YAML's capacity; a default's problem -> the block.
        std::string key;
        if (d.pointer.size() > kPolicyPointer.size() + 1 &&
            d.pointer.compare(0, kPolicyPointer.size(), kPolicyPointer) == 0) {
            key = d.pointer.substr(kPolicyPointer.size() + 1);
        }
        auto it = fields.find(key);
        const bool written = it != fields.end();
        if (d.severity == Diagnostic::Severity::Warning && !written) continue;
        std::string message = d.message;
        if (!written && contains(kNumberKeys, key)) {
            message += " (" + key +
                       " follows from requests_per_unit and unit; write it in the "
                       "ratelab block)";
        }
        const YamlMark at = written ? it->second->at : block.at;
        const std::string where = pointer + (written ? "/" + key : "");
        if (d.severity == Diagnostic::Severity::Error) {
            sink.error(at, where, message);
        } else {
            sink.warning(at, where, message);
        }
    }
    if (!loaded.ok()) return;
    const Policy& read = loaded.policies->policies.front();
    if (hasAlgorithm) {
        spec.policy = read;
        spec.extended = true;
    } else {
        spec.policy.headers = read.headers;
        spec.policy.onStoreError = read.onStoreError;
    }
    if (fields.count("on_store_error")) spec.onStoreError = read.onStoreError;
}

}  // namespace ratelab::formats::envoy
