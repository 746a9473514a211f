/* Small keyed text files of measured figures, kept in the user's cache
 * directory so that one process measures what the machine's next ones
 * reuse. Two callers share this one copy: the CPU module (its peak FLOP/s,
 * backends/cpu/cpu_peak_cache.c) and the core (each device's copy
 * bandwidth, lib/measure/calibration_cache.c); each compiles it in, since a
 * module links nothing of the core.
 *
 * A file is: a header line naming what it holds, the key lines (what the
 * figures depend on), the caller's "name=value" lines, then
 * "measured_at=SECONDS\nend\n". Anything else — another header or key, a
 * truncated or foreign file, a time in the future — is a miss: the caller
 * measures and writes the file again, through a temporary file renamed over
 * it, so a reader never sees half a file.
 *
 * Where: $MB_CACHE_DIR, else $XDG_CACHE_HOME/microbench, else
 * ~/.cache/microbench. MB_REMEASURE_PEAK=1 measures whatever the files
 * hold (and saves the new figures). */
#ifndef MB_CACHE_FILE_H
#define MB_CACHE_FILE_H

#include <stddef.h>

/* Far more than a valid file (a few hundred bytes): a larger one is not
 * ours. */
enum { MB_CACHE_FILE_MAX = 8192, MB_CACHE_FILE_PATH = 512 };

/* The path of cache file `name` in the cache directory; 0 when there is
 * none (no MB_CACHE_DIR, XDG_CACHE_HOME or HOME) or the path is too long. */
int mb__cache_file_path(const char *name, char *path, size_t cap);

/* The path of cache file "<stem>-<8 hex digits>", the digits a hash
 * (FNV-1a) of `key`: one file per key, so configurations of one machine
 * that differ in what the figures depend on (a process in a one-core
 * taskset or an mpirun rank beside whole-machine runs: "1 thread" and "2
 * threads") keep their own figures instead of overwriting one file in
 * turn, each measuring again. 0 as mb__cache_file_path. */
int mb__cache_file_keyed_path(const char *stem, const char *key, char *path,
                              size_t cap);

/* 1 when MB_REMEASURE_PEAK asks for the roofs to be measured again. */
int mb__cache_file_remeasure(void);

/* The lines after `header` and `key` of file `path`, read whole into buf;
 * NULL on a miss, *why saying which ("no file", "another key", ...). */
char *mb__cache_file_read(const char *path, const char *header, const char *key,
                          char *buf, size_t cap, const char **why);

/* The value of line "name=VALUE\n" at *p, which is advanced past it; NULL
 * when the line is another one or has no end. The value is cut at the
 * line break in place. */
char *mb__cache_file_field(char **p, const char *name);

/* A whole decimal number (figures are saved whole — FLOP/s, bytes/s,
 * seconds — so no locale's decimal point can misread them). */
int mb__cache_file_whole(const char *s, unsigned long long *out);

/* The file's last lines at p ("measured_at=N\nend\n"): its age in seconds,
 * or -1 when they are missing, damaged or in the future. */
long long mb__cache_file_age(char *p);

/* "12 s", "5 min", "3 h", "4 days". */
void mb__cache_file_format_age(long long s, char *buf, size_t cap);

/* Line breaks in s turned into spaces: a key or note stays one line. */
void mb__cache_file_one_line(char *s);

/* Writes header, key, body and the closing lines to `path` (its directory
 * made as needed), atomically; 0, or -1 with errno set (E2BIG: too long). */
int mb__cache_file_write(const char *path, const char *header, const char *key,
                         const char *body);

#endif
