/* YAML into the config tree, through libyaml's event parser. Plain scalars
 * are typed as YAML 1.2's core schema does (null, true/false, numbers);
 * quoted ones are strings. One document per file; anchors and aliases are
 * refused with a clear message rather than silently expanded. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "error.h"
#include "config/cfg_tree.h"

typedef struct reader {
  yaml_parser_t parser;
  const char *name;
} reader_t;

static int matches(const char *s, const char *const *words) {
  for (; *words; words++)
    if (!strcmp(s, *words)) return 1;
  return 0;
}

/* YAML 1.2 core schema for plain scalars. */
static mb_cfg_node_t *typed_scalar(const char *s, int line, int quoted) {
  static const char *const k_null[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const k_true[] = {"true", "True", "TRUE", NULL};
  static const char *const k_false[] = {"false", "False", "FALSE", NULL};
  if (quoted) return mb__cfg_new(MB_CFG_STRING, line, s);
  if (matches(s, k_null)) return mb__cfg_new(MB_CFG_NULL, line, s);
  if (matches(s, k_true) || matches(s, k_false)) {
    mb_cfg_node_t *n = mb__cfg_new(MB_CFG_BOOL, line, s);
    if (n) n->boolean = matches(s, k_true);
    return n;
  }
  double v;
  int numeric = mb__cfg_number(s, &v);
  mb_cfg_node_t *n =
      mb__cfg_new(numeric ? MB_CFG_NUMBER : MB_CFG_STRING, line, s);
  if (n && numeric) n->number = v;
  return n;
}

static mb_status_t parse_error(reader_t *r) {
  const yaml_parser_t *p = &r->parser;
  return mb__fail(MB_ERR_PARSE, "%s:%zu: invalid YAML: %s%s%s", r->name,
                  p->problem_mark.line + 1,
                  p->problem ? p->problem : "syntax error",
                  p->context ? " " : "", p->context ? p->context : "");
}

static mb_status_t next(reader_t *r, yaml_event_t *e) {
  return yaml_parser_parse(&r->parser, e) ? MB_OK : parse_error(r);
}

static mb_status_t node(reader_t *r, yaml_event_t *e, int depth,
                        mb_cfg_node_t **out);

/* A map's key (e consumed); the map must not have it yet. */
static mb_status_t map_key(reader_t *r, yaml_event_t *e,
                           const mb_cfg_node_t *map, mb__cfg_keyset_t *ks,
                           char **key) {
  const int line = (int)e->start_mark.line + 1;
  const int scalar = e->type == YAML_SCALAR_EVENT;
  *key = scalar ? strdup((const char *)e->data.scalar.value) : NULL;
  yaml_event_delete(e);
  if (!scalar)
    return mb__fail(MB_ERR_PARSE, "%s:%d: a map key must be a plain value",
                    r->name, line);
  if (!*key) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  int dup = 0;
  mb_status_t st = mb__cfg_keyset_add(ks, map, *key, &dup);
  if (st == MB_OK && dup)
    st = mb__fail(MB_ERR_PARSE, "%s:%d: key \"%s\" appears twice", r->name,
                  line, *key);
  if (st != MB_OK) {
    free(*key);
    *key = NULL;
  }
  return st;
}

/* Children until the closing event; maps take a scalar key first. */
static mb_status_t children(reader_t *r, mb_cfg_node_t *n,
                            yaml_event_type_t end, int depth) {
  mb__cfg_keyset_t ks = {0};
  mb_status_t st = MB_OK;
  while (st == MB_OK) {
    yaml_event_t e;
    if ((st = next(r, &e)) != MB_OK) break;
    if (e.type == end) {
      yaml_event_delete(&e);
      break;
    }
    char *key = NULL;
    const int key_line = (int)e.start_mark.line + 1;
    if (n->kind == MB_CFG_MAP &&
        ((st = map_key(r, &e, n, &ks, &key)) != MB_OK ||
         (st = next(r, &e)) != MB_OK)) {
      free(key);
      break;
    }
    mb_cfg_node_t *child = NULL;
    st = node(r, &e, depth + 1, &child);
    if (st == MB_OK && key) child->key_line = key_line;
    if (st == MB_OK) st = mb__cfg_append(n, key, child);
    free(key);
  }
  mb__cfg_keyset_free(&ks);
  return st;
}

/* One node starting at event e (consumed), `depth` levels down. */
static mb_status_t node(reader_t *r, yaml_event_t *e, int depth,
                        mb_cfg_node_t **out) {
  const int line = (int)e->start_mark.line + 1;
  mb_status_t st = MB_OK;
  *out = NULL;
  const int nests = e->type == YAML_SEQUENCE_START_EVENT ||
                    e->type == YAML_MAPPING_START_EVENT;
  if (nests && depth > MB__CFG_MAX_DEPTH) { /* scalars do not count */
    yaml_event_delete(e);
    return mb__fail(MB_ERR_PARSE,
                    "%s:%d: nested deeper than %d levels (lists and maps "
                    "inside each other); a config needs a handful",
                    r->name, line, MB__CFG_MAX_DEPTH);
  }
  switch (e->type) {
    case YAML_SCALAR_EVENT:
      *out = typed_scalar((const char *)e->data.scalar.value, line,
                          e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE);
      break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
      int map = e->type == YAML_MAPPING_START_EVENT;
      *out = mb__cfg_new(map ? MB_CFG_MAP : MB_CFG_LIST, line, NULL);
      if (*out)
        st = children(r, *out,
                      map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT,
                      depth);
      break;
    }
    case YAML_ALIAS_EVENT:
      st = mb__fail(MB_ERR_PARSE,
                    "%s:%d: YAML aliases (*name) are not supported; write the "
                    "value out",
                    r->name, line);
      break;
    default:
      st = mb__fail(MB_ERR_PARSE, "%s:%d: unexpected YAML structure", r->name,
                    line);
  }
  yaml_event_delete(e);
  if (st == MB_OK && !*out)
    st = mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
  if (st != MB_OK) {
    mb__cfg_free(*out);
    *out = NULL;
  }
  return st;
}

/* Stream start, document start, the root node, document end: one document.
 * An empty file is an empty map (a config with nothing in it). */
static mb_status_t document(reader_t *r, mb_cfg_node_t **out) {
  yaml_event_t e;
  mb_status_t st;
  for (;;) {
    if ((st = next(r, &e)) != MB_OK) return st;
    yaml_event_type_t t = e.type;
    if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&e);
      continue;
    }
    if (t == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&e);
      *out = mb__cfg_new(MB_CFG_MAP, 1, NULL);
      return *out ? MB_OK : mb__fail(MB_ERR_NO_MEMORY, "out of memory");
    }
    if ((st = node(r, &e, 1, out)) != MB_OK) return st;
    break;
  }
  if ((st = next(r, &e)) != MB_OK) return st; /* document end */
  yaml_event_delete(&e);
  if ((st = next(r, &e)) != MB_OK) return st;
  const int more = e.type == YAML_DOCUMENT_START_EVENT;
  const int line = (int)e.start_mark.line + 1;
  yaml_event_delete(&e);
  if (more)
    return mb__fail(MB_ERR_PARSE,
                    "%s:%d: a second YAML document (---); one config per file",
                    r->name, line);
  return MB_OK;
}

mb_status_t mb__cfg_parse_yaml(const char *text, size_t len, const char *name,
                               mb_cfg_node_t **out) {
  *out = NULL;
  reader_t r = {.name = name};
  if (!yaml_parser_initialize(&r.parser))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for the YAML parser");
  yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
  mb_status_t st = document(&r, out);
  yaml_parser_delete(&r.parser);
  if (st != MB_OK) {
    mb__cfg_free(*out);
    *out = NULL;
  }
  return st;
}
