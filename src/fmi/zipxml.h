/* libzip and expat for the FMU and SSP files (FMU import, SSP reading,
 * `hymo fmu`), loaded with dlopen at their first use (src/core/lazy_lib.h):
 * a process that never opens such a file does not map them, nor libcrypto
 * and libbz2 which libzip needs.  A file that includes this header calls
 * hymo_zipxml_load() before its first zip_* or XML_* call; the names below
 * then call through the resolved table (each entry has the type the
 * library's own header declares). */
#ifndef HYMO_ZIPXML_H
#define HYMO_ZIPXML_H

#include <expat.h>
#include <stddef.h>
#include <zip.h>

#define HYMO_ZIPXML_FUNCTIONS(X)                                                                                     \
    X(zip_close)                                                                                                     \
    X(zip_discard)                                                                                                   \
    X(zip_error_fini)                                                                                                \
    X(zip_error_init_with_code)                                                                                      \
    X(zip_error_strerror)                                                                                            \
    X(zip_fclose)                                                                                                    \
    X(zip_file_add)                                                                                                  \
    X(zip_file_strerror)                                                                                             \
    X(zip_fopen)                                                                                                     \
    X(zip_fopen_index)                                                                                               \
    X(zip_fread)                                                                                                     \
    X(zip_get_num_entries)                                                                                           \
    X(zip_name_locate)                                                                                               \
    X(zip_open)                                                                                                      \
    X(zip_source_buffer)                                                                                             \
    X(zip_source_file)                                                                                               \
    X(zip_source_free)                                                                                               \
    X(zip_stat)                                                                                                      \
    X(zip_stat_index)                                                                                                \
    X(zip_strerror)
#define HYMO_XML_FUNCTIONS(X)                                                                                        \
    X(XML_ErrorString)                                                                                               \
    X(XML_GetCurrentLineNumber)                                                                                      \
    X(XML_GetErrorCode)                                                                                              \
    X(XML_Parse)                                                                                                     \
    X(XML_ParserCreate)                                                                                              \
    X(XML_ParserCreateNS)                                                                                            \
    X(XML_ParserFree)                                                                                                \
    X(XML_SetElementHandler)                                                                                         \
    X(XML_SetUserData)                                                                                               \
    X(XML_StopParser)

#define HYMO_ZIPXML_DECLARE(f) __typeof__(f) *f;
typedef struct {
    HYMO_ZIPXML_FUNCTIONS(HYMO_ZIPXML_DECLARE)
    HYMO_XML_FUNCTIONS(HYMO_ZIPXML_DECLARE)
} hymo_zipxml_table;
#undef HYMO_ZIPXML_DECLARE

/* The resolved functions (all null until hymo_zipxml_load succeeds). */
extern hymo_zipxml_table hymo_zipxml;

/* Loads libzip and expat once per process (thread-safe).  0 when they are
 * loaded; otherwise -1 with the reason in msg (msg_len bytes). */
int hymo_zipxml_load(char *msg, size_t msg_len);

#ifndef HYMO_ZIPXML_TABLE_DEFINITION
#define zip_close (hymo_zipxml.zip_close)
#define zip_discard (hymo_zipxml.zip_discard)
#define zip_error_fini (hymo_zipxml.zip_error_fini)
#define zip_error_init_with_code (hymo_zipxml.zip_error_init_with_code)
#define zip_error_strerror (hymo_zipxml.zip_error_strerror)
#define zip_fclose (hymo_zipxml.zip_fclose)
#define zip_file_add (hymo_zipxml.zip_file_add)
#define zip_file_strerror (hymo_zipxml.zip_file_strerror)
#define zip_fopen (hymo_zipxml.zip_fopen)
#define zip_fopen_index (hymo_zipxml.zip_fopen_index)
#define zip_fread (hymo_zipxml.zip_fread)
#define zip_get_num_entries (hymo_zipxml.zip_get_num_entries)
#define zip_name_locate (hymo_zipxml.zip_name_locate)
#define zip_open (hymo_zipxml.zip_open)
#define zip_source_buffer (hymo_zipxml.zip_source_buffer)
#define zip_source_file (hymo_zipxml.zip_source_file)
#define zip_source_free (hymo_zipxml.zip_source_free)
#define zip_stat (hymo_zipxml.zip_stat)
#define zip_stat_index (hymo_zipxml.zip_stat_index)
#define zip_strerror (hymo_zipxml.zip_strerror)
#define XML_ErrorString (hymo_zipxml.XML_ErrorString)
#define XML_GetCurrentLineNumber (hymo_zipxml.XML_GetCurrentLineNumber)
#define XML_GetErrorCode (hymo_zipxml.XML_GetErrorCode)
#define XML_Parse (hymo_zipxml.XML_Parse)
#define XML_ParserCreate (hymo_zipxml.XML_ParserCreate)
#define XML_ParserCreateNS (hymo_zipxml.XML_ParserCreateNS)
#define XML_ParserFree (hymo_zipxml.XML_ParserFree)
#define XML_SetElementHandler (hymo_zipxml.XML_SetElementHandler)
#define XML_SetUserData (hymo_zipxml.XML_SetUserData)
#define XML_StopParser (hymo_zipxml.XML_StopParser)
#endif

#endif
