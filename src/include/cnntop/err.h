/*
 * err.h: the error codes every cnntop function returns, negated.
 *
 * Conventions: functions return 0 on success or a negative CN_E* code, and
 * fill a caller-supplied buffer `err` (of `errlen` bytes, may be NULL) with a
 * one-line message that names the file or setting and the problem.
 */
#ifndef CNNTOP_ERR_PUBLIC_H
#define CNNTOP_ERR_PUBLIC_H

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes, returned negated. */
enum {
    CN_OK = 0,
    CN_EINVAL = 1,   /* a setting or argument is out of range */
    CN_EIO = 2,      /* a file could not be opened, read or written */
    CN_EFORMAT = 3,  /* a file's contents are not what they should be */
    CN_ENOMEM = 4,   /* memory could not be had */
    CN_ESTATE = 5,   /* the call does not fit the engine's state */
    CN_EDIVERGED = 6 /* training produced a non-finite loss */
};

#ifdef __cplusplus
}
#endif
#endif
