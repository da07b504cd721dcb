/* A stand-in for the driver's libnvidia-ml.so.1, for tests/unit/test_telemetry.cpp: it exports the NVML
 * functions core/telemetry/nvml_source.cpp dlopens, with the same C signatures, and answers with fixed
 * figures, so the test can check what the source reads against what the "driver" said.
 *
 * FAKE_NVML (read at nvmlInit) picks the machine: unset or "2gpus": two GPUs; "init-fails": nvmlInit
 * returns NVML_ERROR_DRIVER_NOT_LOADED (9); "no-gpus": initialises and counts none.
 * fake_nvml_init_calls()/fake_nvml_shutdown_calls() count the calls (the test checks the source shuts
 * NVML down exactly once, and never when init failed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

static int g_init_calls = 0, g_shutdown_calls = 0, g_gpus = 0;
static struct nvmlDevice_st {
    int index;
} g_devices[2] = {{0}, {1}};

int fake_nvml_init_calls(void) { return g_init_calls; }
int fake_nvml_shutdown_calls(void) { return g_shutdown_calls; }

static int index_of(nvmlDevice_t d) { return d ? d->index : -1; }

nvmlReturn_t nvmlInit_v2(void) {
    ++g_init_calls;
    const char* mode = getenv("FAKE_NVML");
    if (mode && strcmp(mode, "init-fails") == 0) return 9;
    g_gpus = mode && strcmp(mode, "no-gpus") == 0 ? 0 : 2;
    return 0;
}
nvmlReturn_t nvmlShutdown(void) {
    ++g_shutdown_calls;
    return 0;
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* out, unsigned int n) {
    snprintf(out, n, "%s", "999.88.7");
    return 0;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    *count = (unsigned int)g_gpus;
    return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
    if ((int)i >= g_gpus) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *d = &g_devices[i];
    return 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* out, unsigned int n) {
    snprintf(out, n, "Fake NVML GPU %d", index_of(d));
    return 0;
}
/* nvmlPciInfo_t of nvmlDeviceGetPciInfo_v3: GPU i sits at bus 0x65 + i (NVML's 8-digit domain form) */
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
    memset(p, 0, sizeof *p);
    p->bus = 0x65u + (unsigned)index_of(d);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
    m->total = 80ULL << 30;
    m->used = (unsigned long long)(index_of(d) + 1) << 30;
    m->free = m->total - m->used;
    return 0;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
    *mw = 150000u + 1000u * (unsigned)index_of(d);
    return 0;
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
    (void)d;
    *mw = 700000u;
    return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
    u->gpu = 60u + (unsigned)index_of(d);
    u->memory = 30u;
    return 0;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* c) {
    if (sensor != 0) return 2;
    *c = 50u + (unsigned)index_of(d);
    return 0;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int clock, unsigned int* mhz) {
    (void)d;
    if (clock != 1) return 2; /* NVML_CLOCK_SM */
    *mhz = 1980u;
    return 0;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
    *mj = 123456789ULL + (unsigned long long)index_of(d);
    return 0;
}
