/*
 * sysinfo.h: facts about the machine, from /proc and the C library.
 * The only file that reads /proc/cpuinfo or the CPU affinity mask.
 */
#ifndef CNNTOP_SYSINFO_H
#define CNNTOP_SYSINFO_H

#include <stddef.h>

/* Cores this process may run on (its affinity mask, of any size), 1..CN_MAX_CORES. */
int sysinfo_cores(void);

/* The machine's cores online, whatever this process's affinity, 1..CN_MAX_CORES. */
int sysinfo_cores_online(void);

/* The CPU's model name, or "unknown". */
void sysinfo_cpu_model(char *buf, size_t len);

/* The CPU's vector instruction sets that this process may use, as
 * SYSINFO_* bits: from cpuid feature bits (never from model numbers), and
 * only where the kernel saves the registers they need (xgetbv's XCR0), so a
 * bit set here is an instruction set that runs.  0 on CPUs other than x86. */
enum {
    SYSINFO_SSE3 = 1u << 0,
    SYSINFO_AVX = 1u << 1,       /* 256-bit, with the OS saving YMM */
    SYSINFO_FMA = 1u << 2,       /* FMA3 (needs AVX) */
    SYSINFO_AVX2 = 1u << 3,
    SYSINFO_AVX512F = 1u << 4,   /* 512-bit, with the OS saving ZMM and k0-k7 */
    SYSINFO_AVX512DQ = 1u << 5,
    SYSINFO_AVX512BW = 1u << 6,
    SYSINFO_AVX512VL = 1u << 7,
    SYSINFO_AVX512BF16 = 1u << 8
};
unsigned sysinfo_cpu_features(void);

/* Physical memory in bytes (0 if unknown). */
size_t sysinfo_ram_bytes(void);

/* Memory available for a new process's work, in bytes: /proc/meminfo's
 * MemAvailable (the kernel's estimate, page cache that can be dropped
 * included); 0 if unknown. */
size_t sysinfo_mem_available_bytes(void);

/* Peak resident set size of this process so far, in KiB. */
long sysinfo_peak_rss_kib(void);

/* Sizes in bytes of cpu0's L1 data, L2 and L3 caches, from
 * /sys/devices/system/cpu/cpu0/cache/index*; 0 for any the kernel does not
 * describe (some VMs and ARM boards).  Any pointer may be NULL. */
void sysinfo_cache_sizes(size_t *l1d, size_t *l2, size_t *l3);

/* The kernel release as uname(2) gives it, e.g. "6.1.0-18-amd64", or "unknown". */
void sysinfo_kernel_release(char *buf, size_t len);

#endif
