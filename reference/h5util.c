#include "h5util.h"

#include <hdf5.h>
#include <stdio.h>

static herr_t walk_innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e && e->desc) snprintf(data, HYMO_H5_DETAIL_MAX, "%s", e->desc);
    return 0;
}

void hymo_h5_take_error(char detail[HYMO_H5_DETAIL_MAX])
{
    detail[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_innermost, detail);
    H5Eclear2(H5E_DEFAULT);
    /* one line: HDF5's messages may hold newlines */
    for (char *p = detail; *p; p++) {
        if ((unsigned char)*p < 0x20) *p = ' ';
    }
}
