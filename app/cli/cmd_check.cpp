// ratelab-cli check: decides one request against a fresh memory store and prints the verdict.

#include <QCommandLineParser>
#include <QFileInfo>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "ratelab/ip_address.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "check --policy P.json [--peer ADDR] [--principal ID] [--header 'Name: value']... "
    "[--path /x] [--method GET] [--attribute name=value]...";

// The decision is taken at this fixed time on a fresh store, so the same arguments always
// print the same verdict.
constexpr Nanos kCheckTime = 1000 * kNanosPerSecond;

bool isTokenChar(char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool isToken(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text) {
        if (!isTokenChar(c)) return false;
    }
    return true;
}

std::string_view trimOws(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
    return v;
}

int badInput(const std::string& message) {
    std::fprintf(stderr, "ratelab-cli check: %s\n", message.c_str());
    return kBadInput;
}

// Everything the RequestView borrows, owned for the length of the command.
struct RequestText {
    std::string method = "GET";
    std::string path = "/";
    std::string principal;
    std::deque<std::pair<std::string, std::string>> headerText;
    std::deque<std::pair<std::string, std::string>> attributeText;
    std::vector<Header> headers;
    std::vector<Attribute> attributes;
    std::optional<IpAddress> peer;

    RequestView view() {
        headers.clear();
        attributes.clear();
        for (const auto& [n, v] : headerText)
            headers.push_back({n, v});
        for (const auto& [n, v] : attributeText)
            attributes.push_back({n, v});
        RequestView request;
        request.method = method;
        request.path = path;
        request.headers = headers;
        request.attributes = attributes;
        request.principal = principal;
        request.peer = peer ? &*peer : nullptr;
        return request;
    }
};

// Reads the options into `text`; returns an error message, or an empty string.
std::string readRequest(const QCommandLineParser& parser, RequestText& text) {
    if (parser.isSet("peer")) {
        std::string peer = parser.value("peer").toStdString();
        text.peer = IpAddress::parse(peer);
        if (!text.peer) {
            return "--peer: \"" + peer +
                   "\" is not an IP address (dotted IPv4 or IPv6, no port, no zone id)";
        }
    }
    if (parser.isSet("method")) {
        text.method = parser.value("method").toStdString();
        if (!isToken(text.method)) return "--method: \"" + text.method + "\" is not an HTTP method";
    }
    if (parser.isSet("path")) {
        text.path = parser.value("path").toStdString();
        if (text.path.empty() || text.path.front() != '/') {
            return "--path: \"" + text.path + "\" must start with '/'";
        }
    }
    text.principal = parser.value("principal").toStdString();
    for (const QString& h : parser.values("header")) {
        std::string line = h.toStdString();
        std::size_t colon = line.find(':');
        // Messages never echo the argument: a header line may hold a credential.
        if (colon == std::string::npos) return "--header: expected 'Name: value', found no ':'";
        std::string name = line.substr(0, colon);
        if (!isToken(name)) {
            return "--header: the text before ':' is not a header name (letters, digits and "
                   "!#$%&'*+-.^_`|~ only)";
        }
        std::string_view value = trimOws(std::string_view(line).substr(colon + 1));
        if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
            return "--header " + name + ": the value holds CR, LF or NUL";
        }
        text.headerText.emplace_back(name, std::string(value));
    }
    for (const QString& a : parser.values("attribute")) {
        std::string pair = a.toStdString();
        std::size_t equals = pair.find('=');
        if (equals == std::string::npos || equals == 0) {
            return "--attribute: expected name=value with a non-empty name";
        }
        text.attributeText.emplace_back(pair.substr(0, equals), pair.substr(equals + 1));
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

int runCheck(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Decides one request against a fresh memory store and prints the verdict as JSON."));
    parser.addOptions({
        {"policy", "The policy file.", "P.json"},
        {"peer", "The TCP peer address.", "ADDR"},
        {"principal", "A verified principal.", "ID"},
        {"header", "A request header (repeatable).", "Name: value"},
        {"path", "The request path (default /).", "/x"},
        {"method", "The request method (default GET).", "GET"},
        {"attribute", "A verified request attribute (repeatable).", "name=value"},
    });
    QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOption(help);
    if (!parser.parse(QStringList{"ratelab-cli check"} + arguments)) {
        return badInput(parser.errorText().toStdString());
    }
    if (parser.isSet(help)) {
        std::printf("usage: ratelab-cli %s\n%s", kSynopsis,
                    parser.helpText().section('\n', 2).toLocal8Bit().constData());
        return kSuccess;
    }
    if (!parser.positionalArguments().isEmpty()) {
        // Not echoed: an unquoted --header Authorization: Bearer x leaves the token here.
        return badInput(
            "unexpected argument; each option takes one value (quote a header: "
            "--header 'Name: value')");
    }
    if (!parser.isSet("policy")) return badInput("--policy P.json is required");

    RequestText text;
    if (std::string error = readRequest(parser, text); !error.empty()) return badInput(error);

    PolicyLoadResult loaded = loadPolicyFile(parser.value("policy").toStdString());
    for (const Diagnostic& d : loaded.diagnostics) {
        std::fprintf(stderr, "%s\n", formatDiagnostic(d).c_str());
    }
    if (!loaded.ok()) return kBadInput;

    MemoryStoreOptions storeOptions;
    storeOptions.maxBuckets = loaded.policies->store.maxBuckets;
    std::shared_ptr<Store> store = makeMemoryStore(storeOptions);
    Limiter limiter(std::move(*loaded.policies), store);
    Verdict verdict;
    RequestView request = text.view();
    limiter.decide(request, kCheckTime, verdict, /*explain=*/true);
    std::string json = render(verdict, limiter.policies()).dump(2);
    std::printf("%s\n", json.c_str());
    return kSuccess;
}

}  // namespace

RATELAB_CLI_COMMAND({"check", kSynopsis, "decide one request and print the verdict as JSON",
                     &runCheck});

}  // namespace ratelab::cli
