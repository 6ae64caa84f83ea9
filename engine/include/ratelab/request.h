#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ratelab/ip_address.h"

namespace ratelab {

/// One HTTP header line. Names compare case-insensitively; a name may repeat.
struct Header {
    std::string_view name;
    std::string_view value;
};

/// A request attribute an earlier layer has verified, e.g. {"plan", "premium"}.
struct Attribute {
    std::string_view name;
    std::string_view value;
};

/// The small view of a request the engine needs. Borrowed: it must outlive the call only.
struct RequestView {
    std::string_view method;          ///< "GET"
    std::string_view path;            ///< "/api/items", without the query
    std::span<const Header> headers;  ///< in arrival order
    const IpAddress* peer = nullptr;  ///< the TCP peer, when the server knows it
    std::string_view principal;       ///< a verified principal; empty when none
    std::span<const Attribute> attributes;
    std::int64_t cost = 0;  ///< weighted cost; 0 uses each policy's own cost
};

/// A request that owns what a RequestView borrows, for callers that make one request at a time
/// from strings of their own (a command line, a test) rather than view a server's buffers. Not
/// thread-safe.
struct OwnedRequest {
    std::string method = "GET";
    std::string path = "/";
    std::vector<std::pair<std::string, std::string>> headers;  ///< name, value; in order
    std::optional<IpAddress> peer;
    std::string principal;
    std::vector<std::pair<std::string, std::string>> attributes;  ///< name, value
    std::int64_t cost = 0;

    /// A view of the fields as they are now; valid until this request changes or goes.
    RequestView view() {
        headerViews_.clear();
        for (const auto& [name, value] : headers)
            headerViews_.push_back(Header{name, value});
        attributeViews_.clear();
        for (const auto& [name, value] : attributes)
            attributeViews_.push_back(Attribute{name, value});
        RequestView view;
        view.method = method;
        view.path = path;
        view.headers = headerViews_;
        view.peer = peer ? &*peer : nullptr;
        view.principal = principal;
        view.attributes = attributeViews_;
        view.cost = cost;
        return view;
    }

private:
    std::vector<Header> headerViews_;
    std::vector<Attribute> attributeViews_;
};

}  // namespace ratelab
