/*
 * blas_auto.h: running OpenBLAS with the kernel that matches the CPU.
 *
 * OpenBLAS picks its kernel family once, when it loads, from
 * OPENBLAS_CORETYPE or its own CPU detection (which falls back to narrow
 * SSE3 kernels on CPUs it does not know).  So when the user has not named
 * a kernel and OpenBLAS's choice is narrower than the CPU's vectors,
 * cnntop runs itself again, once, at the top of main(), with the variable
 * set to the matching kernel (machine_blas_plan() decides); the new process
 * checks that kernel against a plain SGEMM before anything trains, and on
 * a mismatch runs once more with the variable as the user had it.  The
 * environment carries what happened (CNNTOP_BLAS_AUTO), so the machine
 * description says it.  The cost: one exec, a few milliseconds, only on
 * machines where OpenBLAS fell back.
 */
#ifndef CNNTOP_BLAS_AUTO_H
#define CNNTOP_BLAS_AUTO_H

/*
 * Applies the plan for argv (the program's own arguments): returns when
 * nothing is to change or the switch is done and verified; otherwise
 * re-executes /proc/self/exe with the same arguments and does not return.
 * keep_own: --blas-kernel openblas (or blas_kernel=openblas in the config
 * file): keep OpenBLAS's own choice.  When re-executing fails, the
 * environment is restored and a one-line warning goes to stderr.
 */
void blas_auto_apply(char **argv, int keep_own);

/* keep_own from the config file's blas_kernel key (0 when the file is
 * missing, does not parse or does not set it). */
int blas_auto_config_keep(void);

#endif
