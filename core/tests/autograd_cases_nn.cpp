// autograd_cases_nn.cpp — gradcheck cases for the nn family (see autograd_cases.h).
#include "autograd_cases.h"
