/* Status names and descriptions, generated from MB_STATUS_MAP. */
#include "microbench/common.h"

const char *mb_status_str(mb_status_t status) {
  switch (status) {
#define MB__CASE(name, value, text) \
  case MB_##name:                   \
    return text;
    MB_STATUS_MAP(MB__CASE)
#undef MB__CASE
  }
  return "unknown status";
}

const char *mb_status_name(mb_status_t status) {
  switch (status) {
#define MB__CASE(name, value, text) \
  case MB_##name:                   \
    return "MB_" #name;
    MB_STATUS_MAP(MB__CASE)
#undef MB__CASE
  }
  return "MB_UNKNOWN";
}
