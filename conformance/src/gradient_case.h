// gradient_case.h — --grad: backward on the device against backward on the
// CPU in float64.
#pragma once

#include "case_result.h"
#include "compare.h"

#include <loom/op_registry.h>
#include <loom/opinfo.h>

namespace loom::conformance {

// Runs the functional form with every floating input requiring grad,
// backpropagates sum_i (output_i * w_i).sum() for fixed random weights w_i
// (seeded from the case), and compares each input's gradient with the CPU
// float64 one cast to the case dtype. Fills r's status, errors and message.
void run_gradient_case(const OpDef& op, const opinfo::Sample& s, Device device, Tolerance tol,
                       CaseResult& r);

}  // namespace loom::conformance
