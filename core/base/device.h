#pragma once
#include <string>

namespace hr {

struct Device {
    enum class Kind { cpu, cuda };
    Kind kind = Kind::cpu;
    int index = 0;

    static Device cpu() { return {}; }
    static Device cuda(int i) { return {Kind::cuda, i}; }
    bool is_cpu() const { return kind == Kind::cpu; }
    bool is_cuda() const { return kind == Kind::cuda; }
    std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
    bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
    bool operator!=(const Device& o) const { return !(*this == o); }
};

}  // namespace hr
