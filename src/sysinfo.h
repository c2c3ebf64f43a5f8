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

#endif
