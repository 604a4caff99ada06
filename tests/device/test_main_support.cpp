// The device test program links SystemC: this TU provides sc_main and the per-test fork.
#include "sim/systemc_test_support.hpp"
