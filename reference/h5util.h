/* Internal helpers shared by the HDF5 writer and reader. */
#ifndef HYMO_H5UTIL_H
#define HYMO_H5UTIL_H

#include <stddef.h>

#define HYMO_H5_DETAIL_MAX 160

/* Copies the innermost message of the current HDF5 error stack into
 * detail (empty if none) and clears the stack. Call right after the
 * failing HDF5 call: any later HDF5 call clears the stack. */
void hymo_h5_take_error(char detail[HYMO_H5_DETAIL_MAX]);

#endif
