// autograd_cases_indexing.cpp — gradcheck cases for the indexing family (see autograd_cases.h).
#include "autograd_cases.h"
