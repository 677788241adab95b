#include "hymo/error.h"

#include <stdarg.h>
#include <stdio.h>

hymo_status hymo_error_set(hymo_error *err, hymo_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void hymo_error_clear(hymo_error *err)
{
    if (err) {
        err->code = HYMO_OK;
        err->message[0] = '\0';
    }
}

const char *hymo_status_name(hymo_status code)
{
    switch (code) {
    case HYMO_OK: return "ok";
    case HYMO_ERR_IO: return "io";
    case HYMO_ERR_PARSE: return "parse";
    case HYMO_ERR_MODEL: return "model";
    case HYMO_ERR_ASSEMBLY: return "assembly";
    case HYMO_ERR_CONVERGENCE: return "convergence";
    case HYMO_ERR_HDF5: return "hdf5";
    case HYMO_ERR_ARGUMENT: return "argument";
    case HYMO_ERR_NOMEM: return "nomem";
    case HYMO_ERR_NUMERIC: return "numeric";
    }
    return "unknown";
}
