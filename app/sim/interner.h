#pragma once

// Numbers strings by first appearance: 0, 1, ... into a table the caller owns.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ratelab::sim {

class Interner {
public:
    explicit Interner(std::vector<std::string>& table) : table_(table) {}
    std::uint32_t intern(std::string_view text) {
        key_.assign(text);
        auto it = index_.find(key_);
        if (it != index_.end()) return it->second;
        const auto id = static_cast<std::uint32_t>(table_.size());
        table_.emplace_back(text);
        index_.emplace(table_.back(), id);
        return id;
    }

private:
    std::vector<std::string>& table_;
    std::unordered_map<std::string, std::uint32_t> index_;
    std::string key_;
};

}  // namespace ratelab::sim
