/*
 * sysinfo.h: facts about the machine, from /proc and the C library.
 * The only file that reads /proc/cpuinfo or the CPU affinity mask.
 */
#ifndef CNNTOP_SYSINFO_H
#define CNNTOP_SYSINFO_H

#include <stddef.h>

/* Cores this process may run on (its affinity mask), at least 1. */
int sysinfo_cores(void);

/* The CPU's model name, or "unknown". */
void sysinfo_cpu_model(char *buf, size_t len);

/* 1 if the CPU has AVX-512F, per /proc/cpuinfo flags. */
int sysinfo_has_avx512(void);

/* Physical memory in bytes (0 if unknown). */
size_t sysinfo_ram_bytes(void);

/* Peak resident set size of this process so far, in KiB. */
long sysinfo_peak_rss_kib(void);

/* Sizes in bytes of cpu0's L1 data, L2 and L3 caches, from
 * /sys/devices/system/cpu/cpu0/cache/index*; 0 for any the kernel does not
 * describe (some VMs and ARM boards).  Any pointer may be NULL. */
void sysinfo_cache_sizes(size_t *l1d, size_t *l2, size_t *l3);

/* The kernel release as uname(2) gives it, e.g. "6.1.0-18-amd64", or "unknown". */
void sysinfo_kernel_release(char *buf, size_t len);

#endif
