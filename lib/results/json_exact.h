/* Internal: JSON text whose doubles read back bit for bit (json_exact.c). */
#ifndef MB_JSON_EXACT_H
#define MB_JSON_EXACT_H

#include <cjson/cJSON.h>

/* Turns, in place, every number of `tree` that cJSON's 15-digit text would
 * not give back exactly into raw text that does. For trees built to be
 * printed: a converted number no longer reads as a number. */
void mb__json_exact_numbers(cJSON *tree);
/* cJSON_Print (formatted) or cJSON_PrintUnformatted of a copy of `tree`
 * made exact; `tree` is unchanged. NULL on out-of-memory; free() it. */
char *mb__json_print_exact(const cJSON *tree, int formatted);

#endif
