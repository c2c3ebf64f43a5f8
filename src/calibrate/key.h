/*
 * key.h: a calibration's key, the machine and setup it was measured on
 * (CPU model, cores, OpenBLAS kernel, compute threads), which a cached
 * file must match (calibrate_key_matches) and which names the file
 * (calibrate_cache_path).
 */
#ifndef CNNTOP_CALIB_KEY_H
#define CNNTOP_CALIB_KEY_H

#include "cnntop/calibrate.h"

/* Fills c's key (and llc_mib) for this machine with `threads` compute
 * threads (0: the cores this process may use) and OpenBLAS kernel `core`
 * (NULL: the one running in this process). */
void key_fill(Calibration *c, int threads, const char *core);

/* calibrate_key_matches() for OpenBLAS kernel `core` (NULL: the running
 * one). */
int key_matches(const Calibration *c, int threads, const char *core, char *why, size_t whylen);

/* Replaces every byte of s outside printable ASCII with '?', so that keys
 * and quoted text stay one line and compare exactly. */
void key_sanitize(char *s);

#endif
