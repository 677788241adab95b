# Doxygen input filter for include/hymo/*.h (docs/Doxyfile, INPUT_FILTER):
# the headers document their API in plain C comments; this marks them as
# Doxygen comments without changing the headers or their line numbers:
#   the first comment of a file          -> its @file description
#   a comment opening a line             -> /** (documents what follows)
#   a comment after code on its line     -> /**< (documents that member)
#   a comment right above a run of declarations with no blank line between
#   them documents each of them (a Doxygen member group, DISTRIBUTE_GROUP_DOC)
{
    line = $0
    if (!seen_first && line ~ /^\/\*/) {
        seen_first = 1
        sub(/^\/\*/, "/**", line)
        in_file_comment = 1
    } else if (line ~ /^[ \t]*\/\*[^*]/ || line ~ /^[ \t]*\/\*$/) {
        sub(/\/\*/, "/**", line)
    } else if (line ~ /[;,{][ \t]*\/\*[^*]/) {
        sub(/\/\*/, "/**<", line)
    }
    if (in_file_comment && line ~ /\*\//) {
        sub(/\*\//, "@file */", line)
        in_file_comment = 0
    }
    print line
}
