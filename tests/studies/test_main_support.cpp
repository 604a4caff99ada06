// The studies link platform/ and with it libsystemc.so, which refers to sc_main: this TU
// provides it (no test here runs the kernel; points run as processes).
#include "sim/systemc_test_support.hpp"
