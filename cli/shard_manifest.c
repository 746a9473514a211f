/* A sharded run's manifest, `<output>.plan`: which rank owns which plan
 * entry, on which host, and the file each rank streams its results to.
 * Rank 0 writes it before any benchmark runs, so that after a job that
 * lost a rank (the launcher then stops the rest, and rank 0 never writes
 * the outputs) `mbench merge <output>.plan -o OUT` can put the ranks'
 * files back together in plan order and say which rank was lost and
 * which benchmarks did not run. docs/distributed.md, "When a rank is
 * lost".
 *
 * The format is lines of tab-separated fields, each field written through
 * mb_escape_controls so that no name can hold a tab or a newline:
 *
 *   microbench.shard_plan/1
 *   ranks   N
 *   argv    ARG ...            (the command line every rank ran)
 *   rank    R  HOST  FILE      (one per rank; FILE beside the manifest)
 *   entry   I  R  NAME         (one per plan entry, in plan order)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define MANIFEST_SCHEMA "microbench.shard_plan/1"

void cli_shard_file(char *buf, size_t cap, const char *output, int rank) {
  snprintf(buf, cap, "%s.rank%d.json", output, rank);
}

static void manifest_path(char *buf, size_t cap, const char *output) {
  snprintf(buf, cap, "%s.plan", output);
}

/* The stream mb_report writes beside a JSON file while it runs. */
static void stream_of(char *buf, size_t cap, const char *file) {
  snprintf(buf, cap, "%sl", file);
}

static void put_field(FILE *f, const char *text) {
  char esc[4096];
  mb_escape_controls(text, esc, sizeof esc);
  fputc('\t', f);
  fputs(esc, f);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* `hosts`: the gathered host names, NUL-terminated, in rank order. */
static int write_manifest(const char *cmd, const cli_shard_t *sh,
                          const mb_plan_t *plan, const size_t *owner, int ranks,
                          const char *hosts) {
  char path[4096], tmp[4200], file[4096];
  manifest_path(path, sizeof path, sh->output);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return cli_error(cmd, "cannot write %s: %s", tmp, strerror(errno));
  fprintf(f, "%s\nranks\t%d\nargv", MANIFEST_SCHEMA, ranks);
  for (int i = 0; i < sh->runner->argc; i++) put_field(f, sh->runner->argv[i]);
  fputc('\n', f);
  for (int r = 0; r < ranks; r++, hosts += strlen(hosts) + 1) {
    cli_shard_file(file, sizeof file, sh->output, r);
    fprintf(f, "rank\t%d", r);
    put_field(f, hosts);
    put_field(f, base_name(file));
    fputc('\n', f);
  }
  for (size_t i = 0; i < mb_plan_count(plan); i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    mb_plan_entry(plan, i, &e);
    /* A collective runs on every rank and rank 0 keeps its result. */
    fprintf(f, "entry\t%zu\t%zu", i,
            owner[i] == MB_PLAN_EVERY_RANK ? 0 : owner[i]);
    put_field(f, e.name);
    fputc('\n', f);
  }
  const int bad = ferror(f);
  if ((fclose(f) != 0) | bad || rename(tmp, path) != 0) {
    cli_error(cmd, "cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

int cli_shard_manifest(const char *cmd, const cli_shard_t *sh,
                       const mb_plan_t *plan, const size_t *owner,
                       double wait_s) {
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  mb_comm_info(sh->comm, &info);
  /* This rank's files of an earlier run at the same output go first: the
   * files beside a manifest are then always its own run's. The gather
   * below orders this before rank 0 writes the manifest. */
  if (sh->stream_path) {
    char stream[4200];
    stream_of(stream, sizeof stream, sh->stream_path);
    unlink(sh->stream_path);
    unlink(stream);
  }
  void *hosts = NULL;
  size_t *sizes = calloc((size_t)info.size, sizeof *sizes);
  mb_status_t st =
      sizes ? mb_comm_gather(sh->comm, info.host, strlen(info.host) + 1, 0,
                             &hosts, sizes, wait_s)
            : MB_ERR_NO_MEMORY;
  int rc = 0;
  if (st != MB_OK)
    rc = cli_error(cmd, "MPI: gathering the ranks' hosts: %s", mb_error_last());
  else if (info.rank == 0)
    rc = write_manifest(cmd, sh, plan, owner, info.size, hosts);
  free(hosts), free(sizes);
  /* Nothing runs without the manifest: a job that then lost a rank could
   * not say what it lost. */
  return cli_shard_agree(cmd, sh->comm, rc == 0, "write the plan's manifest");
}

/* ---- mbench merge <output>.plan ----------------------------------------- */

typedef struct rank_state {
  char *host, *file; /* file: the path read, "" when there is none */
  size_t owned, finished;
  char *last; /* the last result in its file: the last it finished */
} rank_state_t;

typedef struct manifest {
  int ranks;
  rank_state_t *rank;
  size_t count, cap; /* entries */
  char **name;       /* escaped, as in the file */
  size_t *owner;
  char **result_name; /* the finished result's own name; NULL: not run */
} manifest_t;

static void manifest_free(manifest_t *m) {
  for (int r = 0; r < m->ranks && m->rank; r++)
    free(m->rank[r].host), free(m->rank[r].file), free(m->rank[r].last);
  for (size_t i = 0; i < m->count; i++)
    free(m->name[i]), free(m->result_name[i]);
  free(m->rank), free(m->name), free(m->owner), free(m->result_name);
}

/* The fields of one line, split in place at the tabs. */
static size_t split(char *line, char **fields, size_t max) {
  size_t n = 0;
  for (char *p = line; n < max;) {
    fields[n++] = p;
    p = strchr(p, '\t');
    if (!p) break;
    *p++ = '\0';
  }
  return n;
}

static int parse_index(const char *s, size_t limit, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end || errno || v >= limit) return -1;
  *out = (size_t)v;
  return 0;
}

/* A rank's file beside the manifest: the document once it finished, the
 * stream while it ran (or when it died); "" when neither exists. */
static char *rank_file(const char *manifest, const char *file) {
  const char *base = base_name(manifest);
  char doc[8192], stream[8300];
  snprintf(doc, sizeof doc, "%.*s%s", (int)(base - manifest), manifest, file);
  stream_of(stream, sizeof stream, doc);
  return strdup(access(doc, F_OK) == 0      ? doc
                : access(stream, F_OK) == 0 ? stream
                                            : "");
}

static int add_entry(manifest_t *m, char **f, size_t n) {
  size_t index, owner;
  if (n != 4 || parse_index(f[1], (size_t)-1, &index) != 0 ||
      index != m->count || parse_index(f[2], (size_t)m->ranks, &owner) != 0)
    return -1;
  if (m->count == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    char **name = realloc(m->name, cap * sizeof *name);
    if (name) m->name = name;
    size_t *own = realloc(m->owner, cap * sizeof *own);
    if (own) m->owner = own;
    char **res = realloc(m->result_name, cap * sizeof *res);
    if (res) m->result_name = res;
    if (!name || !own || !res) return -1;
    m->cap = cap;
  }
  m->owner[m->count] = owner;
  m->result_name[m->count] = NULL;
  if (!(m->name[m->count] = strdup(f[3]))) return -1;
  m->rank[owner].owned++;
  m->count++;
  return 0;
}

/* One line of the manifest into m; -1 when it is not a line it can have. */
static int parse_line(manifest_t *m, const char *path, char *line) {
  char *f[5] = {NULL, NULL, NULL, NULL, NULL};
  const size_t n = split(line, f, 5);
  size_t r;
  if (!strcmp(f[0], "argv")) return 0; /* for people: the run's command */
  if (!strcmp(f[0], "ranks")) {
    if (n != 2 || m->ranks || parse_index(f[1], 1u << 20, &r) != 0 || !r)
      return -1;
    m->rank = calloc(r, sizeof *m->rank);
    m->ranks = (int)r;
    return m->rank ? 0 : -1;
  }
  if (!m->ranks) return -1; /* "ranks" comes first */
  if (!strcmp(f[0], "rank")) {
    if (n != 4 || parse_index(f[1], (size_t)m->ranks, &r) != 0 ||
        m->rank[r].host)
      return -1;
    m->rank[r].host = strdup(f[2]);
    m->rank[r].file = rank_file(path, f[3]);
    return m->rank[r].host && m->rank[r].file ? 0 : -1;
  }
  if (!strcmp(f[0], "entry")) return add_entry(m, f, n);
  return -1;
}

static int read_manifest(const char *path, manifest_t *m) {
  FILE *f = fopen(path, "r");
  if (!f) return cli_error("merge", "%s: %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  int rc = 0;
  for (size_t no = 1; rc == 0 && getline(&line, &cap, f) >= 0; no++) {
    const size_t len = strlen(line);
    const int whole = len && line[len - 1] == '\n';
    if (whole) line[len - 1] = '\0';
    if (!whole || (no == 1 ? strcmp(line, MANIFEST_SCHEMA) != 0
                           : parse_line(m, path, line) != 0))
      rc = cli_error("merge", "%s:%zu: not a line of a sharded run's manifest",
                     path, no);
  }
  for (int r = 0; rc == 0 && r < m->ranks; r++)
    if (!m->rank[r].host)
      rc = cli_error("merge", "%s: rank %d is missing from the manifest", path,
                     r);
  if (rc == 0 && !m->ranks)
    rc = cli_error("merge", "%s: the manifest names no ranks", path);
  free(line);
  fclose(f);
  return rc;
}

int cli_is_shard_manifest(const char *path) {
  char head[sizeof MANIFEST_SCHEMA + 1] = "";
  struct stat st;
  /* Only a regular file is looked into: opening a FIFO would wait for a
   * writer (the merge then refuses it as an input). */
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  const int is =
      fgets(head, sizeof head, f) && !strcmp(head, MANIFEST_SCHEMA "\n");
  fclose(f);
  return is;
}

/* Rank r's results against the plan: each must be an entry the plan gave
 * to r (else the file is another run's), and marks that entry finished. */
static int match_results(manifest_t *m, int r, const mb_results_t *set) {
  rank_state_t *rs = &m->rank[r];
  for (size_t k = 0; k < mb_results_count(set); k++) {
    mb_result_t *res = NULL;
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    if (mb_result_from_json(mb_results_json(set, k), &res) != MB_OK ||
        mb_result_info(res, &info) != MB_OK) {
      mb_result_destroy(res);
      return cli_error("merge", "%s: %s", rs->file, mb_error_last());
    }
    char esc[4096];
    mb_escape_controls(info.name ? info.name : "", esc, sizeof esc);
    size_t i = 0;
    while (i < m->count && strcmp(m->name[i], esc) != 0) i++;
    int bad = i == m->count || m->owner[i] != (size_t)r;
    if (i == m->count)
      cli_error("merge",
                "%s holds \"%s\", which the manifest does not list: the "
                "files are not one run's",
                rs->file, esc);
    else if (bad)
      cli_error("merge",
                "%s holds \"%s\", which the manifest gives to rank %zu: the "
                "files are not one run's",
                rs->file, esc, m->owner[i]);
    if (!bad && !m->result_name[i]) {
      rs->finished++;
      bad = !(m->result_name[i] = strdup(info.name));
      free(rs->last);
      bad |= !(rs->last = strdup(esc));
    }
    mb_result_destroy(res);
    if (bad) return -1;
  }
  return 0;
}

/* What the job lost, on stderr: each rank that did not finish its share
 * (rank, host, the last benchmark it finished), then every benchmark that
 * did not run, in plan order. 1 when anything is missing. */
static int report_losses(const manifest_t *m) {
  size_t missing = 0;
  for (size_t i = 0; i < m->count; i++) missing += !m->result_name[i];
  if (!missing) return 0;
  for (int r = 0; r < m->ranks; r++) {
    const rank_state_t *rs = &m->rank[r];
    if (rs->finished == rs->owned) continue;
    if (rs->finished)
      fprintf(stderr,
              "mbench merge: rank %d (host %s) was lost: %zu of its %zu "
              "benchmarks finished, the last: %s\n",
              r, rs->host, rs->finished, rs->owned, rs->last);
    else
      fprintf(stderr,
              "mbench merge: rank %d (host %s) was lost: none of its %zu "
              "benchmarks finished%s\n",
              r, rs->host, rs->owned,
              *rs->file ? "" : " (it left no results file)");
  }
  fprintf(stderr,
          "mbench merge: the run is incomplete: %zu of %zu benchmarks did "
          "not run:\n",
          missing, m->count);
  for (size_t i = 0; i < m->count; i++)
    if (!m->result_name[i])
      fprintf(stderr, "  %s (rank %zu)\n", m->name[i], m->owner[i]);
  return 1;
}

/* Every rank's file read and matched against the plan; *paths: the files
 * there are. */
static int read_ranks(manifest_t *m, const char **paths, size_t *num) {
  *num = 0;
  for (int r = 0; r < m->ranks; r++) {
    if (!*m->rank[r].file) continue;
    mb_results_t *set = NULL;
    if (mb_results_load(m->rank[r].file, &set) != MB_OK)
      return cli_error("merge", "%s", mb_error_last());
    cli_results_note("merge", set);
    const int rc = match_results(m, r, set);
    mb_results_destroy(set);
    if (rc != 0) return -1;
    paths[(*num)++] = m->rank[r].file;
  }
  return 0;
}

int cli_merge_sharded(const char *manifest, const char *out) {
  manifest_t m;
  memset(&m, 0, sizeof m);
  int rc = read_manifest(manifest, &m) == 0 ? EXIT_OK : EXIT_USAGE;
  const char **paths = calloc((size_t)m.ranks + 1, sizeof *paths);
  const char **names = calloc(m.count + 1, sizeof *names);
  size_t num_paths = 0, num_names = 0;
  if (rc == EXIT_OK && (!paths || !names))
    rc = cli_error("merge", "out of memory");
  else if (rc == EXIT_OK && mb_report_check_output(out, &manifest, 1) != MB_OK)
    rc = cli_error("merge", "%s", mb_error_last());
  else if (rc == EXIT_OK && read_ranks(&m, paths, &num_paths) != 0)
    rc = EXIT_USAGE;
  for (size_t i = 0; rc == EXIT_OK && i < m.count; i++)
    if (m.result_name[i]) names[num_names++] = m.result_name[i];
  /* The finished results in plan order, by the merge every result file
   * goes through. */
  if (rc == EXIT_OK && num_paths) {
    if (mb_results_merge_ordered(paths, num_paths, names, num_names, out) !=
        MB_OK)
      rc = cli_error("merge", "%s", mb_error_last());
    else
      rc = cli_merge_report(out, num_paths);
  } else if (rc == EXIT_OK) {
    fprintf(stderr,
            "mbench merge: no rank left a results file: %s not written\n", out);
  }
  if (rc == EXIT_OK && report_losses(&m)) rc = EXIT_BENCH_FAILED;
  free(paths), free(names);
  manifest_free(&m);
  return rc;
}
