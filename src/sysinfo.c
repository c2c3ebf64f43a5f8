/*
 * sysinfo.c: CPU model, core count, memory.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sysinfo.h"

int sysinfo_cores(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
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

int sysinfo_has_avx512(void)
{
    char flags[8192];

    cpuinfo_field("flags", flags, sizeof flags);
    return strstr(flags, " avx512f") != NULL;
}

size_t sysinfo_ram_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

    return pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : 0;
}

long sysinfo_peak_rss_kib(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}
