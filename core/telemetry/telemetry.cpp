#include "telemetry/telemetry.h"

#include <cstdio>
#include <cstdlib>

namespace hr {

std::string pci_bus_id_key(const std::string& text) {
    // domain:bus:device.function, hex; NVML pads the domain to 8 digits, CUDA to 4
    unsigned long part[4] = {};
    const char* p = text.c_str();
    const char seps[] = {':', ':', '.', '\0'};
    for (int i = 0; i < 4; ++i) {
        char* end = nullptr;
        part[i] = std::strtoul(p, &end, 16);
        if (end == p || *end != seps[i]) return {};
        p = end + (i < 3 ? 1 : 0);
    }
    if (part[0] > 0xffff || part[1] > 0xff || part[2] > 0x1f || part[3] > 7) return {};
    char out[16];
    std::snprintf(out, sizeof out, "%04lx:%02lx:%02lx.%lx", part[0], part[1], part[2], part[3]);
    return out;
}

int gpu_index_of_bus_id(const std::vector<GpuStats>& gpus, const std::string& bus_id) {
    const std::string key = pci_bus_id_key(bus_id);
    if (key.empty()) return -1;
    for (const GpuStats& g : gpus)
        if (pci_bus_id_key(g.pci_bus_id) == key) return g.index;
    return -1;
}

}  // namespace hr
