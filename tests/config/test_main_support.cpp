// The loader tests resolve sim/'s core schema, so this program links sim/ and with it
// libsystemc.so, which refers to sc_main: this TU provides it (no test here runs the kernel).
#include "sim/systemc_test_support.hpp"
