/* hymo_version(): the version the library was built as (include/hymo/version.h). */
#include "hymo/version.h"

const char *hymo_version(void)
{
    return HYMO_VERSION_STRING;
}
