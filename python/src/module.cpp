// sohusim._core: the Python extension module behind `import sohusim` (python/sohusim/). It
// binds platform::Simulator and the runs of `sohusim run` and `sohusim serve`
// (platform/run_request.hpp, platform/serve_request.hpp), whose JSON it returns as Python
// dicts: the same content the command line prints with --json. docs/python.md is the manual.
//
// SystemC allows one simulator per process (its kernel cannot be restarted, and a system
// built after the first simulation started could not be elaborated): the module refuses a
// second Simulator with a RuntimeError that says so and names sohusim.run_point.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <systemc>

#include "sohusim/config/config_error.hpp"
#include "sohusim/counters/counter.hpp"
#include "sohusim/counters/distribution.hpp"
#include "sohusim/platform/run_configuration.hpp"
#include "sohusim/platform/run_request.hpp"
#include "sohusim/platform/serve_request.hpp"
#include "sohusim/platform/simulator.hpp"

namespace py = pybind11;

// libsystemc.so refers to sc_main (its own main() calls it); a Python process never runs that
// main(), but the symbol must resolve when the module is loaded.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) {
  return 0;
}

namespace sohusim::python {

namespace {

// A Simulator was built in this process: no other can be (see the file comment).
bool g_simulator_built = false;

constexpr const char* kOnePerProcess =
    "sohusim: this process already has its Simulator, and SystemC allows one per process (its "
    "kernel cannot be restarted, nor a second system elaborated once simulation has started). "
    "Keep using that Simulator (run() and serve() may be called again: simulated time goes on), "
    "or run each configuration in its own process: sohusim.run_point([\"run\", \"--system\", ...]) "
    "or sohusim.sweep(spec, out)";

py::object json_to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

// A value of Simulator(set={...}): text as written, numbers as Python spells them, booleans
// as YAML does.
std::string set_value_text(const py::handle& v, const std::string& key) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return py::repr(v).cast<std::string>();
  throw py::type_error("set[\"" + key + "\"]: a str, int, float or bool, not " +
                       py::repr(py::type::handle_of(v)).cast<std::string>());
}

std::vector<std::string> string_list(const py::handle& v, const char* what) {
  std::vector<std::string> out;
  if (v.is_none()) return out;
  if (py::isinstance<py::str>(v)) return {v.cast<std::string>()};
  for (const py::handle& x : v) {
    if (!py::isinstance<py::str>(x)) throw py::type_error(std::string(what) + ": a str or a sequence of str");
    out.push_back(x.cast<std::string>());
  }
  return out;
}

std::string optional_string(const py::object& v) {
  return v.is_none() ? std::string() : py::str(v).cast<std::string>();
}

// Raises sohusim.SimulationError(message) with `.result` the run's JSON.
[[noreturn]] void raise_simulation_error(const std::string& message, const nlohmann::json& result) {
  const py::object type = py::module_::import("sohusim._core").attr("SimulationError");
  py::object e = type(message);
  e.attr("result") = json_to_python(result);
  PyErr_SetObject(type.ptr(), e.ptr());
  throw py::error_already_set();
}

py::object number_or_none(double v) {
  if (!std::isfinite(v)) return py::none();
  return py::float_(v);
}

class PySimulator {
 public:
  PySimulator(const std::string& system, const py::object& arch, const py::object& hbm, const py::object& configs,
              const py::object& sets, const py::object& fidelity, const py::object& mode,
              const py::object& config_dirs) {
    if (g_simulator_built) throw std::runtime_error(kOnePerProcess);
    platform::SimulatorOptions o;
    o.system = system;
    o.arch = optional_string(arch);
    o.hbm = optional_string(hbm);
    o.configs = string_list(configs, "configs");
    if (!sets.is_none()) {
      for (const auto& [k, v] : sets.cast<py::dict>()) {
        const std::string key = py::str(k).cast<std::string>();
        o.overrides.push_back(key + "=" + set_value_text(v, key));
      }
    }
    o.fidelity = optional_string(fidelity);
    o.mode = optional_string(mode);
    o.config_dirs = string_list(config_dirs, "config_dirs");
    try {
      py::gil_scoped_release unlocked;
      sim_ = std::make_unique<platform::Simulator>(o);
    } catch (...) {
      // A bad configuration is found before anything is built, and another Simulator may be
      // tried; a failure once SystemC objects exist leaves the process to them.
      if (!sc_core::sc_get_top_level_objects().empty() || sc_core::sc_get_status() != sc_core::SC_ELABORATION)
        g_simulator_built = true;
      throw;
    }
    g_simulator_built = true;
  }

  py::object run(const platform::RunRequest& request) {
    usable();
    const Busy busy(busy_);
    platform::RunPlan plan = platform::plan_run(request, sim_->configuration().choice);
    platform::RunOutcome out;
    nlohmann::json j;
    {
      py::gil_scoped_release unlocked;
      platform::check_run(*sim_, plan);
      out = platform::execute_run(*sim_, plan);
      j = platform::run_json(*sim_, plan, out);
    }
    if (!out.failure.empty()) raise_simulation_error(out.failure, j);
    return json_to_python(j);
  }

  py::object serve(const platform::ServeRequest& request) {
    usable();
    const Busy busy(busy_);
    const platform::ServePlan plan = platform::plan_serve(request, sim_->configuration().choice);
    platform::ServeOutcome out;
    nlohmann::json j;
    {
      py::gil_scoped_release unlocked;
      out = platform::execute_serve(*sim_, plan);
      j = platform::serve_json(*sim_, plan, out);
    }
    if (!out.result.failure.empty()) raise_simulation_error(out.result.failure, j);
    return json_to_python(j);
  }

  // Every statistic (or those matching `pattern`, a glob): name -> value; a counter as an int,
  // a distribution as a dict of its summary, an undefined value (an empty distribution's
  // minimum, a formula dividing by zero) as None.
  py::dict stats(const py::object& pattern) const {
    idle();
    const counters::Registry& reg = sim_->stats();
    const std::vector<const counters::Stat*> all =
        pattern.is_none() ? reg.all() : reg.glob(py::str(pattern).cast<std::string>());
    py::dict out;
    for (const counters::Stat* s : all) {
      const py::str name(s->name());
      switch (s->kind()) {
        case counters::StatKind::Counter:
          out[name] = py::int_(static_cast<const counters::Counter*>(s)->count());
          break;
        case counters::StatKind::Distribution: {
          const auto* d = static_cast<const counters::Distribution*>(s);
          py::dict x;
          x["count"] = py::int_(d->count());
          x["mean"] = number_or_none(d->mean());
          x["min"] = number_or_none(d->min());
          x["max"] = number_or_none(d->max());
          x["p50"] = number_or_none(d->percentile(0.50));
          x["p90"] = number_or_none(d->percentile(0.90));
          x["p99"] = number_or_none(d->percentile(0.99));
          out[name] = x;
          break;
        }
        case counters::StatKind::Gauge:
        case counters::StatKind::Formula:
          out[name] = number_or_none(s->value());
          break;
      }
    }
    return out;
  }

  py::object configuration() const { return json_to_python(sim_->configuration().record()); }
  double simulated_seconds() const {
    idle();
    return sim_->simulated_seconds();
  }
  double wall_seconds() const { return sim_->wall_seconds(); }

 private:
  // run() and serve() simulate without the GIL: another Python thread must not start a second
  // run, nor read the statistics, while one goes on. Set and checked with the GIL held.
  class Busy {
   public:
    explicit Busy(bool& flag) : flag_(flag) { flag_ = true; }
    ~Busy() { flag_ = false; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    bool& flag_;
  };
  void idle() const {
    if (busy_) throw std::runtime_error("sohusim: this Simulator is running (in another thread); wait for it");
  }

  void usable() const {
    idle();
    if (sim_->abandoned()) {
      throw std::runtime_error(
          "sohusim: an earlier run of this Simulator failed and left host programs suspended (SystemC cannot "
          "unwind them), so it cannot run again; run each point in its own process: sohusim.run_point([...])");
    }
  }

  std::unique_ptr<platform::Simulator> sim_;
  bool busy_ = false;
};

}  // namespace

}  // namespace sohusim::python

PYBIND11_MODULE(_core, m) {
  using sohusim::python::PySimulator;
  namespace platform = sohusim::platform;
  // SystemC prints a banner on stdout when its kernel starts unless told not to.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  m.doc() = "sohusim's C++ core: the Simulator (docs/python.md)";

  py::register_exception<sohusim::config::ConfigError>(m, "ConfigError", PyExc_ValueError);
  py::exception<platform::SimulationError>(m, "SimulationError", PyExc_RuntimeError);
  m.attr("ConfigError").attr("__doc__") =
      "A configuration that does not validate; the message is every diagnostic, compiler style "
      "(file:line:col: key: message; allowed: range), as `sohusim config check` prints them.";
  m.attr("SimulationError").attr("__doc__") =
      "A run that failed while simulating (a device error, the time limit); `.result` is the "
      "JSON the command line prints for it (\"ok\": false, \"failure\").";
  m.def(
      "version", [] { return std::string(platform::build_version()); }, "the project version");
  m.def(
      "commit", [] { return std::string(platform::build_commit()); }, "the source revision of this build");

  const platform::RunRequest run_defaults;
  const platform::ServeRequest serve_defaults;
  py::class_<PySimulator>(m, "Simulator",
                          R"(A simulated system: hosts, their devices, links and network (platform::Simulator).

system: a name in configs/systems (sohu-1, sohu-8, sohu-2x8, ...) or a system YAML file.
arch: the device for every host instead of the system's (a preset in configs/arch or a file).
hbm: an HBM preset (configs/hbm) replacing the arch's HBM generation, keeping its stacks.
configs: config files or presets, layered in order after the system's `set:` list.
set: {key: value} configuration overrides, applied last; values as text with units
     ("400 GB/s") or numbers.
fidelity: "fast" or "detailed" (default: the configuration's). mode: "timing" or
"functional". config_dirs: the preset folders (sohusim.Simulator finds them).

One per process: a second Simulator raises RuntimeError (use sohusim.run_point).
A configuration that does not validate raises sohusim.ConfigError (a ValueError).)")
      .def(py::init<const std::string&, const py::object&, const py::object&, const py::object&, const py::object&,
                    const py::object&, const py::object&, const py::object&>(),
           py::arg("system") = "sohu-1", py::kw_only(), py::arg("arch") = py::none(), py::arg("hbm") = py::none(),
           py::arg("configs") = py::tuple(), py::arg("set") = py::none(), py::arg("fidelity") = py::none(),
           py::arg("mode") = py::none(), py::arg("config_dirs") = py::none())
      .def(
          "run",
          [](PySimulator& self, const std::string& model, unsigned batch, unsigned prompt, unsigned gen,
             const std::string& dtype, unsigned tp, bool decode_only, std::uint64_t seed, bool upload_weights,
             bool capture) {
            platform::RunRequest r;
            r.model = model;
            r.batch = batch;
            r.prompt = prompt;
            r.gen = gen;
            r.dtype = dtype;
            r.tp = tp;
            r.decode_only = decode_only;
            r.seed = seed;
            r.upload_weights = upload_weights;
            r.capture = capture;
            return self.run(r);
          },
          R"(Runs one transformer request end to end; returns the dict `sohusim run --json` prints.

The options are those of `sohusim run` (--decode-only is decode_only=True, ...). Time goes
on from the last run; the figures (energy, utilization) are this request's. Bad options
raise ValueError; a failure while simulating raises sohusim.SimulationError.)",
          py::arg("model") = run_defaults.model, py::kw_only(), py::arg("batch") = run_defaults.batch,
          py::arg("prompt") = run_defaults.prompt, py::arg("gen") = run_defaults.gen,
          py::arg("dtype") = run_defaults.dtype, py::arg("tp") = run_defaults.tp,
          py::arg("decode_only") = run_defaults.decode_only, py::arg("seed") = run_defaults.seed,
          py::arg("upload_weights") = run_defaults.upload_weights, py::arg("capture") = run_defaults.capture)
      .def(
          "serve",
          [](PySimulator& self, const std::string& model, const std::string& dtype, unsigned tp,
             const std::string& scenario, double rate, double cv, std::uint64_t requests, double duration,
             unsigned clients, double think, const std::string& input_len, const std::string& output_len,
             const std::string& trace_file, const std::string& scheduler, unsigned max_batch, std::uint32_t max_tokens,
             std::uint32_t kv_block, std::uint64_t kv_blocks, double memory_utilization, bool swap, double slo_ttft,
             double slo_tpot, bool no_reuse, std::uint64_t seed) {
            platform::ServeRequest r;
            r.model = model;
            r.dtype = dtype;
            r.tp = tp;
            r.scenario = scenario;
            r.rate = rate;
            r.cv = cv;
            r.requests = requests;
            r.duration_s = duration;
            r.clients = clients;
            r.think_s = think;
            r.input_len = input_len;
            r.output_len = output_len;
            r.trace_file = trace_file;
            r.scheduler = scheduler;
            r.max_batch = max_batch;
            r.max_tokens = max_tokens;
            r.kv_block = kv_block;
            r.kv_blocks = kv_blocks;
            r.memory_utilization = memory_utilization;
            r.swap = swap;
            r.slo_ttft_ms = slo_ttft;
            r.slo_tpot_ms = slo_tpot;
            r.no_reuse = no_reuse;
            r.seed = seed;
            return self.serve(r);
          },
          R"(Serves a stream of requests on host 0's devices; returns the dict `sohusim serve --json` prints.

The options are those of `sohusim serve` with underscores (--max-batch is max_batch,
--slo-ttft is slo_ttft in ms, --duration and --think in seconds). Each call is its own run
(its statistics under "serve", then "serve2", ...). Bad options raise ValueError; a run that
fails raises sohusim.SimulationError with the JSON as `.result`.)",
          py::arg("model") = serve_defaults.model, py::kw_only(), py::arg("dtype") = serve_defaults.dtype,
          py::arg("tp") = serve_defaults.tp, py::arg("scenario") = serve_defaults.scenario,
          py::arg("rate") = serve_defaults.rate, py::arg("cv") = serve_defaults.cv,
          py::arg("requests") = serve_defaults.requests, py::arg("duration") = serve_defaults.duration_s,
          py::arg("clients") = serve_defaults.clients, py::arg("think") = serve_defaults.think_s,
          py::arg("input_len") = serve_defaults.input_len, py::arg("output_len") = serve_defaults.output_len,
          py::arg("trace_file") = serve_defaults.trace_file, py::arg("scheduler") = serve_defaults.scheduler,
          py::arg("max_batch") = serve_defaults.max_batch, py::arg("max_tokens") = serve_defaults.max_tokens,
          py::arg("kv_block") = serve_defaults.kv_block, py::arg("kv_blocks") = serve_defaults.kv_blocks,
          py::arg("memory_utilization") = serve_defaults.memory_utilization, py::arg("swap") = serve_defaults.swap,
          py::arg("slo_ttft") = serve_defaults.slo_ttft_ms, py::arg("slo_tpot") = serve_defaults.slo_tpot_ms,
          py::arg("no_reuse") = serve_defaults.no_reuse, py::arg("seed") = serve_defaults.seed)
      .def("stats", &PySimulator::stats, py::arg("pattern") = py::none(),
           R"(Every statistic (or those whose name matches the glob `pattern`, e.g. "dev0.me*.macs_useful"):
name -> value. Counters are ints, gauges and formulas floats, distributions dicts of
count/mean/min/max/p50/p90/p99; an undefined value is None.)")
      .def("configuration", &PySimulator::configuration,
           "The resolved configuration's record, as every result carries it (system, arch, hbm, sets, hash, ...).")
      .def_property_readonly("simulated_seconds", &PySimulator::simulated_seconds, "Simulated time so far, seconds.")
      .def_property_readonly("wall_seconds", &PySimulator::wall_seconds, "Wall time spent simulating so far, seconds.");
}
