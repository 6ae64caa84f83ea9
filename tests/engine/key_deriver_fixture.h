#pragma once

// What the key-derivation suites share: a request that owns what its RequestView borrows,
// one derivation, and SHA-256 by an independent implementation (Qt's) to check the engine's.

#include <QCryptographicHash>
#include <QString>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "identity/key_deriver.h"

namespace ratelab::identity::test {

// SHA-256 by an independent implementation (Qt's), to check the engine's OpenSSL path.
inline QString qtSha(const QByteArray& data) {
    return QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

inline QString str(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<int>(s.size()));
}

// Owns everything a RequestView borrows.
struct Request {
    std::vector<std::pair<std::string, std::string>> headerText;
    std::vector<std::pair<std::string, std::string>> attributeText;
    std::vector<Header> headers;
    std::vector<Attribute> attributes;
    std::string principal;
    std::string method = "POST";
    std::string path = "/login";
    IpAddress peerAddress;
    bool hasPeer = false;

    Request& peer(const char* text) {
        peerAddress = *IpAddress::parse(text);
        hasPeer = true;
        return *this;
    }
    Request& header(std::string name, std::string value) {
        headerText.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    Request& attribute(std::string name, std::string value) {
        attributeText.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    Request& principalIs(std::string p) {
        principal = std::move(p);
        return *this;
    }
    RequestView view() {
        headers.clear();
        attributes.clear();
        for (auto& [n, v] : headerText)
            headers.push_back({n, v});
        for (auto& [n, v] : attributeText)
            attributes.push_back({n, v});
        RequestView v;
        v.method = method;
        v.path = path;
        v.headers = headers;
        v.attributes = attributes;
        v.principal = principal;
        v.peer = hasPeer ? &peerAddress : nullptr;
        return v;
    }
};

struct Outcome {
    DeriveStatus status;
    DerivedKey key;
};

inline Outcome derive(const KeyDeriver& deriver, Request& request,
                      const TrustedProxies& proxies = {}) {
    RequestView view = request.view();
    RequestContext context(view, proxies);
    Outcome out;
    out.status = deriver.derive(context, out.key);
    return out;
}

inline int statusCode(DeriveStatus s) {
    return static_cast<int>(s);
}
constexpr int kOk = static_cast<int>(DeriveStatus::Ok);
constexpr int kNoIdentity = static_cast<int>(DeriveStatus::NoIdentity);
constexpr int kMalformed = static_cast<int>(DeriveStatus::ForwardedMalformed);

}  // namespace ratelab::identity::test
