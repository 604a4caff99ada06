#pragma once
// How one engine (matrix or vector) works through a list of tiles: the sequencer's
// double-buffered pipeline, simulated per tile, never per cycle.
//
// For each tile the operands are streamed from HBM into the engine's SRAM buffers; two
// buffers per engine, so the load of tile i+1 overlaps the compute of tile i. A tile
// computes when its operands have arrived and the engine is free: it reads its operands
// from SRAM while computing (the SRAM's bank/port model times that read, in parallel with
// the compute), so the tile takes max(compute cycles, SRAM read time). Results (when the
// tile finishes an output block) are written back to HBM by a writer that overlaps the next
// tiles (or to SRAM, for a tile marked store_to_sram: a split-K partial; without an SRAM port
// that store is free). The engine is done when its last store has completed.
//
// Engine time is accounted in its own cycles, by reason (docs/profiler.md, "The profile of a request"):
//   active_cycles        computing (useful and padding: see macs_useful / macs_issued)
//   stall_hbm_cycles     operands not yet in SRAM (the load of this tile still running)
//   stall_sram_cycles    the SRAM read outlasting the compute
//   stall_store_cycles   both buffers taken and the writer behind (end of the list)
// and the device adds stall_dependency_cycles (waiting for the unit held by another
// command, or a semaphore) and idle_cycles (no work) as the rest of elapsed time, so that
// the buckets sum to elapsed cycles.
//
// Each tile is a slice on the engine's trace track carrying the command's correlation id.
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/units/memory_port.hpp"

namespace sohusim::device {

struct EngineTile {
  std::uint64_t load_address = 0;  // HBM address of the operands to stream in (0 bytes: resident)
  std::uint64_t load_bytes = 0;
  std::uint64_t sram_address = 0;     // where the engine reads its operands in SRAM
  std::uint64_t sram_read_bytes = 0;  // operand bytes the engine reads from SRAM while computing
  std::uint64_t compute_cycles = 0;   // engine cycles
  std::uint64_t store_address = 0;    // HBM (or SRAM) address of the results written after this tile
  std::uint64_t store_bytes = 0;
  bool store_to_sram = false;     // the store goes to SRAM (e.g. a split-K partial), not HBM
  std::uint64_t useful_macs = 0;  // MACs the command needs
  std::uint64_t issued_macs = 0;  // MACs the array spends, padding included
  std::uint64_t mac_cycles = 0;   // of compute_cycles, those the issued MACs take at the array's peak
                                  // (issued / (rows x cols x rate)); the rest is pipeline fill and
                                  // drain, weight loads and lane work (an attention's softmax)
  std::uint64_t flops = 0;        // floating-point operations (vector work; 2 x MACs for matrix work)
};

/// An engine's counters, registered under its scope (e.g. `dev0.me3`).
struct EngineCounters {
  explicit EngineCounters(const counters::Scope& s);
  counters::Counter& tiles;
  counters::Counter& active_cycles;
  counters::Counter& stall_hbm_cycles;
  counters::Counter& stall_sram_cycles;
  counters::Counter& stall_store_cycles;
  counters::Counter& stall_dependency_cycles;
  counters::Counter& macs_useful;
  counters::Counter& macs_issued;
  counters::Counter& mac_cycles;
  counters::Counter& hbm_bytes_read;
  counters::Counter& hbm_bytes_written;
  counters::Counter& sram_bytes_read;
  counters::Counter* flops[kNumDataTypes];
};

struct EngineTrace {
  counters::TraceRecorder* recorder = nullptr;  // null: no trace
  counters::TrackId track = 0;
  std::string tile_name = "tile";
};

/// Runs `tiles` on one engine whose clock period is `period_ps`. Blocking: call from a
/// SystemC thread. `sram` may be nullptr (operands read at the compute rate for free).
/// Returns false if a memory access failed (the rest of the list is abandoned after the
/// tiles in flight; the caller fails the command).
bool run_engine_tiles(const std::vector<EngineTile>& tiles, MemoryPort& hbm, MemoryPort* sram, std::uint64_t period_ps,
                      DataType dtype, EngineCounters& counters, const EngineTrace& trace, std::uint64_t correlation);

}  // namespace sohusim::device
