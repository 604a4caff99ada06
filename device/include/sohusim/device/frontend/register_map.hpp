#pragma once
// The device's BAR0 register file: storage, access rules and side-effect hooks, built from
// the tables generated out of regmap/sohu_regmap.yaml (docs/registers.md).
//
// What it models. The decoding of software's memory reads and writes to BAR0 into register
// operations, with the rules a driver sees on the bus:
//   - 4- or 8-byte accesses, naturally aligned; 8-byte accesses only on 64-bit registers;
//     a 64-bit register is also accessible as two 32-bit halves;
//   - RO ignores writes, WO reads 0, RW1C clears the ones written, RC clears on read;
//     bits outside a register's writable mask (reserved or read-only fields) ignore writes;
//     self-clearing action bits (CTRL.RST, PMU_CTRL.RESET) are seen by the write hooks and
//     then read 0;
//   - reading the low half of a 64-bit register latches its high half: the next read of the
//     high half returns the latched value, so a 32-bit driver reads a consistent TIMESTAMP
//     or PMU counter (the usual hardware answer to torn 64-bit reads; a high-half read
//     without a preceding low-half read samples afresh);
//   - an access where no register is (reserved space, the MSI-X pages, beyond BAR0), of a
//     wrong size or misaligned reads 0 and writes nothing; it is reported in the result
//     (error enum + a message naming the offset), never thrown.
// Software accesses (read/write) follow those rules; the device model's own accesses
// (peek/poke) bypass them: no hooks, no access rules, no side effects.
//
// Side effects belong to the device, not to the decoder: on_write hooks run after a
// software write has been applied (doorbells, CTRL.EN, ERR_ACK, ...), on_read hooks supply
// the value of registers that are computed when read (TIMESTAMP, PMU counters).
//
// Not modelled here: the MSI-X table and PBA (pcie/msix.hpp serves them), timing of the
// accesses (the PCIe layer and the device pay for them), byte enables narrower than 4 bytes.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sohusim::device {

enum class Access : std::uint8_t {
  RO,    // read-only: writes ignored
  RW,    // read/write
  RW1C,  // write 1 to clear
  WO,    // write-only: reads 0
  RC,    // read clears: the read returns the value and zeroes it; writes ignored
};
const char* to_string(Access a);

/// One register or register array (the generated table's element type).
struct RegisterDesc {
  const char* name;
  std::uint32_t offset;  // of element 0, bytes from the start of BAR0
  unsigned width_bits;   // 32 or 64
  Access access;
  std::uint64_t reset;
  std::uint64_t writable_mask;  // bits a software write may change; the rest is ignored
  std::uint32_t count;          // 1 for a plain register
  std::uint32_t stride;         // bytes between elements (0 for a plain register)
  const char* description;
  std::uint64_t self_clearing_mask;  // action bits: the write hooks see them, then they read 0
};

enum class PageKind : std::uint8_t { Registers, Doorbells, MsixTable, MsixPba };

/// A BAR0 region of whole 4 KiB pages.
struct PageDesc {
  const char* name;
  std::uint32_t offset;
  std::uint32_t size;
  PageKind kind;
  const char* description;
};

/// A CQE status code.
struct StatusDesc {
  std::uint16_t code;
  const char* name;
  const char* description;
};

/// A PMU event: what PMU_EVTSEL's id counts. counter_glob is a glob over the statistics
/// registry (counters/glob.hpp), "dev" standing for the device's own prefix; the event
/// counts the sum of every match.
struct PmuEventDesc {
  std::uint16_t id;
  const char* name;
  const char* counter_glob;
  const char* description;
};

enum class CommandQueue : std::uint8_t { Admin, Io };

/// A command's submission-entry format: per dword, the bits it defines (the common DW0-3
/// fields plus its operands). A set bit outside defined_mask fails it with INVALID_FIELD.
struct CommandDesc {
  CommandQueue queue;
  std::uint8_t opcode;
  const char* name;
  std::uint32_t defined_mask[16];
};

/// A read-only view of one generated table.
template <typename T>
struct TableView {
  const T* first = nullptr;
  std::size_t count = 0;
  const T* begin() const { return first; }
  const T* end() const { return first + count; }
  std::size_t size() const { return count; }
  const T& operator[](std::size_t i) const { return first[i]; }
};

/// The generated map: registers, pages and BAR0's size.
struct RegisterMap {
  TableView<RegisterDesc> registers;
  TableView<PageDesc> pages;  // may be empty (only used to name unmapped offsets)
  std::uint32_t bar0_size = 0;
};

/// The tables generated from regmap/sohu_regmap.yaml.
const RegisterMap& sohu_register_map();
TableView<StatusDesc> status_table();
TableView<PmuEventDesc> pmu_event_table();
TableView<CommandDesc> command_table();
/// Status name ("INVALID_FIELD"), or nullptr for a code the table does not define.
const char* status_name(std::uint16_t code);
/// The command of that queue type and opcode, or nullptr.
const CommandDesc* find_command(CommandQueue queue, std::uint8_t opcode);

enum class AccessError : std::uint8_t {
  None,
  BadSize,     // not 4 or 8 bytes, or 8 bytes on a 32-bit register
  Misaligned,  // offset not a multiple of the size
  Unmapped,    // no register there (reserved space, MSI-X pages, beyond BAR0)
  ReadOnly,    // write to an RO or RC register: ignored
  WriteOnly,   // read of a WO register: reads 0
};
const char* to_string(AccessError e);

/// Outcome of a software access. value is what the read returns (0 for writes and for
/// bad accesses); message names the offset and the register or what was wrong.
struct AccessResult {
  std::uint64_t value = 0;
  AccessError error = AccessError::None;
  std::string message;
  bool ok() const { return error == AccessError::None; }
};

/// Where a BAR0 offset lands.
struct RegisterLocation {
  std::size_t desc;     // index into descriptors()
  std::uint32_t index;  // array element (0 for a plain register)
  std::uint32_t byte;   // byte offset inside the element (0 or 4)
};

class RegisterFile {
 public:
  /// (element index, value before the write, value after it). For a half write of a 64-bit
  /// register both values are the whole register.
  using WriteHook = std::function<void(std::uint32_t index, std::uint64_t old_value, std::uint64_t new_value)>;
  /// (element index, stored value) -> the value software reads. The stored value is left as
  /// it is (the hook may poke() if the device wants it kept).
  using ReadHook = std::function<std::uint64_t(std::uint32_t index, std::uint64_t current)>;

  /// The generated Sohu map.
  RegisterFile();
  /// Any map (tests, variants). Throws std::invalid_argument on a width other than 32/64,
  /// a misaligned offset, a count of 0, a stride smaller than the register, masks or reset
  /// wider than the register, or two registers sharing a byte — naming the register.
  explicit RegisterFile(const RegisterMap& map);

  std::size_t size() const { return descs_.size(); }
  const RegisterDesc& descriptor(std::size_t i) const { return descs_.at(i); }
  const std::vector<RegisterDesc>& descriptors() const { return descs_; }
  std::uint32_t bar0_size() const { return bar0_size_; }

  /// The descriptor covering this byte offset (array elements resolve to the array's
  /// descriptor; locate() also gives the element), or nullopt.
  std::optional<std::size_t> find(std::uint32_t offset) const;
  /// The descriptor of that name, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;
  std::optional<RegisterLocation> locate(std::uint32_t offset) const;
  /// Offset of element `index` of the named register; std::invalid_argument if no such
  /// register or index >= count.
  std::uint32_t offset_of(std::string_view name, std::uint32_t index = 0) const;

  /// Device-side access to a whole register element, by the offset of its first byte
  /// (e.g. SOHU_PMU_COUNTER(3)): no rules, no hooks. std::invalid_argument when the offset
  /// is not the start of a register element, or (poke) the value is wider than the register.
  std::uint64_t peek(std::uint32_t offset) const;
  void poke(std::uint32_t offset, std::uint64_t value);

  /// Software access with the rules above; never throws for any offset/size.
  AccessResult read(std::uint32_t offset, unsigned size_bytes);
  AccessResult write(std::uint32_t offset, unsigned size_bytes, std::uint64_t value);

  /// Attach side effects to the register (or array) whose element 0 or any element starts at
  /// `offset`; std::invalid_argument otherwise. Write hooks accumulate and run in the order
  /// attached, after every accepted software write (not for writes refused as RO/RC, bad
  /// size, misaligned or unmapped); a register has at most one read hook (a new one
  /// replaces the old), consulted by software reads only (peek() returns the stored value).
  void on_write(std::uint32_t offset, WriteHook hook);
  void on_read(std::uint32_t offset, ReadHook hook);

  /// Every element back to its reset value; pending high-half latches dropped. Hooks stay.
  void reset();

 private:
  struct Slot {  // one 4-byte word of BAR0 that belongs to a register
    std::uint32_t desc;
    std::uint32_t index;
    std::uint32_t byte;
  };
  std::size_t element(std::size_t desc, std::uint32_t index) const { return first_[desc] + index; }
  const Slot* slot(std::uint32_t offset) const;
  std::size_t element_at(std::uint32_t offset, const char* what) const;
  std::string describe(std::uint32_t offset) const;
  std::string label(const Slot& s) const;
  std::uint64_t sample(const Slot& s);  // read value after hook and RC

  std::vector<RegisterDesc> descs_;
  std::vector<PageDesc> pages_;
  std::uint32_t bar0_size_ = 0;
  std::vector<std::size_t> first_;                   // per descriptor: its first element's index
  std::vector<std::uint64_t> values_;                // per element
  std::vector<std::uint8_t> latched_;                // per element: a high half is latched
  std::vector<std::uint32_t> latch_;                 // per element: the latched high half
  std::unordered_map<std::uint32_t, Slot> words_;    // by offset / 4
  std::vector<std::vector<WriteHook>> write_hooks_;  // per descriptor
  std::vector<ReadHook> read_hooks_;                 // per descriptor
};

}  // namespace sohusim::device
