// Schema level of a policy file's "store" and "trusted_proxies" objects (the rest of the file:
// policy_reader.cpp). Mirrors resources/schema/policy.schema.json rule for rule.

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "policy/policy_fields.h"
#include "policy/policy_names.h"
#include "policy/policy_reader_internal.h"
#include "ratelab/redis_url.h"

namespace ratelab::policy::reader {

namespace {

// The store's AUTH: where its password is (an environment variable or a file), never the
// password itself, which would travel with every export and commit of the policy file.
void readStoreAuth(Diagnostics& sink, Fields& f, bool redis, StoreConfig& store) {
    if (const json::Value* given = f.get("password")) {
        sink.error(CheckLevel::Schema, *given,
                   "a password is never written in the policy file; name where it is with "
                   "\"password_env\" (an environment variable) or \"password_file\"");
    }
    if (f.string("username", store.username, 1, 256) &&
        !std::all_of(store.username.begin(), store.username.end(),
                     [](char c) { return c > ' ' && c < 0x7f; })) {
        sink.error(
            CheckLevel::Schema, *f.get("username"),
            "username " + quoted(store.username) + " must be printable ASCII without spaces");
    }
    if (f.string("password_env", store.passwordEnv, 1, 256) &&
        (!std::all_of(
             store.passwordEnv.begin(), store.passwordEnv.end(),
             [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) ||
         std::isdigit(static_cast<unsigned char>(store.passwordEnv.front())))) {
        sink.error(CheckLevel::Schema, *f.get("password_env"),
                   "password_env " + quoted(store.passwordEnv) +
                       " must be an environment variable name: letters, digits and '_', not "
                       "starting with a digit");
    }
    if (f.string("password_file", store.passwordFile, 1, 4096) &&
        (store.passwordFile.front() != '/' ||
         !std::all_of(store.passwordFile.begin(), store.passwordFile.end(),
                      [](char c) { return c >= ' ' && c < 0x7f; }))) {
        sink.error(CheckLevel::Schema, *f.get("password_file"),
                   "password_file " + quoted(store.passwordFile) +
                       " must be an absolute path of printable ASCII characters");
    }
    if (f.has("password_env") && f.has("password_file")) {
        sink.error(CheckLevel::Schema, *f.get("password_file"),
                   "\"password_env\" and \"password_file\" exclude each other; give one");
    }
    if (f.has("username") && !f.has("password_env") && !f.has("password_file")) {
        sink.error(CheckLevel::Schema, *f.get("username"),
                   "a username needs its password: add \"password_env\" or \"password_file\"");
    }
    if (!redis) {
        for (std::string_view key : {"username", "password_env", "password_file"}) {
            if (const json::Value* given = f.get(key)) {
                sink.error(CheckLevel::Schema, *given,
                           "a memory store takes no credentials; set \"kind\": \"redis\" to "
                           "use Redis");
            }
        }
    }
}

}  // namespace

void readCidrs(Diagnostics& sink, const json::Value& array, std::vector<Cidr>& out) {
    for (const json::Value* item : itemsOf(sink, array, Type::String, "a string")) {
        if (!stringItem(sink, *item, "a CIDR", 64)) continue;
        const std::string& text = item->asString();
        if (auto cidr = Cidr::parse(text, /*strict=*/true)) {
            out.push_back(*cidr);
            continue;
        }
        std::string message = "invalid CIDR " + quoted(text);
        if (auto loose = Cidr::parse(text, /*strict=*/false)) {
            message += ": bits are set past the /" + std::to_string(loose->prefixLength()) +
                       " prefix; did you mean \"" + loose->toString() + "\"?";
        } else {
            message += ": expected an IPv4 or IPv6 address with an optional /length";
        }
        sink.error(CheckLevel::Semantics, *item, std::move(message));
    }
}

void readStore(Diagnostics& sink, const json::Value& object, StoreConfig& store) {
    Fields f(sink, object,
             {"kind", "max_buckets", "url", "urls", "namespace", "replicas", "username",
              "password_env", "password_file", "password"});
    bool kindOk = !f.has("kind") || f.choice("kind", store.kind, kStoreKinds);
    if (kindOk) readStoreAuth(sink, f, store.kind == StoreConfig::Kind::Redis, store);
    f.whole("max_buckets", store.maxBuckets, 1, kMaxCount);
    f.whole("replicas", store.replicas, 1, kMaxReplicas);
    if (f.string("namespace", store.keyNamespace, 1, 64) &&
        !std::all_of(store.keyNamespace.begin(), store.keyNamespace.end(),
                     [](char c) { return isNameChar(c) || c == ':'; })) {
        sink.error(CheckLevel::Schema, *f.get("namespace"),
                   "namespace " + quoted(store.keyNamespace) +
                       " may hold only letters, digits, '_', '.', ':' or '-'");
    }

    std::vector<const json::Value*> urls;
    bool urlOk = true;
    if (f.has("url")) {
        std::string url;
        urlOk = f.string("url", url, 1, 2048);
        if (urlOk) urls.push_back(f.get("url"));
    }
    if (const json::Value* list = f.array("urls")) {
        for (const json::Value* item : itemsOf(sink, *list, Type::String, "a string")) {
            if (stringItem(sink, *item, "a URL", 2048)) urls.push_back(item);
        }
        uniqueItems(sink, urls, "URL");
    }
    if (f.has("url") && f.has("urls")) {
        sink.error(CheckLevel::Schema, *f.get("urls"),
                   "\"url\" and \"urls\" exclude each other; use \"urls\" for cluster seeds");
    }
    if (kindOk && store.kind == StoreConfig::Kind::Redis) {
        if (!f.has("url") && !f.has("urls")) {
            sink.error(CheckLevel::Schema, object,
                       "a redis store needs \"url\" (or \"urls\" for cluster seed nodes)");
        } else if (!f.has("url") && f.get("urls")->isArray() && f.get("urls")->items().empty()) {
            sink.error(CheckLevel::Schema, *f.get("urls"),
                       "a redis store needs at least one URL in \"urls\"");
        }
    } else if (kindOk) {
        const json::Value* given = f.has("url") ? f.get("url") : nullptr;
        if (!given && f.has("urls") && f.get("urls")->isArray() &&
            !f.get("urls")->items().empty()) {
            given = f.get("urls");
        }
        if (given) {
            sink.error(CheckLevel::Schema, *given,
                       "a memory store takes no URL; set \"kind\": \"redis\" to use Redis");
        }
    }
    if (!urlOk) return;
    for (const json::Value* item : urls) {
        const std::string& url = item->asString();
        std::string why;
        const std::optional<RedisEndpoint> endpoint = parseRedisUrl(url, &why);
        if (!endpoint) {
            sink.error(CheckLevel::Semantics, *item,
                       "Redis URL " + quoted(redactRedisUrl(url)) + " does not parse: " + why);
        } else if (!endpoint->user.empty() || !endpoint->password.empty()) {
            sink.error(CheckLevel::Semantics, *item,
                       "Redis URL " + quoted(redactRedisUrl(url)) +
                           ": credentials in the URL are refused: policy files are exported and "
                           "committed; name where the password is with \"password_env\" or "
                           "\"password_file\" (and \"username\" for an ACL user)");
        } else if (urls.size() > 1 && endpoint->isSentinel()) {
            sink.error(CheckLevel::Semantics, *item,
                       "a Sentinel URL names every sentinel itself (HOST:PORT,HOST:PORT); give "
                       "it alone in \"url\", not among cluster seeds");
        } else if (urls.size() > 1 && endpoint->database != 0) {
            sink.error(CheckLevel::Semantics, *item,
                       "a Redis Cluster has database 0 only; remove \"/" +
                           std::to_string(endpoint->database) + "\" from this seed");
        }
        store.urls.push_back(url);
    }
}

void readTrustedProxies(Diagnostics& sink, const json::Value& object, TrustedProxies& proxies) {
    Fields f(sink, object, {"cidrs", "header"});
    if (const json::Value* cidrs = f.array("cidrs")) readCidrs(sink, *cidrs, proxies.cidrs);
    if (const json::Value* header = f.get("header")) {
        std::string value;
        if (sink.reader().expect(*header, {Type::String}, "a string")) {
            value = header->asString();
            if (std::find(kForwardedHeaders.begin(), kForwardedHeaders.end(), value) ==
                kForwardedHeaders.end()) {
                std::vector<std::string_view> names(kForwardedHeaders.begin(),
                                                    kForwardedHeaders.end());
                std::string message = quoted(value) +
                                      " is not one of \"x-forwarded-for\", \"forwarded\", "
                                      "\"x-real-ip\"";
                std::string_view suggestion = json::closestKey(value, names);
                if (!suggestion.empty()) {
                    message += "; did you mean \"" + std::string(suggestion) + "\"?";
                }
                sink.error(CheckLevel::Schema, *header, std::move(message));
            } else {
                proxies.header = value;
            }
        }
    }
}

}  // namespace ratelab::policy::reader
