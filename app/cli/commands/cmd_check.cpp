// ratelab-cli check: decides one request against a fresh memory store and prints the verdict.

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/inputs.h"
#include "identity/headers.h"
#include "policy/policy_names.h"
#include "ratelab/ip_address.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

// The decision is taken at this fixed time on a fresh store, so the same arguments always
// print the same verdict.
constexpr Nanos kCheckTime = 1000 * kNanosPerSecond;

// Reads the options into `text`; returns an error message, or an empty string.
std::string readRequest(const Arguments& args, OwnedRequest& text) {
    if (args.isSet("peer")) {
        std::string peer = args.value("peer");
        text.peer = IpAddress::parse(peer);
        if (!text.peer) {
            return "--peer: \"" + peer +
                   "\" is not an IP address (dotted IPv4 or IPv6, no port, no zone id)";
        }
    }
    if (args.isSet("method")) {
        text.method = args.value("method");
        if (!policy::isValidToken(text.method))
            return "--method: \"" + text.method + "\" is not an HTTP method";
    }
    if (args.isSet("path")) {
        text.path = args.value("path");
        if (text.path.empty() || text.path.front() != '/') {
            return "--path: \"" + text.path + "\" must start with '/'";
        }
    }
    text.principal = args.value("principal");
    for (const std::string& line : args.values("header")) {
        std::size_t colon = line.find(':');
        // Messages never echo the argument: a header line may hold a credential.
        if (colon == std::string::npos) return "--header: expected 'Name: value', found no ':'";
        std::string name = line.substr(0, colon);
        if (!policy::isValidToken(name)) {
            return "--header: the text before ':' is not a header name (letters, digits and "
                   "!#$%&'*+-.^_`|~ only)";
        }
        std::string_view value = identity::trimOws(std::string_view(line).substr(colon + 1));
        if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
            return "--header " + name + ": the value holds CR, LF or NUL";
        }
        text.headers.emplace_back(name, std::string(value));
    }
    for (const std::string& pair : args.values("attribute")) {
        std::size_t equals = pair.find('=');
        if (equals == std::string::npos || equals == 0) {
            return "--attribute: expected name=value with a non-empty name";
        }
        text.attributes.emplace_back(pair.substr(0, equals), pair.substr(equals + 1));
    }
    return {};
}

nlohmann::ordered_json render(const Verdict& verdict, const PolicySet& policies) {
    nlohmann::ordered_json out;
    out["status"] = verdict.status;
    nlohmann::ordered_json headers = nlohmann::ordered_json::object();
    for (const HttpHeader& h : verdict.headers) {
        if (headers.contains(h.name)) {
            headers[h.name] = headers[h.name].get<std::string>() + ", " + h.value;
        } else {
            headers[h.name] = h.value;
        }
    }
    out["headers"] = std::move(headers);
    if (verdict.body.empty()) {
        out["body"] = nullptr;
    } else {
        nlohmann::ordered_json body = nlohmann::ordered_json::parse(verdict.body, nullptr, false);
        out["body"] = body.is_discarded() ? nlohmann::ordered_json(verdict.body) : body;
    }
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const PolicyResult& r : verdict.check.policies()) {
        nlohmann::ordered_json entry;
        entry["name"] = policies.policies[r.policy].name;
        entry["key"] =
            r.key.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.key);
        entry["scope"] =
            r.scope.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.scope);
        entry["outcome"] = std::string(policyOutcomeName(r.outcome));
        list.push_back(std::move(entry));
    }
    out["policies"] = std::move(list);
    return out;
}

int runCheck(const Arguments& args) {
    OwnedRequest text;
    if (std::string error = readRequest(args, text); !error.empty()) return fail(kUsage, error);

    Result<PolicySet> policies = loadPolicy(args.value("policy"));
    if (!policies) return policies.failure();

    MemoryStoreOptions storeOptions;
    storeOptions.maxBuckets = policies->store.maxBuckets;
    std::shared_ptr<Store> store = makeMemoryStore(storeOptions);
    Limiter limiter(std::move(*policies), store);
    Verdict verdict;
    RequestView request = text.view();
    limiter.decide(request, kCheckTime, verdict, /*explain=*/true);
    std::string json = render(verdict, limiter.policies()).dump(2);
    std::printf("%s\n", json.c_str());
    return kSuccess;
}

Command checkCommand() {
    Command c;
    c.name = "check";
    c.summary = "decide one request and print the verdict as JSON";
    c.description =
        "Decides one request against a fresh memory store and prints the verdict as JSON: "
        "status, headers, body, and each matching policy's key, scope and outcome. Keys name "
        "credentials by their hash only.";
    c.options = {
        Option::policy("policy", "P.json", "The policy file.").asRequired(),
        Option::value("peer", "ADDR", "The TCP peer address."),
        Option::value("principal", "ID", "A verified principal."),
        Option::value("header", "'Name: value'", "A request header.").asRepeated(),
        Option::value("path", "/x", "The request path (default /)."),
        Option::value("method", "GET", "The request method (default GET)."),
        Option::value("attribute", "name=value", "A verified request attribute.").asRepeated(),
    };
    c.run = &runCheck;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(checkCommand());

}  // namespace ratelab::cli
