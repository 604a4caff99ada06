#pragma once
// SohuDevice: the virtual silicon. A Sohu-class accelerator that software reaches only the
// way it reaches the chip (docs/device.md): the PCIe endpoint in front of it
// (config space, MSI-X, AER, SR-IOV live there: pcie/), BAR0 registers decoded from the
// register map (register_map.hpp, generated from regmap/sohu_regmap.yaml), BAR2 as a
// window onto HBM, NVMe-style queues in host memory (command_processor.hpp), DMA over PCIe
// through the host IOMMU, and MSI-X interrupts.
//
// SR-IOV: the PF offers seven virtual functions (functions 1..7 of its bus). Each VF that
// software enables has a BAR0 with the PF's register layout and a controller of its own
// (function_controller.hpp: registers, error log, admin and I/O queues, MSI-X, DMA with the
// VF's requester ID); its commands share the device's engines and memories and run in the
// device-MMU context the PF assigns with VF_CONTEXT (docs/device.md, "Virtual functions").
//
// Inside: HBM stacks (memory::HbmMemory, either fidelity), the SRAM scratchpad
// (memory::Sram), the DMA engine, matrix and vector engines run per tile by the
// CommandExecutor, the device MMU, the PMU, the trace unit, the timestamp counter, the error
// log, semaphores, and chip-to-chip ports to peer devices.
//
// Each function's controller reaches the device through a CommandBackend (commands its
// queues pass on) and a FunctionDevice (MSI-X, reset, identity): the device itself is the
// PF's, a VfFunction per VF adds the VF's requester ID, host port and context.
//
// Sockets: `bar` (target) is bound by the endpoint's bar_socket; `host_dma` (initiator)
// binds to the endpoint's dma_socket. attach() gives the device its endpoint for MSI-X and
// Function Level Reset. Stats live under the device prefix (e.g. `dev0`): `dev0.cp.*`,
// `dev0.me3.*`, `dev0.ve0.*`, `dev0.dma.*`, `dev0.hbm.*`, `dev0.sram.*`, `dev0.mmu.*`,
// `dev0.trace_unit.*`, `dev0.c2c.p<k>.tx.*`, `dev0.errors`, `dev0.energy.*`; a VF's
// controller under `dev0.vf<i>` (`dev0.vf0.cp.*`, `dev0.vf0.errors`), registered when the VF
// first appears.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "sohusim/config/config.hpp"
#include "sohusim/device/device_params.hpp"
#include "sohusim/device/exec/command_executor.hpp"
#include "sohusim/device/exec/semaphore_bank.hpp"
#include "sohusim/device/frontend/command_backend.hpp"
#include "sohusim/device/frontend/command_processor.hpp"
#include "sohusim/device/frontend/error_log.hpp"
#include "sohusim/device/frontend/function_controller.hpp"
#include "sohusim/device/frontend/function_device.hpp"
#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/device/units/c2c_link.hpp"
#include "sohusim/device/units/device_mmu.hpp"
#include "sohusim/device/units/dma_engine.hpp"
#include "sohusim/device/units/energy_model.hpp"
#include "sohusim/device/units/pmu.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"
#include "sohusim/device/units/tlm_memory_port.hpp"
#include "sohusim/device/units/trace_unit.hpp"
#include "sohusim/memory/hbm_memory.hpp"
#include "sohusim/memory/sram.hpp"
#include "sohusim/pcie/pcie_endpoint.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::device {

class SohuDevice : public sc_core::sc_module, private CommandBackend, private FunctionDevice {
 public:
  tlm_utils::simple_target_socket<SohuDevice> bar;
  tlm_utils::simple_initiator_socket<SohuDevice> host_dma;

  /// Builds the device described by `config` (device.*, hbm.*, sram.*, sim.*).
  /// `index` is the device's number in its system (chip-to-chip addressing).
  SohuDevice(sc_core::sc_module_name name, const config::Config& config, const sim::Instrumentation& inst,
             const std::string& prefix, unsigned index = 0);
  ~SohuDevice() override;

  /// The PCIe function the device presents: IDs, BAR0 (registers), BAR2 (HBM aperture),
  /// MSI-X in BAR0, link capabilities.
  static pcie::PcieFunctionSpec function_spec(const DeviceParams& params, unsigned link_generation, unsigned lanes);
  static constexpr unsigned kVfs = 7;         // SR-IOV TotalVFs
  static constexpr unsigned kVfIoQueues = 8;  // I/O queue pairs per VF (its CAP0.MQP)
  static constexpr unsigned kVfVectors = 16;  // MSI-X vectors per VF

  /// Connects the endpoint in front of the device: MSI-X delivery, FLR resets the device.
  void attach(pcie::PcieEndpoint& endpoint);
  /// Chip-to-chip port to `peer` (both directions' channels given; call on both devices).
  void connect(unsigned peer_index, SohuDevice& peer, C2cChannel& tx, C2cChannel& rx);

  const DeviceParams& params() const noexcept { return p_; }
  /// The whole configuration the device was built from (YAML): devices with equal keys
  /// behave identically and may share replay records (replay_cache.hpp).
  const std::string& config_key() const noexcept { return config_key_; }
  unsigned index() const noexcept { return index_; }
  const std::string& prefix() const noexcept { return prefix_; }
  memory::HbmMemory& hbm() { return *hbm_; }
  memory::Sram& sram() { return *sram_; }
  RegisterFile& registers() { return pf_->registers(); }
  const ErrorLog& error_log() const { return pf_->error_log(); }
  CommandProcessor& command_processor() { return pf_->command_processor(); }
  /// VF `index`'s controller, or nullptr if that VF has never been enabled.
  FunctionController* vf(unsigned index);
  /// The device-MMU context the PF assigned VF `index` (0: none).
  std::uint16_t vf_context(unsigned index) const { return index < kVfs ? vf_context_[index] : 0; }
  CommandExecutor& executor() { return *exec_; }
  Pmu& pmu() { return *pmu_; }
  TraceUnit& trace_unit() { return *trace_unit_; }
  const TimestampCounter& timestamp() const { return clock_; }
  /// Why the device was last reset ("CTRL.RST", "function level reset", ...), or empty.
  const std::string& last_reset_reason() const noexcept { return last_reset_; }
  /// Energy so far, from the counters (joules per component, average watts).
  EnergyReport energy(double seconds) const;

 private:
  /// A VF's controller with its CommandBackend and FunctionDevice (sohu_device.cpp).
  class VfFunction;

  // The PF's CommandBackend (command_backend.hpp).
  Outcome execute_io(const Sqe& sqe, std::uint16_t qid) override;
  Outcome execute_admin(const Sqe& sqe) override;
  std::uint32_t power_state() override;
  void command_started(const Sqe& sqe, std::uint16_t qid) override;
  void command_completed(const Sqe& sqe, std::uint16_t qid, std::uint16_t status) override;
  // The PF's FunctionDevice (function_device.hpp).
  bool send_msix(unsigned vector) override;
  void request_reset(const char* why) override;
  void function_disabled() override;
  void fill_identity(RegisterFile& regs) override;

  void bar_access(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void install_hooks();
  void write_identity(RegisterFile& regs, bool vf) const;
  void reset_device(const char* why);
  void report_error(ErrorEntry e);
  void raise_vector(unsigned vector);
  bool deliver_msix(pcie::RequesterId rid, unsigned vector);
  /// Runs an I/O command for the function `who` names, on the executor.
  Outcome run_io(const Sqe& sqe, std::uint16_t qid, const Issuer& who);
  /// `vf` < 0: the PF's admin queue; else VF `vf`'s.
  Outcome admin_device(const Sqe& sqe, int vf);
  void sync_vfs(pcie::PhysicalFunction& functions);
  void record_command(const Sqe& sqe, std::uint16_t qid, bool start, std::uint16_t status);
  std::uint64_t now_ps() const;

  DeviceParams p_;
  std::string config_key_;
  unsigned index_;
  std::string prefix_;
  sim::Instrumentation inst_;
  counters::Scope scope_;
  tlm_utils::simple_initiator_socket<SohuDevice> hbm_socket_;
  tlm_utils::simple_initiator_socket<SohuDevice> sram_socket_;
  std::unique_ptr<memory::HbmMemory> hbm_;
  std::unique_ptr<memory::Sram> sram_;
  std::unique_ptr<TlmMemoryPort> host_port_, hbm_port_, sram_port_;
  TimestampCounter clock_;
  DeviceMmu mmu_;
  SemaphoreBank semaphores_;
  std::unique_ptr<DmaEngine> dma_;
  std::unique_ptr<Pmu> pmu_;
  std::unique_ptr<TraceUnit> trace_unit_;
  std::unique_ptr<CommandExecutor> exec_;
  std::unique_ptr<FunctionController> pf_;
  DeviceParams vf_params_;                        // what a VF's queues may use (queues, vectors)
  std::vector<std::unique_ptr<VfFunction>> vfs_;  // created when VF i first appears
  std::uint16_t vf_context_[kVfs] = {};           // VF_CONTEXT assignments
  std::vector<std::unique_ptr<C2cChannel>> owned_channels_;
  pcie::PcieEndpoint* endpoint_ = nullptr;
  std::string last_reset_;
  counters::Counter& bar2_reads_;
  counters::Counter& bar2_writes_;
  counters::Counter& mmu_hits_;
  counters::Counter& mmu_misses_;
};

}  // namespace sohusim::device
