// tests/sim/systemc_test_support.hpp — how the sim tests share one process with SystemC.
//
// The problem. All tests in tests/sim/ are one GoogleTest program, but the SystemC 2.3
// kernel is a per-process singleton with one-way state: modules can only be created before
// the first sc_start(), sc_start() cannot resume after sc_stop(), module names must be
// unique, and the time resolution is frozen by the first non-zero sc_time. Two tests that
// each build a small platform and simulate it cannot both run in the same kernel.
//
// The approach chosen: every test that elaborates modules or runs the kernel runs its body
// in a fork()ed child process, via SOHUSIM_SYSTEMC_TEST below. The child inherits a kernel
// that the parent never elaborated or started, builds its own modules, simulates, and
// exits; the parent's kernel stays pristine for the next test. So:
//   - tests are independent of each other and of their order, and each one passes alone,
//     which is how CTest runs them (gtest_discover_tests: one process per test);
//   - a test body is written like any gtest body: EXPECT_*/ASSERT_* work in the child and
//     print their messages as usual; the child's exit status tells the parent whether any
//     of them failed, and the parent turns that (or a crash, or a timeout) into a failure
//     of the test;
//   - the child leaves with exit(), not _exit(), so AddressSanitizer's leak check runs in
//     it and a leak fails the test.
// Alternatives considered: one elaboration shared by all tests (order-dependent, and a
// test run alone would have to build everything), a custom main (the program links
// gtest_main), and gtest death tests for everything (assertion messages from the child are
// not reported). Death tests in "threadsafe" style are still the right tool for the rare
// test that needs a kernel no test has touched, because they re-execute the program from
// scratch (see the time-resolution test in test_clock_domain.cpp).
//
// Tests that do not need the kernel (plain C++ and sc_time arithmetic) run in the parent
// as ordinary TESTs. They may create sc_time values: the parent's resolution then freezes
// at 1 ps, which is what every child needs anyway.
#pragma once

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "sohusim/sim/correlation_extension.hpp"
#include "sohusim/sim/sim_time.hpp"

// libsystemc.so contains a main() that calls sc_main(), so every program linked with it
// must define sc_main. Which main() runs then depends on link order: gtest_main's when its
// archive comes before libsystemc.so (as CMake orders it), SystemC's otherwise. Both lead
// to the same tests: SystemC's main() calls this sc_main, which runs them. Inline (one
// definition however many test files include this header) and `used` (emitted although
// only the shared library refers to it).
extern "C" [[gnu::used]] inline int sc_main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// AddressSanitizer's fiber interface and LeakSanitizer's root regions, declared weak: null
// unless the program runs with ASan.
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size) __attribute__((weak));
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old)
    __attribute__((weak));
void __lsan_register_root_region(const void* p, std::size_t size) __attribute__((weak));
}

namespace sohusim::test {

/// The calling (main) thread's stack: its lowest address and size.
inline bool main_stack_bounds(void*& bottom, std::size_t& size) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) {
    return false;
  }
  const int rc = pthread_attr_getstack(&attr, &bottom, &size);
  pthread_attr_destroy(&attr);
  return rc == 0;
}

/// Tells AddressSanitizer again where the main thread's stack is.
///
/// Debian's libsystemc runs SC_THREADs as QuickThreads coroutines and announces each
/// switch to ASan, but announces the switch back to the main coroutine with an empty stack
/// (the main coroutine owns no stack of its own). From the first sc_start() on, ASan
/// therefore has wrong bounds for the main stack: it prints "ASan is ignoring requested
/// __asan_handle_no_return" and its leak check no longer scans the main stack, so every
/// object only referenced from there (the running gtest Test, for one) is reported as
/// leaked. Announcing a switch to the real main stack while on it puts the bounds right.
/// Does nothing without ASan.
inline void resync_sanitizer_main_stack() {
  void* bottom = nullptr;
  std::size_t size = 0;
  if (__sanitizer_start_switch_fiber == nullptr || __sanitizer_finish_switch_fiber == nullptr ||
      !main_stack_bounds(bottom, size)) {
    return;
  }
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}

/// Makes the live part of the main stack (from here to its top) a root of the leak check.
///
/// The asan preset's tests run with LSAN_OPTIONS=use_stacks=0: LeakSanitizer would otherwise
/// scan the stack ASan believes the main thread is on, which after SystemC's coroutine
/// switches can be a process stack with guard pages, and its tracer then crashes reading one
/// ("Tracer caught signal 11", now and then). A child exits from inside its test, so the
/// running gtest Test is referenced from the main stack only: registering that stack's live
/// frames as a root region keeps it found. Does nothing without ASan.
inline void register_main_stack_as_leak_root() {
  void* bottom = nullptr;
  std::size_t size = 0;
  if (__lsan_register_root_region == nullptr || !main_stack_bounds(bottom, size)) {
    return;
  }
  const char here = 0;
  const char* top = static_cast<const char*>(bottom) + size;
  if (&here < top) __lsan_register_root_region(&here, static_cast<std::size_t>(top - &here));
}

/// Seconds a SystemC test child may run before it is killed and the test fails.
inline constexpr unsigned int kChildTimeoutSeconds = 120;

/// Runs `body` in a forked child and records a failure if the child reports one.
inline void run_in_child(void (*body)()) {
  // Anything buffered now would be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    FAIL() << "fork() failed: " << std::strerror(errno);
  }
  if (pid == 0) {
    alarm(kChildTimeoutSeconds);  // SIGALRM's default action ends a hung child
    try {
      body();
    } catch (const sc_core::sc_report& report) {
      ADD_FAILURE() << "uncaught SystemC report: " << report.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "uncaught exception: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "uncaught exception of unknown type";
    }
    resync_sanitizer_main_stack();  // before exit(), where the leak check runs
    register_main_stack_as_leak_root();
    const int code = ::testing::Test::HasFailure() ? EXIT_FAILURE : EXIT_SUCCESS;
    std::cout.flush();
    std::exit(code);
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      FAIL() << "waitpid() failed: " << std::strerror(errno);
    }
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ADD_FAILURE() << "the SystemC test child was killed by signal " << sig << " (" << strsignal(sig) << ")"
                  << (sig == SIGALRM ? ": it ran longer than the timeout" : "");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != EXIT_SUCCESS) {
    ADD_FAILURE() << "the SystemC test child exited with status " << WEXITSTATUS(status)
                  << "; its failures (or sanitizer report) are printed above";
  }
}

/// A scriptable initiator for test benches: runs `script` in an SC_THREAD from time 0,
/// offers blocking and debug helpers, and records every backward call (with the address
/// the payload showed at that moment) and every DMI invalidation it receives.
class TestInitiator : public sc_core::sc_module {
 public:
  struct BackwardCall {
    tlm::tlm_phase phase;
    std::uint64_t address;
    sc_core::sc_time at;  // sc_time_stamp() + annotated delay
    std::uint64_t correlation;
  };

  tlm_utils::simple_initiator_socket<TestInitiator> socket;
  std::function<void(TestInitiator&)> script;
  std::vector<BackwardCall> backward_calls;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> invalidations;
  tlm::tlm_sync_enum reply_to_begin_resp = tlm::TLM_ACCEPTED;
  sc_core::sc_event response_arrived;  // notified at the time a BEGIN_RESP takes effect

  SC_HAS_PROCESS(TestInitiator);
  explicit TestInitiator(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {
    socket.register_nb_transport_bw(this, &TestInitiator::nb_transport_bw);
    socket.register_invalidate_direct_mem_ptr(this, &TestInitiator::invalidate);
    SC_THREAD(run);
  }

  tlm::tlm_response_status transport(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned int len,
                                     sc_core::sc_time& delay, const unsigned char* enables = nullptr,
                                     unsigned int enables_len = 0) {
    tlm::tlm_generic_payload gp;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    gp.set_byte_enable_ptr(const_cast<unsigned char*>(enables));
    gp.set_byte_enable_length(enables_len);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_address(), addr) << "the initiator's address must come back unchanged";
    return gp.get_response_status();
  }
  tlm::tlm_response_status write(std::uint64_t addr, const void* data, unsigned int len, sc_core::sc_time& delay) {
    return transport(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(data), len, delay);
  }
  tlm::tlm_response_status read(std::uint64_t addr, void* data, unsigned int len, sc_core::sc_time& delay) {
    return transport(tlm::TLM_READ_COMMAND, addr, data, len, delay);
  }
  unsigned int debug(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned int len) {
    tlm::tlm_generic_payload gp;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(len);
    const unsigned int n = socket->transport_dbg(gp);
    EXPECT_EQ(gp.get_address(), addr) << "the initiator's address must come back unchanged";
    return n;
  }

 private:
  void run() {
    if (script) {
      script(*this);
    }
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    backward_calls.push_back(
        BackwardCall{phase, gp.get_address(), sc_core::sc_time_stamp() + delay, sim::correlation_of(gp)});
    if (phase == tlm::BEGIN_RESP) {
      response_arrived.notify(delay);
      if (reply_to_begin_resp == tlm::TLM_UPDATED) {
        phase = tlm::END_RESP;
      }
      return reply_to_begin_resp;
    }
    return tlm::TLM_ACCEPTED;
  }

  void invalidate(sc_dt::uint64 start, sc_dt::uint64 end) { invalidations.emplace_back(start, end); }
};

}  // namespace sohusim::test

/// Defines a test whose body runs in a fresh SystemC kernel (a forked child, see above).
/// Use it exactly like TEST(suite, name) { ... }.
#define SOHUSIM_SYSTEMC_TEST(suite, name)                          \
  static void suite##_##name##_systemc_body();                     \
  TEST(suite, name) {                                              \
    ::sohusim::test::run_in_child(&suite##_##name##_systemc_body); \
  }                                                                \
  static void suite##_##name##_systemc_body()
