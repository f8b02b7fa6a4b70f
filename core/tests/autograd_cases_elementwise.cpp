// autograd_cases_elementwise.cpp — gradcheck cases for the elementwise family (see autograd_cases.h).
#include "autograd_cases.h"
