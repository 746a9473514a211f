/* libmicrobench — accelerator microbenchmarks with checked numerics.
 * The umbrella header: include this one. See docs/architecture.md. */
#ifndef MICROBENCH_H
#define MICROBENCH_H

#include "microbench/common.h"
#include "microbench/context.h"
#include "microbench/dtype.h"
#include "microbench/device.h"
#include "microbench/tensor.h"
#include "microbench/op.h"
#include "microbench/bench.h"
#include "microbench/model.h"
#include "microbench/report.h"
#include "microbench/preset.h"
#include "microbench/plan.h"
#include "microbench/results.h"
#include "microbench/comm.h"

#endif
