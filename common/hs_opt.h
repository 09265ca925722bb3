/* hs_opt.h - declarative command-line options.
 *
 * Each subcommand describes its options once, in a table (name, type, default, help,
 * where the value goes). The same table drives parsing, --help and the printed effective
 * configuration. Options may appear before or after positional arguments (git-style);
 * "--" ends option parsing and everything after it is positional.
 */
#ifndef HS_OPT_H
#define HS_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/hs_status.h"

typedef enum {
    HS_OPT_FLAG,   /* int, set to 1 when present */
    HS_OPT_STR,    /* const char *, points into argv */
    HS_OPT_SIZE,   /* uint64_t, with K/M/G suffixes */
    HS_OPT_U64,    /* uint64_t */
    HS_OPT_DOUBLE, /* double */
    HS_OPT_LIST,   /* hs_strlist_t, repeatable; each value appended */
} hs_opt_type_t;

/* A repeatable option's values (pointers into argv; the array is owned, see hs_opt_free). */
typedef struct {
    const char **v;
    size_t n;
} hs_strlist_t;

/* An old spelling kept working: an entry with the type and offset of the option it now names
 * and HS_OPT_OLD_NAME("hint") as its help. Using it warns on stderr ("--hints is the old
 * name of --hint"); --help lists it as such. One vocabulary across commands (README). */
#define HS_OPT_OLD_NAME(name) "\001" name

typedef struct {
    const char *name;  /* long name without "--"; NULL ends the table */
    char short_name;   /* 0 if none */
    hs_opt_type_t type;
    size_t offset;     /* offsetof(the command's options struct, field) */
    const char *arg;   /* metavariable in help ("FILE"); NULL for flags */
    const char *def;   /* default, as text parsed like a command-line value; NULL = none */
    const char *help;  /* one line */
} hs_opt_t;

typedef struct {
    const char *usage;   /* "hintsim trace info FILE [--json]" */
    const char *summary; /* one line: what the command does */
    const hs_opt_t *opts;
    int min_pos;         /* positional arguments required */
    int max_pos;         /* at most; -1 = unlimited */
    const char *details; /* optional paragraph printed after the options in --help */
} hs_cmd_spec_t;

/* Parse argv (argv[0] is the command name and is skipped) into dst per spec.
 * Defaults are applied first. Positional arguments are returned in *pos (a malloc'ed
 * array of argv pointers, freed by hs_opt_free) and *npos.
 * Returns 0 when parsed, 1 when --help was printed (exit 0), or HS_ERR_USAGE after
 * printing the error and the usage line to stderr. */
int hs_opt_parse(const hs_cmd_spec_t *spec, int argc, char **argv, void *dst,
                 char ***pos, int *npos);

/* Free what hs_opt_parse allocated: list arrays in dst and the positional array. */
void hs_opt_free(const hs_cmd_spec_t *spec, void *dst, char **pos);

/* Print the full help for spec to fp. */
void hs_opt_print_help(const hs_cmd_spec_t *spec, FILE *fp);

#endif
