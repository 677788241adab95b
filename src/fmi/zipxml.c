/* libzip and expat loaded at their first use (zipxml.h). */
#define _POSIX_C_SOURCE 200809L
#define HYMO_ZIPXML_TABLE_DEFINITION
#include "zipxml.h"

#include <pthread.h>
#include <string.h>

#include "lazy_lib.h"

#ifndef HYMO_LIBZIP_SONAME
#define HYMO_LIBZIP_SONAME "libzip.so.4"
#endif
#ifndef HYMO_EXPAT_SONAME
#define HYMO_EXPAT_SONAME "libexpat.so.1"
#endif

hymo_zipxml_table hymo_zipxml;

#define HYMO_ZIPXML_NAME(f) #f,
static const char *const zip_names[] = {HYMO_ZIPXML_FUNCTIONS(HYMO_ZIPXML_NAME)};
static const char *const xml_names[] = {HYMO_XML_FUNCTIONS(HYMO_ZIPXML_NAME)};
#undef HYMO_ZIPXML_NAME
#define N_ZIP ((int)(sizeof zip_names / sizeof zip_names[0]))
#define N_XML ((int)(sizeof xml_names / sizeof xml_names[0]))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_msg[256];

static void load(void)
{
    void *fn[N_ZIP + N_XML];
    _Static_assert(sizeof(hymo_zipxml_table) == sizeof fn, "one function pointer per name");
    if (hymo_lazy_resolve(HYMO_LIBZIP_SONAME, N_ZIP, zip_names, fn, load_msg, sizeof load_msg) != 0) return;
    if (hymo_lazy_resolve(HYMO_EXPAT_SONAME, N_XML, xml_names, fn + N_ZIP, load_msg, sizeof load_msg) != 0) return;
    /* the table is the names' function pointers in order (POSIX: a
     * function pointer survives the round trip through void *) */
    memcpy(&hymo_zipxml, fn, sizeof fn);
    loaded = 1;
}

int hymo_zipxml_load(char *msg, size_t msg_len)
{
    pthread_once(&once, load);
    if (loaded) return 0;
    if (msg && msg_len) {
        strncpy(msg, load_msg, msg_len - 1);
        msg[msg_len - 1] = '\0';
    }
    return -1;
}
