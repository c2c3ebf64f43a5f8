/*
 * sysinfo.c: CPU model, core count, vector instruction sets (cpuid),
 * memory, caches, kernel release.
 */
#include <errno.h>
#include <sched.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cnntop/limits.h"
#include "prof/sysinfo.h"

/* The CPUs in this process's affinity mask, or 0 when it cannot be read.
 * The mask is sized for the machine: a fixed cpu_set_t holds 1024 CPUs,
 * and sched_getaffinity() refuses it on a kernel built for more. */
static int affinity_count(void)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    int ncpu = conf > CPU_SETSIZE ? (int)(conf < CN_MAX_CORES ? conf : CN_MAX_CORES)
                                  : CPU_SETSIZE;

    for (; ncpu <= CN_MAX_CORES; ncpu *= 2) {
        cpu_set_t *set = CPU_ALLOC(ncpu);
        size_t size = CPU_ALLOC_SIZE(ncpu);
        if (!set)
            return 0;
        int rc = sched_getaffinity(0, size, set), n = rc == 0 ? CPU_COUNT_S(size, set) : 0;
        CPU_FREE(set);
        if (rc == 0 || errno != EINVAL)
            return n;
    }
    return 0;
}

int sysinfo_cores(void)
{
    int n = affinity_count();
    long online = n > 0 ? n : sysconf(_SC_NPROCESSORS_ONLN);

    /* CN_MAX_CORES is past any machine Linux runs on (NR_CPUS <= 8192). */
    return online < 1 ? 1 : online > CN_MAX_CORES ? CN_MAX_CORES : (int)online;
}

int sysinfo_cores_online(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    return online < 1 ? 1 : online > CN_MAX_CORES ? CN_MAX_CORES : (int)online;
}

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static void cpuinfo_field(const char *key, char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    size_t klen = strlen(key);

    buf[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, key, klen) != 0 || !colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        snprintf(buf, len, "%s", v);
        break;
    }
    fclose(f);
}

void sysinfo_cpu_model(char *buf, size_t len)
{
    cpuinfo_field("model name", buf, len);
    if (!buf[0])
        snprintf(buf, len, "unknown");
}

#if defined(__x86_64__) || defined(__i386__)
/* XCR0: which register states the OS saves on a context switch. */
static uint64_t xcr0(void)
{
    uint32_t lo, hi;

    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Leaf 7's feature bits (subleaf 0: EBX; subleaf 1: EAX) as SYSINFO_* bits. */
static unsigned leaf7_features(unsigned max_leaf, int os_avx512)
{
    unsigned a, b, c, d, f = 0;

    if (max_leaf < 7 || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    f |= (b & bit_AVX2) ? SYSINFO_AVX2 : 0;
    if (os_avx512 && (b & bit_AVX512F)) {
        f |= SYSINFO_AVX512F;
        f |= (b & bit_AVX512DQ) ? SYSINFO_AVX512DQ : 0;
        f |= (b & bit_AVX512BW) ? SYSINFO_AVX512BW : 0;
        f |= (b & bit_AVX512VL) ? SYSINFO_AVX512VL : 0;
        if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)))
            f |= SYSINFO_AVX512BF16;
    }
    return f;
}

unsigned sysinfo_cpu_features(void)
{
    unsigned a, b, c, d, max_leaf = __get_cpuid_max(0, NULL), f = 0;

    if (max_leaf < 1 || !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    f |= (c & bit_SSE3) ? SYSINFO_SSE3 : 0;
    /* AVX needs the OS to save YMM (XCR0 bits 1-2), AVX-512 also the
     * opmask and upper ZMM states (bits 5-7): a CPU bit alone is not enough. */
    uint64_t x = (c & bit_OSXSAVE) ? xcr0() : 0;
    int os_avx = (x & 0x6) == 0x6, os_avx512 = os_avx && (x & 0xe0) == 0xe0;
    if (!os_avx || !(c & bit_AVX))
        return f;
    f |= SYSINFO_AVX | ((c & bit_FMA) ? SYSINFO_FMA : 0);
    return f | leaf7_features(max_leaf, os_avx512);
}
#else
unsigned sysinfo_cpu_features(void)
{
    return 0;
}
#endif

size_t sysinfo_ram_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

    return pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : 0;
}

size_t sysinfo_mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kib = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (size_t)kib * 1024;
}

long sysinfo_peak_rss_kib(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* The first line of a small sysfs file, newline dropped; "" if unreadable. */
static void sysfs_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");

    buf[0] = '\0';
    if (!f)
        return;
    if (!fgets(buf, (int)len, f))
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* "48K", "2048K", "32M" -> bytes; 0 if it does not parse. */
static size_t sysfs_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (end == s)
        return 0;
    if (*end == 'K')
        v *= 1024ULL;
    else if (*end == 'M')
        v *= 1024ULL * 1024ULL;
    else if (*end == 'G')
        v *= 1024ULL * 1024ULL * 1024ULL;
    return v > (unsigned long long)SIZE_MAX ? 0 : (size_t)v;
}

void sysinfo_cache_sizes(size_t *l1d, size_t *l2, size_t *l3)
{
    size_t got[4] = {0, 0, 0, 0}; /* by level; [1] is L1 data only */

    for (int i = 0; i < 16; i++) {
        char path[96], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        sysfs_line(path, level, sizeof level);
        if (!level[0])
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        sysfs_line(path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        sysfs_line(path, size, sizeof size);
        int lv = atoi(level);
        /* Instruction caches do not hold activations; leave them out. */
        if (lv >= 1 && lv <= 3 && strcmp(type, "Instruction") != 0)
            got[lv] = sysfs_size(size);
    }
    if (l1d)
        *l1d = got[1];
    if (l2)
        *l2 = got[2];
    if (l3)
        *l3 = got[3];
}

void sysinfo_kernel_release(char *buf, size_t len)
{
    struct utsname u;

    snprintf(buf, len, "%s", uname(&u) == 0 ? u.release : "unknown");
}
