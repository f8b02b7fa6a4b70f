// autograd_cases_reduce_shape.cpp — gradcheck cases for the reduce_shape family (see autograd_cases.h).
#include "autograd_cases.h"
