/* Internal: a config document (JSON or YAML) as one tree, so the schema
 * readers never care which syntax the user wrote. Every node keeps the line
 * it came from where the parser knows it (YAML: always; JSON: cJSON keeps
 * no positions, so only syntax errors have lines), and errors name the file,
 * that line and the path inside the document
 * ("model_params[1].matrix_shapes[0].name"). */
#ifndef MB_LIB_CONFIG_CFG_TREE_H
#define MB_LIB_CONFIG_CFG_TREE_H

#include <stddef.h>

#include "microbench/common.h"

typedef enum mb_cfg_kind {
  MB_CFG_NULL,
  MB_CFG_BOOL,
  MB_CFG_NUMBER,
  MB_CFG_STRING,
  MB_CFG_LIST,
  MB_CFG_MAP
} mb_cfg_kind_t;

typedef struct mb_cfg_node mb_cfg_node_t;
struct mb_cfg_node {
  mb_cfg_kind_t kind;
  int line;      /* 1-based; 0: unknown */
  int key_line;  /* a map entry's value: the line of its key (YAML); 0 */
  char *text;    /* scalars: as written ("1e3", "torch.bfloat16", "true") */
  double number; /* MB_CFG_NUMBER */
  int boolean;   /* MB_CFG_BOOL */
  size_t count;  /* list items / map entries */
  mb_cfg_node_t **items;
  char **keys; /* maps: keys, in document order */
};

/* Parses a file; the syntax comes from the extension (.json; .yaml/.yml),
 * else from the first non-blank character ('{' or '[' means JSON). Errors
 * name the file and line. The caller frees *out with mb__cfg_free. */
mb_status_t mb__cfg_parse_file(const char *path, mb_cfg_node_t **out);
/* The same for text in memory; `name` is used in messages. */
mb_status_t mb__cfg_parse_json(const char *text, const char *name,
                               mb_cfg_node_t **out);
mb_status_t mb__cfg_parse_yaml(const char *text, size_t len, const char *name,
                               mb_cfg_node_t **out);
/* Text in memory (NUL-terminated, len bytes), syntax chosen as for files
 * with `name` standing for the path. */
mb_status_t mb__cfg_parse_text(const char *text, size_t len, const char *name,
                               mb_cfg_node_t **out);
void mb__cfg_free(mb_cfg_node_t *n);

/* Building (the parsers): NULL on out of memory. */
mb_cfg_node_t *mb__cfg_new(mb_cfg_kind_t kind, int line, const char *text);
/* Appends child (key NULL for lists); frees child on failure. */
mb_status_t mb__cfg_append(mb_cfg_node_t *parent, const char *key,
                           mb_cfg_node_t *child);

/* How deep a config may nest: cJSON's own limit (CJSON_NESTING_LIMIT), so
 * both syntaxes refuse the same documents. The readers and the tree's free
 * recurse per level: a 50,000-deep YAML list overflowed the stack. */
#define MB__CFG_MAX_DEPTH 1000

/* Duplicate keys while a map is read (cfg_keys.c): a hash of indices into
 * map->keys, so a map of n keys costs O(n), not n look-ups of O(n) each
 * (100,000 keys took 15 s). Zero-initialise; free when the map is done. */
typedef struct mb__cfg_keyset {
  size_t *slots; /* index + 1 into map->keys; 0 empty */
  size_t cap;    /* a power of two, or 0 */
} mb__cfg_keyset_t;
/* Before appending `key` to `map`: *dup = 1 when the map has it already,
 * else the key is recorded as map->keys[map->count], the entry about to
 * be appended. MB_ERR_NO_MEMORY. */
mb_status_t mb__cfg_keyset_add(mb__cfg_keyset_t *ks, const mb_cfg_node_t *map,
                               const char *key, int *dup);
void mb__cfg_keyset_free(mb__cfg_keyset_t *ks);

/* 1 with *v set when scalar text s is a finite decimal number (YAML 1.2's
 * core schema: no hex, inf or nan spelled as strtod takes them). */
int mb__cfg_number(const char *s, double *v);

/* CSV text (RFC 4180: quoted fields, "" inside quotes, CRLF or LF) as a
 * list of maps keyed by the header row, as Python's csv.DictReader reads
 * it: blank lines skipped, an empty field or a missing one null, numbers
 * typed as mb__cfg_number says (surrounding spaces allowed), the rest
 * strings. Each map's line is its row's; errors name `name` and the
 * line (cfg_csv.c). */
mb_status_t mb__cfg_parse_csv(const char *text, size_t len, const char *name,
                              mb_cfg_node_t **out);

/* The value of `key` in a map; NULL when absent or not a map. */
const mb_cfg_node_t *mb__cfg_get(const mb_cfg_node_t *map, const char *key);
/* "list", "map", "string", ... */
const char *mb__cfg_kind_name(mb_cfg_kind_t kind);

#endif
