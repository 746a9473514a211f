#include "microbench/common.h"
#include "mb_git_commit.h" /* generated at build time */

#define MB__STR2(x) #x
#define MB__STR(x) MB__STR2(x)

const char *mb_version(void) {
  return MB__STR(MB_VERSION_MAJOR) "." MB__STR(MB_VERSION_MINOR) "." MB__STR(
      MB_VERSION_PATCH);
}

unsigned mb_version_number(void) {
  return MB_VERSION_NUMBER;
}

const char *mb_git_commit(void) {
  return MB_GIT_COMMIT_STR;
}
