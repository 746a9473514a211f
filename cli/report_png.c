/* mbench report --plot ... -o x.png: the library writes SVG; a PNG is that
 * SVG handed to the first converter on PATH. Which converters, and how
 * each is called, is this table; none found is a usage error said before
 * anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

/* argv of a converter from the SVG path, the PNG path and the picture's
 * size (chromium screenshots a window that size). */
typedef void (*argv_fn)(const char *svg, const char *png, const char *size,
                        const char **av);

static void rsvg_argv(const char *svg, const char *png, const char *size,
                      const char **av) {
  (void)size;
  const char *a[] = {"rsvg-convert", "-f", "png", "-o", png, svg, NULL};
  memcpy(av, a, sizeof a);
}

static void chromium_argv(const char *svg, const char *png, const char *size,
                          const char **av) {
  /* --no-sandbox: chromium refuses to run as root without it. */
  const char *a[] = {"chromium",
                     "--headless",
                     "--no-sandbox",
                     "--disable-gpu",
                     "--hide-scrollbars",
                     png,
                     size,
                     svg,
                     NULL};
  memcpy(av, a, sizeof a);
}

static void convert_argv(const char *svg, const char *png, const char *size,
                         const char **av) {
  (void)size;
  const char *a[] = {"convert", svg, png, NULL};
  memcpy(av, a, sizeof a);
}

static const struct {
  const char *program;
  argv_fn make_argv;
  const char *png_prefix, *svg_prefix; /* how it takes its paths */
} k_converters[] = {
    {"rsvg-convert", rsvg_argv, "", ""},
    {"chromium", chromium_argv, "--screenshot=", "file://"},
    {"convert", convert_argv, "png:", ""},
};
#define NUM_CONVERTERS (sizeof k_converters / sizeof k_converters[0])

static int on_path(const char *program) {
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    char full[4096];
    snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", program);
    if (access(full, X_OK) == 0) return 1;
    p += n + (p[n] == ':');
  }
  return 0;
}

int cli_png_converter(const char *cmd) {
  for (size_t i = 0; i < NUM_CONVERTERS; i++)
    if (on_path(k_converters[i].program)) return (int)i;
  char names[128] = "";
  for (size_t i = 0; i < NUM_CONVERTERS; i++)
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
             i ? ", " : "", k_converters[i].program);
  cli_error(cmd,
            "a PNG needs an SVG converter on PATH and none was found "
            "(looked for %s); write .svg instead",
            names);
  return -1;
}

/* width and height of the SVG document's outer element. */
static void svg_size(const char *svg, char *size, size_t cap) {
  double w = 800, h = 600;
  FILE *f = fopen(svg, "r");
  char head[1024] = "";
  if (f) {
    size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = '\0';
    fclose(f);
  }
  const char *p = strstr(head, "width=\"");
  if (p) w = atof(p + 7);
  p = strstr(head, "height=\"");
  if (p) h = atof(p + 8);
  snprintf(size, cap, "--window-size=%.0f,%.0f", w, h);
}

/* path as a file: URL's path: bytes other than unreserved ones and "/"
 * percent-encoded, so a directory named "a#b" or "50%" is not read as a
 * fragment or an escape. */
static void url_path(const char *path, char *out, size_t cap) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    const int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || strchr("/-._~", *p);
    if (n + 4 > cap) break;
    if (plain) {
      out[n++] = (char)*p;
    } else {
      out[n++] = '%';
      out[n++] = hex[*p >> 4];
      out[n++] = hex[*p & 15];
    }
  }
  out[n] = '\0';
}

int cli_svg_to_png(const char *cmd, int converter, const char *svg,
                   const char *png) {
  char abs_svg[4096], real[4096], png_arg[4200], svg_arg[12400], size[64];
  char url[12300];
  const char *av[16];
  snprintf(abs_svg, sizeof abs_svg, "%s", realpath(svg, real) ? real : svg);
  snprintf(png_arg, sizeof png_arg, "%s%s", k_converters[converter].png_prefix,
           png);
  const int is_url = strcmp(k_converters[converter].svg_prefix, "file://") == 0;
  if (is_url) url_path(abs_svg, url, sizeof url);
  snprintf(svg_arg, sizeof svg_arg, "%s%s", k_converters[converter].svg_prefix,
           is_url ? url : abs_svg);
  svg_size(svg, size, sizeof size);
  k_converters[converter].make_argv(svg_arg, png_arg, size, av);
  /* The converter's chatter (chromium's is loud) is not ours to print. */
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int err = posix_spawnp(&pid, av[0], &fa, NULL, (char *const *)av, environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  if (err == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (err != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      access(png, R_OK) != 0)
    return cli_error(cmd, "%s could not convert %s to %s (%s)", av[0], svg, png,
                     err ? strerror(err)
                     : WIFEXITED(status) && WEXITSTATUS(status)
                         ? "it exited non-zero"
                         : "it wrote nothing");
  return 0;
}
