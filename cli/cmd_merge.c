/* mbench merge A B ... -o OUT: result files of several hosts, devices or
 * runs into one document (every result tagged with its source). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

static const opt_def_t k_merge_opts[] = {
    {"output", 'o', OPT_STR, O(output), "FILE",
     "the merged document (required; written whole or not at all)"},
    {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"},
};
#define NUM_MERGE_OPTS (sizeof k_merge_opts / sizeof k_merge_opts[0])

static const cli_command_t k_merge_command = {
    "merge", k_merge_opts, NUM_MERGE_OPTS,
    "usage: mbench merge FILE... -o OUT\n"
    "       mbench merge RUN.json.plan -o OUT\n\n"
    "Combines result files (JSON documents or .jsonl streams of runs that\n"
    "died) into one document: every result is kept and tagged with\n"
    "source {file, host}; meta.merged_from lists each input's meta;\n"
    "devices are the union. Given a sharded run's manifest (mpirun ...\n"
    "mbench run --config F -o RUN.json writes RUN.json.plan), merges its\n"
    "ranks' files in plan order and names the ranks that were lost and\n"
    "the benchmarks that did not run (exit 1 then).\n\noptions:\n"};

/* The output re-read: the count printed is what the file holds. */
int cli_merge_report(const char *out, size_t inputs) {
  mb_results_t *set = NULL;
  if (mb_results_load(out, &set) != MB_OK)
    return cli_error("merge", "%s", mb_error_last());
  printf("merged %zu results from %zu file%s into %s\n", mb_results_count(set),
         inputs, inputs == 1 ? "" : "s", out);
  mb_results_destroy(set);
  return EXIT_OK;
}

/* What reading each input drops (a stream's cut last line), said before
 * the merge; a file that cannot be read is the merge's error to report. */
static void note_inputs(const char *const *paths, size_t count) {
  for (size_t i = 0; i < count; i++) {
    mb_results_t *set = NULL;
    if (mb_results_load(paths[i], &set) == MB_OK)
      cli_results_note("merge", set);
    mb_results_destroy(set);
  }
}

int cmd_merge(int argc, char **argv) {
  cli_opts_t o;
  cli_init_opts(&o);
  size_t max_words = argc > 2 ? (size_t)argc - 2 : 1, nwords = 0;
  const char **words = calloc(max_words, sizeof *words);
  if (!words) return cli_error("merge", "out of memory");
  int rc = EXIT_OK;
  const int parsed = cli_parse_command(&k_merge_command, argc, argv, 2, &o,
                                       words, max_words, &nwords);
  if (parsed != 0)
    rc = parsed < 0 ? EXIT_USAGE : EXIT_OK;
  else if (nwords == 0)
    rc = cli_error("merge", "no input files; see mbench merge --help");
  else if (!o.output)
    rc = cli_error("merge",
                   "-o OUT is required (where the merged document "
                   "goes)");
  else if (nwords == 1 && cli_is_shard_manifest(words[0]))
    rc = cli_merge_sharded(words[0], o.output);
  else if (note_inputs(words, nwords),
           mb_results_merge(words, nwords, o.output) != MB_OK)
    rc = cli_error("merge", "%s", mb_error_last());
  else
    rc = cli_merge_report(o.output, nwords);
  free(words);
  return rc;
}
