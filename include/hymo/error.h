/* hymo — error values.
 * Every fallible public function returns a hymo_status and fills a
 * hymo_error whose message names the file, line, field or time step. */
#ifndef HYMO_ERROR_H
#define HYMO_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every fallible public function: HYMO_OK or the kind of error. */
typedef enum {
    HYMO_OK = 0,
    HYMO_ERR_IO = 1,          /* file cannot be opened/read/written          */
    HYMO_ERR_PARSE = 2,       /* malformed model file (syntax)               */
    HYMO_ERR_MODEL = 3,       /* inconsistent or non-physical model data     */
    HYMO_ERR_ASSEMBLY = 4,    /* initial configuration cannot be assembled   */
    HYMO_ERR_CONVERGENCE = 5, /* Newton failed to converge in a time step    */
    HYMO_ERR_HDF5 = 6,        /* HDF5 library error / unreadable file        */
    HYMO_ERR_ARGUMENT = 7,    /* bad option value (e.g. non-positive dt)     */
    HYMO_ERR_NOMEM = 8,       /* allocation failed                           */
    HYMO_ERR_NUMERIC = 9      /* singular matrix, non-finite state           */
} hymo_status;

/* Size of hymo_error.message, including the terminating NUL. */
#define HYMO_ERROR_MSG_MAX 512

/* An error: its status code and a NUL-terminated message (empty if none).
 * Owned by the caller; hymo_error_set fills it. */
typedef struct {
    hymo_status code;
    char message[HYMO_ERROR_MSG_MAX];
} hymo_error;

/* Sets err (if non-NULL) and returns code. printf-style message. */
hymo_status hymo_error_set(hymo_error *err, hymo_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Resets err (if non-NULL) to HYMO_OK with an empty message. */
void hymo_error_clear(hymo_error *err);

/* Short stable name of a status code ("convergence", "parse", ...). */
const char *hymo_status_name(hymo_status code);

#ifdef __cplusplus
}
#endif
#endif
