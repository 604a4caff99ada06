/*
 * GENERATED FILE - DO NOT EDIT.
 * Generated from regmap/sohu_regmap.yaml by scripts/gen_regmap.py.
 * Edit the YAML, then run python3 scripts/gen_regmap.py (the tests run it with --check).
 */
/*
 * Sohu-class device: BAR0 register offsets and fields, the submission and completion entry layouts,
 * opcodes, status codes, feature ids and encodings (docs/registers.md). C99 and C++; only
 * <stdint.h>. Offsets are bytes from the start of BAR0. For each field _SHIFT is its lowest bit and
 * _MASK the mask already shifted into place; value macros (e.g. SOHU_CTRL_SHN_NORMAL) are unshifted
 * field values. Command fields: _DW is the dword index in the entry; a _MASK wider than 32 bits is
 * a 64-bit little-endian value starting at dword _DW.
 */
#ifndef SOHUSIM_MODELS_SOHU_REGS_H
#define SOHUSIM_MODELS_SOHU_REGS_H

#include <stdint.h>

/* ==== BAR0 layout: 512 KiB, 4 KiB pages ==== */
#define SOHU_BAR0_SIZE 0x00080000u
#define SOHU_BAR0_PAGE_SIZE 0x00001000u
/* IDENT: registers, 1 page */
#define SOHU_PAGE_IDENT 0x00000000u
#define SOHU_PAGE_IDENT_SIZE 0x00001000u
/* CONTROL: registers, 1 page */
#define SOHU_PAGE_CONTROL 0x00001000u
#define SOHU_PAGE_CONTROL_SIZE 0x00001000u
/* ADMIN: registers, 1 page */
#define SOHU_PAGE_ADMIN 0x00002000u
#define SOHU_PAGE_ADMIN_SIZE 0x00001000u
/* INTERRUPTS: registers, 1 page */
#define SOHU_PAGE_INTERRUPTS 0x00003000u
#define SOHU_PAGE_INTERRUPTS_SIZE 0x00001000u
/* PMU: registers, 1 page */
#define SOHU_PAGE_PMU 0x00004000u
#define SOHU_PAGE_PMU_SIZE 0x00001000u
/* TRACE: registers, 1 page */
#define SOHU_PAGE_TRACE 0x00005000u
#define SOHU_PAGE_TRACE_SIZE 0x00001000u
/* TIME: registers, 1 page */
#define SOHU_PAGE_TIME 0x00006000u
#define SOHU_PAGE_TIME_SIZE 0x00001000u
/* ERRLOG: registers, 1 page */
#define SOHU_PAGE_ERRLOG 0x00007000u
#define SOHU_PAGE_ERRLOG_SIZE 0x00001000u
/* MSIX_TABLE: msix_table, 2 pages */
#define SOHU_PAGE_MSIX_TABLE 0x00008000u
#define SOHU_PAGE_MSIX_TABLE_SIZE 0x00002000u
/* MSIX_PBA: msix_pba, 1 page */
#define SOHU_PAGE_MSIX_PBA 0x0000A000u
#define SOHU_PAGE_MSIX_PBA_SIZE 0x00001000u
/* DOORBELL: doorbells, 64 pages */
#define SOHU_PAGE_DOORBELL 0x00010000u
#define SOHU_PAGE_DOORBELL_SIZE 0x00040000u

/* ==== page IDENT (0x00000) ==== */
/*
 * Identification and capabilities. Read-only; CAP1, HBM_SIZE, SRAM_SIZE, CLOCK_MHZ and FW_STATUS
 * are filled in by the device from its configuration.
 */

/* ID (32-bit RO): Vendor and device identifiers. */
#define SOHU_ID 0x00000000u
#define SOHU_ID_RESET 0x50011E5Cu
/* [15:0] VENDOR: Vendor identifier. */
#define SOHU_ID_VENDOR_SHIFT 0
#define SOHU_ID_VENDOR_MASK 0x0000FFFFu
/* [31:16] DEVICE: Device identifier. */
#define SOHU_ID_DEVICE_SHIFT 16
#define SOHU_ID_DEVICE_MASK 0xFFFF0000u

/* VERSION (32-bit RO): Version of this register interface (major.minor.patch). */
#define SOHU_VERSION 0x00000004u
#define SOHU_VERSION_RESET 0x00010000u
/* [7:0] PATCH: Patch level. */
#define SOHU_VERSION_PATCH_SHIFT 0
#define SOHU_VERSION_PATCH_MASK 0x000000FFu
/* [15:8] MINOR: Minor version (compatible additions). */
#define SOHU_VERSION_MINOR_SHIFT 8
#define SOHU_VERSION_MINOR_MASK 0x0000FF00u
/* [31:16] MAJOR: Major version (incompatible changes). */
#define SOHU_VERSION_MAJOR_SHIFT 16
#define SOHU_VERSION_MAJOR_MASK 0xFFFF0000u

/* CAP0 (32-bit RO): Queue capabilities. */
#define SOHU_CAP0 0x00000008u
#define SOHU_CAP0_RESET 0x0C0FFF3Fu
/* [7:0] MQP: Maximum number of I/O queue pairs (queue sets 1..MQP). */
#define SOHU_CAP0_MQP_SHIFT 0
#define SOHU_CAP0_MQP_MASK 0x000000FFu
/* [23:8] MQES: Maximum entries per queue minus one. */
#define SOHU_CAP0_MQES_SHIFT 8
#define SOHU_CAP0_MQES_MASK 0x00FFFF00u
/* [27:24] DSTRD: Doorbell page stride as log2(bytes); 12 = 4 KiB. */
#define SOHU_CAP0_DSTRD_SHIFT 24
#define SOHU_CAP0_DSTRD_MASK 0x0F000000u

/* CAP1 (32-bit RO): Engine counts, filled in by the device from its configuration. */
#define SOHU_CAP1 0x0000000Cu
#define SOHU_CAP1_RESET 0x00000000u
/* [7:0] ME: Matrix engines. */
#define SOHU_CAP1_ME_SHIFT 0
#define SOHU_CAP1_ME_MASK 0x000000FFu
/* [15:8] VE: Vector engines. */
#define SOHU_CAP1_VE_SHIFT 8
#define SOHU_CAP1_VE_MASK 0x0000FF00u
/* [23:16] DMA: DMA channels. */
#define SOHU_CAP1_DMA_SHIFT 16
#define SOHU_CAP1_DMA_MASK 0x00FF0000u
/* [31:24] C2C: Chip-to-chip ports. */
#define SOHU_CAP1_C2C_SHIFT 24
#define SOHU_CAP1_C2C_MASK 0xFF000000u

/* HBM_SIZE (64-bit RO): HBM capacity in bytes (also the size of BAR2). */
#define SOHU_HBM_SIZE 0x00000010u
#define SOHU_HBM_SIZE_RESET 0x0000000000000000ull

/* SRAM_SIZE (64-bit RO): On-chip SRAM scratchpad capacity in bytes. */
#define SOHU_SRAM_SIZE 0x00000018u
#define SOHU_SRAM_SIZE_RESET 0x0000000000000000ull

/* CLOCK_MHZ (32-bit RO): Core clock frequency in MHz. */
#define SOHU_CLOCK_MHZ 0x00000020u
#define SOHU_CLOCK_MHZ_RESET 0x00000000u

/* FW_STATUS (32-bit RO): Firmware state and build. */
#define SOHU_FW_STATUS 0x00000024u
#define SOHU_FW_STATUS_RESET 0x00000000u
/* [3:0] STATE: Firmware state. */
#define SOHU_FW_STATUS_STATE_SHIFT 0
#define SOHU_FW_STATUS_STATE_MASK 0x0000000Fu
#define SOHU_FW_STATUS_STATE_BOOT 0u
#define SOHU_FW_STATUS_STATE_RUNNING 1u
#define SOHU_FW_STATUS_STATE_HALTED_FATAL 2u
/* [31:16] BUILD: Firmware build number. */
#define SOHU_FW_STATUS_BUILD_SHIFT 16
#define SOHU_FW_STATUS_BUILD_MASK 0xFFFF0000u

/* ==== page CONTROL (0x01000) ==== */
/* Controller enable, reset, shutdown, power state and the global interrupt mask and status. */

/* CTRL (32-bit RW): Controller configuration. */
#define SOHU_CTRL 0x00001000u
#define SOHU_CTRL_RESET 0x00000000u
/* [0] EN: Enable: 1 starts the controller (admin queue from AQA/ASQ/ACQ); 0 stops it. */
#define SOHU_CTRL_EN_SHIFT 0
#define SOHU_CTRL_EN_MASK 0x00000001u
/* [1] RST (WO): Write 1: soft reset of the controller; self-clearing, reads 0. */
#define SOHU_CTRL_RST_SHIFT 1
#define SOHU_CTRL_RST_MASK 0x00000002u
/* [3:2] SHN: Shutdown notification. */
#define SOHU_CTRL_SHN_SHIFT 2
#define SOHU_CTRL_SHN_MASK 0x0000000Cu
#define SOHU_CTRL_SHN_NONE 0u
#define SOHU_CTRL_SHN_NORMAL 1u
#define SOHU_CTRL_SHN_ABRUPT 2u

/* STATUS (32-bit RO): Controller status. */
#define SOHU_STATUS 0x00001004u
#define SOHU_STATUS_RESET 0x00000000u
/* [0] RDY: Ready: the controller processes commands (follows CTRL.EN). */
#define SOHU_STATUS_RDY_SHIFT 0
#define SOHU_STATUS_RDY_MASK 0x00000001u
/* [1] CFS: Controller fatal status; only a reset clears it. */
#define SOHU_STATUS_CFS_SHIFT 1
#define SOHU_STATUS_CFS_MASK 0x00000002u
/* [3:2] SHST: Shutdown status. */
#define SOHU_STATUS_SHST_SHIFT 2
#define SOHU_STATUS_SHST_MASK 0x0000000Cu
#define SOHU_STATUS_SHST_NORMAL 0u
#define SOHU_STATUS_SHST_OCCURRING 1u
#define SOHU_STATUS_SHST_COMPLETE 2u
/* [4] PAUSED: Paused by a reset in progress. */
#define SOHU_STATUS_PAUSED_SHIFT 4
#define SOHU_STATUS_PAUSED_MASK 0x00000010u

/* POWER_STATE (32-bit RW): Requested and current power state. */
#define SOHU_POWER_STATE 0x00001008u
#define SOHU_POWER_STATE_RESET 0x00000000u
/* [1:0] PS: Requested power state, P0 full performance .. P3 lowest power. */
#define SOHU_POWER_STATE_PS_SHIFT 0
#define SOHU_POWER_STATE_PS_MASK 0x00000003u
#define SOHU_POWER_STATE_PS_P0 0u
#define SOHU_POWER_STATE_PS_P1 1u
#define SOHU_POWER_STATE_PS_P2 2u
#define SOHU_POWER_STATE_PS_P3 3u
/* [17:16] CUR (RO): Current power state (same encoding as PS). */
#define SOHU_POWER_STATE_CUR_SHIFT 16
#define SOHU_POWER_STATE_CUR_MASK 0x00030000u

/* INT_MASK (32-bit RW): Interrupt mask, bit v masks MSI-X vector v (vectors 0..31). */
#define SOHU_INT_MASK 0x0000100Cu
#define SOHU_INT_MASK_RESET 0x00000000u

/* INT_STATUS (32-bit RW1C): Pending device-level interrupt causes; write 1 to clear. */
#define SOHU_INT_STATUS 0x00001010u
#define SOHU_INT_STATUS_RESET 0x00000000u
/* [0] ERR: Error-log interrupt pending. */
#define SOHU_INT_STATUS_ERR_SHIFT 0
#define SOHU_INT_STATUS_ERR_MASK 0x00000001u
/* [1] PMU_OVF: PMU counter overflow interrupt pending. */
#define SOHU_INT_STATUS_PMU_OVF_SHIFT 1
#define SOHU_INT_STATUS_PMU_OVF_MASK 0x00000002u
/* [2] TRC_FULL: Trace ring full interrupt pending. */
#define SOHU_INT_STATUS_TRC_FULL_SHIFT 2
#define SOHU_INT_STATUS_TRC_FULL_MASK 0x00000004u

/* ==== page ADMIN (0x02000) ==== */
/* Admin queue pair, read by the controller when CTRL.EN goes to 1. */

/* AQA (32-bit RW): Admin queue sizes. */
#define SOHU_AQA 0x00002000u
#define SOHU_AQA_RESET 0x00000000u
/* [11:0] ASQS: Admin submission queue entries minus one. */
#define SOHU_AQA_ASQS_SHIFT 0
#define SOHU_AQA_ASQS_MASK 0x00000FFFu
/* [27:16] ACQS: Admin completion queue entries minus one. */
#define SOHU_AQA_ACQS_SHIFT 16
#define SOHU_AQA_ACQS_MASK 0x0FFF0000u

/* ASQ (64-bit RW): Admin submission queue base (host IOVA, 4 KiB aligned). */
#define SOHU_ASQ 0x00002008u
#define SOHU_ASQ_RESET 0x0000000000000000ull
/* [63:12] ADDR: Base address bits 63:12. */
#define SOHU_ASQ_ADDR_SHIFT 12
#define SOHU_ASQ_ADDR_MASK 0xFFFFFFFFFFFFF000ull

/* ACQ (64-bit RW): Admin completion queue base (host IOVA, 4 KiB aligned). */
#define SOHU_ACQ 0x00002010u
#define SOHU_ACQ_RESET 0x0000000000000000ull
/* [63:12] ADDR: Base address bits 63:12. */
#define SOHU_ACQ_ADDR_SHIFT 12
#define SOHU_ACQ_ADDR_MASK 0xFFFFFFFFFFFFF000ull

/* ==== page INTERRUPTS (0x03000) ==== */
/*
 * Interrupt coalescing defaults (for CQs created afterwards) and the vector of device-level
 * interrupts.
 */

/* COAL_COUNT (32-bit RW): Completions per interrupt; 0 or 1 = an interrupt per completion. */
#define SOHU_COAL_COUNT 0x00003000u
#define SOHU_COAL_COUNT_RESET 0x00000000u
/* [15:0] COUNT: Completion count threshold. */
#define SOHU_COAL_COUNT_COUNT_SHIFT 0
#define SOHU_COAL_COUNT_COUNT_MASK 0x0000FFFFu

/* COAL_TIME_NS (32-bit RW): Maximum delay of a coalesced interrupt in ns; 0 = no delay. */
#define SOHU_COAL_TIME_NS 0x00003004u
#define SOHU_COAL_TIME_NS_RESET 0x00000000u

/* ERR_VECTOR (32-bit RW): MSI-X vector of the error, PMU-overflow and trace interrupts. */
#define SOHU_ERR_VECTOR 0x00003008u
#define SOHU_ERR_VECTOR_RESET 0x00000000u
/* [10:0] VECTOR: MSI-X vector number. */
#define SOHU_ERR_VECTOR_VECTOR_SHIFT 0
#define SOHU_ERR_VECTOR_VECTOR_MASK 0x000007FFu

/* ==== page PMU (0x04000) ==== */
/* Performance monitoring unit, a cycle counter and 8 event counters. */

/* PMU_CTRL (32-bit RW): PMU control. */
#define SOHU_PMU_CTRL 0x00004000u
#define SOHU_PMU_CTRL_RESET 0x00000000u
/* [0] EN: Counting enabled. */
#define SOHU_PMU_CTRL_EN_SHIFT 0
#define SOHU_PMU_CTRL_EN_MASK 0x00000001u
/* [1] FREEZE: Counters hold their values. */
#define SOHU_PMU_CTRL_FREEZE_SHIFT 1
#define SOHU_PMU_CTRL_FREEZE_MASK 0x00000002u
/* [2] RESET (WO): Write 1: zero every counter; self-clearing, reads 0. */
#define SOHU_PMU_CTRL_RESET_SHIFT 2
#define SOHU_PMU_CTRL_RESET_MASK 0x00000004u
/* [3] OVF_IRQ_EN: Raise INT_STATUS.PMU_OVF and an interrupt on overflow. */
#define SOHU_PMU_CTRL_OVF_IRQ_EN_SHIFT 3
#define SOHU_PMU_CTRL_OVF_IRQ_EN_MASK 0x00000008u

/* PMU_OVF (32-bit RW1C): Counter overflow flags; write 1 to clear. */
#define SOHU_PMU_OVF 0x00004004u
#define SOHU_PMU_OVF_RESET 0x00000000u
/* [7:0] CTR: Bit i = event counter i overflowed. */
#define SOHU_PMU_OVF_CTR_SHIFT 0
#define SOHU_PMU_OVF_CTR_MASK 0x000000FFu
/* [31] CYCLES: The cycle counter overflowed. */
#define SOHU_PMU_OVF_CYCLES_SHIFT 31
#define SOHU_PMU_OVF_CYCLES_MASK 0x80000000u

/* PMU_CYCLES (64-bit RO): Cycles counted while enabled and not frozen. */
#define SOHU_PMU_CYCLES 0x00004008u
#define SOHU_PMU_CYCLES_RESET 0x0000000000000000ull

/*
 * PMU_EVTSEL (32-bit RW, array of 8, stride 0x4): Event selector of counter i (event ids in the PMU
 * events table).
 */
#define SOHU_PMU_EVTSEL(i) (0x00004100u + (uint32_t)(i) * 0x00000004u)
#define SOHU_PMU_EVTSEL_COUNT 8u
#define SOHU_PMU_EVTSEL_STRIDE 0x00000004u
#define SOHU_PMU_EVTSEL_RESET 0x00000000u
/* [15:0] EVENT: Event id; 0 = none. */
#define SOHU_PMU_EVTSEL_EVENT_SHIFT 0
#define SOHU_PMU_EVTSEL_EVENT_MASK 0x0000FFFFu

/* PMU_COUNTER (64-bit RO, array of 8, stride 0x8): Event counter i. */
#define SOHU_PMU_COUNTER(i) (0x00004200u + (uint32_t)(i) * 0x00000008u)
#define SOHU_PMU_COUNTER_COUNT 8u
#define SOHU_PMU_COUNTER_STRIDE 0x00000008u
#define SOHU_PMU_COUNTER_RESET 0x0000000000000000ull

/* ==== page TRACE (0x05000) ==== */
/* Trace unit, writing records into a host ring buffer. */

/* TRC_CTRL (32-bit RW): Trace unit control. */
#define SOHU_TRC_CTRL 0x00005000u
#define SOHU_TRC_CTRL_RESET 0x00000002u
/* [0] EN: Tracing enabled. */
#define SOHU_TRC_CTRL_EN_SHIFT 0
#define SOHU_TRC_CTRL_EN_MASK 0x00000001u
/*
 * [1] DROP_ON_FULL (RO): 1: drop records when the ring is full (counted in TRC_DROPS). Stalling (0)
 * is not supported, so the bit reads 1.
 */
#define SOHU_TRC_CTRL_DROP_ON_FULL_SHIFT 1
#define SOHU_TRC_CTRL_DROP_ON_FULL_MASK 0x00000002u

/* TRC_MASK (32-bit RW): Record classes to trace. */
#define SOHU_TRC_MASK 0x00005004u
#define SOHU_TRC_MASK_RESET 0x00000000u
/* [0] CMD: Command start and end. */
#define SOHU_TRC_MASK_CMD_SHIFT 0
#define SOHU_TRC_MASK_CMD_MASK 0x00000001u
/* [1] TILES: Engine tiles. */
#define SOHU_TRC_MASK_TILES_SHIFT 1
#define SOHU_TRC_MASK_TILES_MASK 0x00000002u
/* [2] DMA: DMA transfers. */
#define SOHU_TRC_MASK_DMA_SHIFT 2
#define SOHU_TRC_MASK_DMA_MASK 0x00000004u
/* [3] IRQ: Interrupts. */
#define SOHU_TRC_MASK_IRQ_SHIFT 3
#define SOHU_TRC_MASK_IRQ_MASK 0x00000008u

/* TRC_BASE (64-bit RW): Ring base (host IOVA, 64-byte aligned). */
#define SOHU_TRC_BASE 0x00005008u
#define SOHU_TRC_BASE_RESET 0x0000000000000000ull
/* [63:6] ADDR: Base address bits 63:6. */
#define SOHU_TRC_BASE_ADDR_SHIFT 6
#define SOHU_TRC_BASE_ADDR_MASK 0xFFFFFFFFFFFFFFC0ull

/* TRC_SIZE (32-bit RW): Ring size in bytes, a power of two >= 4096 (0 = no ring). */
#define SOHU_TRC_SIZE 0x00005010u
#define SOHU_TRC_SIZE_RESET 0x00000000u

/* TRC_HEAD (32-bit RO): Device write offset in the ring. */
#define SOHU_TRC_HEAD 0x00005014u
#define SOHU_TRC_HEAD_RESET 0x00000000u

/* TRC_TAIL (32-bit RW): Host read offset in the ring. */
#define SOHU_TRC_TAIL 0x00005018u
#define SOHU_TRC_TAIL_RESET 0x00000000u

/* TRC_DROPS (32-bit RC): Records dropped since the last read (cleared by the read). */
#define SOHU_TRC_DROPS 0x0000501Cu
#define SOHU_TRC_DROPS_RESET 0x00000000u

/* ==== page TIME (0x06000) ==== */
/* Device time. */

/* TIMESTAMP (64-bit RO): Device time in ns (read the low half first; it latches the high half). */
#define SOHU_TIMESTAMP 0x00006000u
#define SOHU_TIMESTAMP_RESET 0x0000000000000000ull

/* TIMESTAMP_FREQ_HZ (32-bit RO): TIMESTAMP tick frequency in Hz. */
#define SOHU_TIMESTAMP_FREQ_HZ 0x00006008u
#define SOHU_TIMESTAMP_FREQ_HZ_RESET 0x3B9ACA00u

/* ==== page ERRLOG (0x07000) ==== */
/* Error log, a FIFO of failed-command records. */

/* ERR_COUNT (32-bit RO): Entries logged since reset. */
#define SOHU_ERR_COUNT 0x00007000u
#define SOHU_ERR_COUNT_RESET 0x00000000u

/* ERR_CODE (32-bit RO): Status code of the oldest unacknowledged entry; 0 = none. */
#define SOHU_ERR_CODE 0x00007004u
#define SOHU_ERR_CODE_RESET 0x00000000u

/* ERR_ADDR (64-bit RO): Faulting address of the oldest unacknowledged entry. */
#define SOHU_ERR_ADDR 0x00007008u
#define SOHU_ERR_ADDR_RESET 0x0000000000000000ull

/* ERR_INFO (32-bit RO): Queue and command of the oldest unacknowledged entry. */
#define SOHU_ERR_INFO 0x00007010u
#define SOHU_ERR_INFO_RESET 0x00000000u
/* [15:0] QID: Submission queue id. */
#define SOHU_ERR_INFO_QID_SHIFT 0
#define SOHU_ERR_INFO_QID_MASK 0x0000FFFFu
/* [31:16] CID: Command id. */
#define SOHU_ERR_INFO_CID_SHIFT 16
#define SOHU_ERR_INFO_CID_MASK 0xFFFF0000u

/* ERR_ACK (32-bit WO): Acknowledge the oldest entry. */
#define SOHU_ERR_ACK 0x00007014u
#define SOHU_ERR_ACK_RESET 0x00000000u
/* [0] ACK: Write 1: pop the oldest entry. */
#define SOHU_ERR_ACK_ACK_SHIFT 0
#define SOHU_ERR_ACK_ACK_MASK 0x00000001u

/* ==== page DOORBELL (0x10000) ==== */
/*
 * One page per queue set q (0 = admin, 1..63 I/O) at 0x10000 + q x 0x1000, so each queue's
 * doorbells can be mapped on their own.
 */

/* SQ_TAIL_DB (32-bit WO, array of 64, stride 0x1000): Submission queue q tail doorbell. */
#define SOHU_SQ_TAIL_DB(i) (0x00010000u + (uint32_t)(i) * 0x00001000u)
#define SOHU_SQ_TAIL_DB_COUNT 64u
#define SOHU_SQ_TAIL_DB_STRIDE 0x00001000u
#define SOHU_SQ_TAIL_DB_RESET 0x00000000u
/* [15:0] TAIL: New tail (index of the next free entry). */
#define SOHU_SQ_TAIL_DB_TAIL_SHIFT 0
#define SOHU_SQ_TAIL_DB_TAIL_MASK 0x0000FFFFu

/* CQ_HEAD_DB (32-bit WO, array of 64, stride 0x1000): Completion queue q head doorbell. */
#define SOHU_CQ_HEAD_DB(i) (0x00010004u + (uint32_t)(i) * 0x00001000u)
#define SOHU_CQ_HEAD_DB_COUNT 64u
#define SOHU_CQ_HEAD_DB_STRIDE 0x00001000u
#define SOHU_CQ_HEAD_DB_RESET 0x00000000u
/* [15:0] HEAD: New head (entries before it are consumed). */
#define SOHU_CQ_HEAD_DB_HEAD_SHIFT 0
#define SOHU_CQ_HEAD_DB_HEAD_MASK 0x0000FFFFu

/* ==== submission entry ==== */
#define SOHU_SQE_SIZE 64u
/* DW0[7:0] OPCODE: Opcode (admin or I/O table, by queue). */
#define SOHU_SQE_OPCODE_DW 0
#define SOHU_SQE_OPCODE_SHIFT 0
#define SOHU_SQE_OPCODE_MASK 0x000000FFu
/* DW0[15:8] FLAGS: Command flags (FENCE_BEFORE, NO_COMPLETION_IRQ; others reserved). */
#define SOHU_SQE_FLAGS_DW 0
#define SOHU_SQE_FLAGS_SHIFT 8
#define SOHU_SQE_FLAGS_MASK 0x0000FF00u
/* DW0[8] FENCE_BEFORE: Start only after every earlier command of this queue completed. */
#define SOHU_SQE_FENCE_BEFORE_DW 0
#define SOHU_SQE_FENCE_BEFORE_SHIFT 8
#define SOHU_SQE_FENCE_BEFORE_MASK 0x00000100u
/* DW0[9] NO_COMPLETION_IRQ: Post the completion entry without an interrupt. */
#define SOHU_SQE_NO_COMPLETION_IRQ_DW 0
#define SOHU_SQE_NO_COMPLETION_IRQ_SHIFT 9
#define SOHU_SQE_NO_COMPLETION_IRQ_MASK 0x00000200u
/* DW0[31:16] CID: Command id, echoed in the completion. */
#define SOHU_SQE_CID_DW 0
#define SOHU_SQE_CID_SHIFT 16
#define SOHU_SQE_CID_MASK 0xFFFF0000u
/* DW1[15:0] CONTEXT: Device-MMU context; 0 = physical addressing. */
#define SOHU_SQE_CONTEXT_DW 1
#define SOHU_SQE_CONTEXT_SHIFT 0
#define SOHU_SQE_CONTEXT_MASK 0x0000FFFFu
/* DW2-3 CORRELATION: Opaque to the device; copied into its trace records. */
#define SOHU_SQE_CORRELATION_DW 2
#define SOHU_SQE_CORRELATION_SHIFT 0
#define SOHU_SQE_CORRELATION_MASK 0xFFFFFFFFFFFFFFFFull

/* ==== completion entry ==== */
#define SOHU_CQE_SIZE 16u
/* DW0-1 RESULT: Command-specific result. */
#define SOHU_CQE_RESULT_DW 0
#define SOHU_CQE_RESULT_SHIFT 0
#define SOHU_CQE_RESULT_MASK 0xFFFFFFFFFFFFFFFFull
/* DW2[15:0] SQ_HEAD: Submission queue head after this command was fetched. */
#define SOHU_CQE_SQ_HEAD_DW 2
#define SOHU_CQE_SQ_HEAD_SHIFT 0
#define SOHU_CQE_SQ_HEAD_MASK 0x0000FFFFu
/* DW2[31:16] SQ_ID: Submission queue the command came from. */
#define SOHU_CQE_SQ_ID_DW 2
#define SOHU_CQE_SQ_ID_SHIFT 16
#define SOHU_CQE_SQ_ID_MASK 0xFFFF0000u
/* DW3[15:0] CID: Command id from the SQE. */
#define SOHU_CQE_CID_DW 3
#define SOHU_CQE_CID_SHIFT 0
#define SOHU_CQE_CID_MASK 0x0000FFFFu
/* DW3[16] PHASE: Phase tag. */
#define SOHU_CQE_PHASE_DW 3
#define SOHU_CQE_PHASE_SHIFT 16
#define SOHU_CQE_PHASE_MASK 0x00010000u
/* DW3[31:17] STATUS: Status code (statuses table); 0 = success. */
#define SOHU_CQE_STATUS_DW 3
#define SOHU_CQE_STATUS_SHIFT 17
#define SOHU_CQE_STATUS_MASK 0xFFFE0000u

/* ==== admin opcodes ==== */
/* IDENTIFY: Write the device identity structure (4 KiB) to host memory. */
#define SOHU_ADMIN_OP_IDENTIFY 0x01u
/* CREATE_CQ: Create an I/O completion queue. */
#define SOHU_ADMIN_OP_CREATE_CQ 0x02u
/* CREATE_SQ: Create an I/O submission queue bound to an existing CQ. */
#define SOHU_ADMIN_OP_CREATE_SQ 0x03u
/*
 * DELETE_SQ: Delete an I/O submission queue; its outstanding commands complete with ABORTED_RESET.
 */
#define SOHU_ADMIN_OP_DELETE_SQ 0x04u
/* DELETE_CQ: Delete an I/O completion queue (QUEUE_IN_USE while an SQ still uses it). */
#define SOHU_ADMIN_OP_DELETE_CQ 0x05u
/* SET_FEATURES: Set a feature (features table). */
#define SOHU_ADMIN_OP_SET_FEATURES 0x06u
/* GET_FEATURES: Read a feature. */
#define SOHU_ADMIN_OP_GET_FEATURES 0x07u
/* PMU_CONFIG: Program an event counter and the PMU enable (the same state as the PMU registers). */
#define SOHU_ADMIN_OP_PMU_CONFIG 0x08u
/* TRACE_CONFIG: Configure the trace ring (the same state as the TRACE registers). */
#define SOHU_ADMIN_OP_TRACE_CONFIG 0x09u
/* FW_STATUS: Firmware status. */
#define SOHU_ADMIN_OP_FW_STATUS 0x0Au
/*
 * SET_CONTEXT: Install or invalidate a device-MMU context. The device DMA-reads the table (ENTRIES
 * 8-byte page-table entries in host memory) once into its on-chip table memory; entry i maps
 * virtual page i (device.mmu.page_size, 2 MiB by default): bit 0 valid, bit 1 writable, bits 63:21
 * the physical page address. Installing flushes the context's TLB entries.
 */
#define SOHU_ADMIN_OP_SET_CONTEXT 0x0Bu
/*
 * VF_CONTEXT: PF only. Assign an SR-IOV virtual function its device-MMU context: every command of
 * that VF then runs in this context, whatever context its entry names, so the VF reaches only the
 * device memory the context maps. A VF with no context (0, the reset state) fails every device-
 * memory operand with MMU_FAULT. The context is installed with SET_CONTEXT by the PF, before or
 * after; it stays assigned across the VF's resets and is cleared when the PF resets.
 */
#define SOHU_ADMIN_OP_VF_CONTEXT 0x0Cu

/* ==== admin IDENTIFY operands ==== */
/* DW4-5 ADDR: Host IOVA of a 4 KiB buffer. */
#define SOHU_ADMIN_IDENTIFY_ADDR_DW 4
#define SOHU_ADMIN_IDENTIFY_ADDR_SHIFT 0
#define SOHU_ADMIN_IDENTIFY_ADDR_MASK 0xFFFFFFFFFFFFFFFFull

/* ==== admin CREATE_CQ operands ==== */
/* DW4-5 BASE: Queue base, host IOVA, 4 KiB aligned. */
#define SOHU_ADMIN_CREATE_CQ_BASE_DW 4
#define SOHU_ADMIN_CREATE_CQ_BASE_SHIFT 0
#define SOHU_ADMIN_CREATE_CQ_BASE_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6[15:0] QID: Queue id (1..CAP0.MQP). */
#define SOHU_ADMIN_CREATE_CQ_QID_DW 6
#define SOHU_ADMIN_CREATE_CQ_QID_SHIFT 0
#define SOHU_ADMIN_CREATE_CQ_QID_MASK 0x0000FFFFu
/* DW6[31:16] QSIZE: Entries minus one (<= CAP0.MQES). */
#define SOHU_ADMIN_CREATE_CQ_QSIZE_DW 6
#define SOHU_ADMIN_CREATE_CQ_QSIZE_SHIFT 16
#define SOHU_ADMIN_CREATE_CQ_QSIZE_MASK 0xFFFF0000u
/* DW7[15:0] VECTOR: MSI-X vector. */
#define SOHU_ADMIN_CREATE_CQ_VECTOR_DW 7
#define SOHU_ADMIN_CREATE_CQ_VECTOR_SHIFT 0
#define SOHU_ADMIN_CREATE_CQ_VECTOR_MASK 0x0000FFFFu
/* DW7[16] IEN: Interrupts enabled. */
#define SOHU_ADMIN_CREATE_CQ_IEN_DW 7
#define SOHU_ADMIN_CREATE_CQ_IEN_SHIFT 16
#define SOHU_ADMIN_CREATE_CQ_IEN_MASK 0x00010000u

/* ==== admin CREATE_SQ operands ==== */
/* DW4-5 BASE: Queue base, host IOVA, 4 KiB aligned. */
#define SOHU_ADMIN_CREATE_SQ_BASE_DW 4
#define SOHU_ADMIN_CREATE_SQ_BASE_SHIFT 0
#define SOHU_ADMIN_CREATE_SQ_BASE_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6[15:0] QID: Queue id (1..CAP0.MQP). */
#define SOHU_ADMIN_CREATE_SQ_QID_DW 6
#define SOHU_ADMIN_CREATE_SQ_QID_SHIFT 0
#define SOHU_ADMIN_CREATE_SQ_QID_MASK 0x0000FFFFu
/* DW6[31:16] QSIZE: Entries minus one (<= CAP0.MQES). */
#define SOHU_ADMIN_CREATE_SQ_QSIZE_DW 6
#define SOHU_ADMIN_CREATE_SQ_QSIZE_SHIFT 16
#define SOHU_ADMIN_CREATE_SQ_QSIZE_MASK 0xFFFF0000u
/* DW7[15:0] CQID: Completion queue of this SQ. */
#define SOHU_ADMIN_CREATE_SQ_CQID_DW 7
#define SOHU_ADMIN_CREATE_SQ_CQID_SHIFT 0
#define SOHU_ADMIN_CREATE_SQ_CQID_MASK 0x0000FFFFu

/* ==== admin DELETE_SQ operands ==== */
/* DW6[15:0] QID: Queue id. */
#define SOHU_ADMIN_DELETE_SQ_QID_DW 6
#define SOHU_ADMIN_DELETE_SQ_QID_SHIFT 0
#define SOHU_ADMIN_DELETE_SQ_QID_MASK 0x0000FFFFu

/* ==== admin DELETE_CQ operands ==== */
/* DW6[15:0] QID: Queue id. */
#define SOHU_ADMIN_DELETE_CQ_QID_DW 6
#define SOHU_ADMIN_DELETE_CQ_QID_SHIFT 0
#define SOHU_ADMIN_DELETE_CQ_QID_MASK 0x0000FFFFu

/* ==== admin SET_FEATURES operands ==== */
/* DW6[7:0] FID: Feature id. */
#define SOHU_ADMIN_SET_FEATURES_FID_DW 6
#define SOHU_ADMIN_SET_FEATURES_FID_SHIFT 0
#define SOHU_ADMIN_SET_FEATURES_FID_MASK 0x000000FFu
/* DW7[31:0] VALUE: Feature value. */
#define SOHU_ADMIN_SET_FEATURES_VALUE_DW 7
#define SOHU_ADMIN_SET_FEATURES_VALUE_SHIFT 0
#define SOHU_ADMIN_SET_FEATURES_VALUE_MASK 0xFFFFFFFFu
/* DW8[31:0] VALUE2: Second feature value. */
#define SOHU_ADMIN_SET_FEATURES_VALUE2_DW 8
#define SOHU_ADMIN_SET_FEATURES_VALUE2_SHIFT 0
#define SOHU_ADMIN_SET_FEATURES_VALUE2_MASK 0xFFFFFFFFu

/* ==== admin GET_FEATURES operands ==== */
/* DW6[7:0] FID: Feature id. */
#define SOHU_ADMIN_GET_FEATURES_FID_DW 6
#define SOHU_ADMIN_GET_FEATURES_FID_SHIFT 0
#define SOHU_ADMIN_GET_FEATURES_FID_MASK 0x000000FFu

/* ==== admin PMU_CONFIG operands ==== */
/* DW6[2:0] COUNTER: Event counter index. */
#define SOHU_ADMIN_PMU_CONFIG_COUNTER_DW 6
#define SOHU_ADMIN_PMU_CONFIG_COUNTER_SHIFT 0
#define SOHU_ADMIN_PMU_CONFIG_COUNTER_MASK 0x00000007u
/* DW7[15:0] EVENT: Event id (PMU events table); 0 = none. */
#define SOHU_ADMIN_PMU_CONFIG_EVENT_DW 7
#define SOHU_ADMIN_PMU_CONFIG_EVENT_SHIFT 0
#define SOHU_ADMIN_PMU_CONFIG_EVENT_MASK 0x0000FFFFu
/* DW8[0] ENABLE: PMU enable (PMU_CTRL.EN). */
#define SOHU_ADMIN_PMU_CONFIG_ENABLE_DW 8
#define SOHU_ADMIN_PMU_CONFIG_ENABLE_SHIFT 0
#define SOHU_ADMIN_PMU_CONFIG_ENABLE_MASK 0x00000001u
/* DW8[1] RESET: Zero every counter first. */
#define SOHU_ADMIN_PMU_CONFIG_RESET_DW 8
#define SOHU_ADMIN_PMU_CONFIG_RESET_SHIFT 1
#define SOHU_ADMIN_PMU_CONFIG_RESET_MASK 0x00000002u

/* ==== admin TRACE_CONFIG operands ==== */
/* DW4-5 RING: Ring base, host IOVA, 64-byte aligned. */
#define SOHU_ADMIN_TRACE_CONFIG_RING_DW 4
#define SOHU_ADMIN_TRACE_CONFIG_RING_SHIFT 0
#define SOHU_ADMIN_TRACE_CONFIG_RING_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6[31:0] SIZE: Ring bytes, power of two >= 4096. */
#define SOHU_ADMIN_TRACE_CONFIG_SIZE_DW 6
#define SOHU_ADMIN_TRACE_CONFIG_SIZE_SHIFT 0
#define SOHU_ADMIN_TRACE_CONFIG_SIZE_MASK 0xFFFFFFFFu
/* DW7[3:0] MASK: Record classes (as TRC_MASK). */
#define SOHU_ADMIN_TRACE_CONFIG_MASK_DW 7
#define SOHU_ADMIN_TRACE_CONFIG_MASK_SHIFT 0
#define SOHU_ADMIN_TRACE_CONFIG_MASK_MASK 0x0000000Fu
/* DW8[0] ENABLE: Tracing enabled. */
#define SOHU_ADMIN_TRACE_CONFIG_ENABLE_DW 8
#define SOHU_ADMIN_TRACE_CONFIG_ENABLE_SHIFT 0
#define SOHU_ADMIN_TRACE_CONFIG_ENABLE_MASK 0x00000001u

/* ==== admin SET_CONTEXT operands ==== */
/* DW4-5 TABLE: Page-table entries, host IOVA, 8-byte aligned. */
#define SOHU_ADMIN_SET_CONTEXT_TABLE_DW 4
#define SOHU_ADMIN_SET_CONTEXT_TABLE_SHIFT 0
#define SOHU_ADMIN_SET_CONTEXT_TABLE_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6[15:0] CONTEXT: Context id (1..device.mmu.contexts-1; 0 is physical). */
#define SOHU_ADMIN_SET_CONTEXT_CONTEXT_DW 6
#define SOHU_ADMIN_SET_CONTEXT_CONTEXT_SHIFT 0
#define SOHU_ADMIN_SET_CONTEXT_CONTEXT_MASK 0x0000FFFFu
/* DW7[0] VALID: 1 installs, 0 invalidates. */
#define SOHU_ADMIN_SET_CONTEXT_VALID_DW 7
#define SOHU_ADMIN_SET_CONTEXT_VALID_SHIFT 0
#define SOHU_ADMIN_SET_CONTEXT_VALID_MASK 0x00000001u
/* DW8[31:0] ENTRIES: Number of page-table entries (VALID only). */
#define SOHU_ADMIN_SET_CONTEXT_ENTRIES_DW 8
#define SOHU_ADMIN_SET_CONTEXT_ENTRIES_SHIFT 0
#define SOHU_ADMIN_SET_CONTEXT_ENTRIES_MASK 0xFFFFFFFFu

/* ==== admin VF_CONTEXT operands ==== */
/* DW6[15:0] VF: VF index, 0-based (0..NumVFs-1 of the SR-IOV capability). */
#define SOHU_ADMIN_VF_CONTEXT_VF_DW 6
#define SOHU_ADMIN_VF_CONTEXT_VF_SHIFT 0
#define SOHU_ADMIN_VF_CONTEXT_VF_MASK 0x0000FFFFu
/* DW7[15:0] CONTEXT: Context id (1..device.mmu.contexts-1); 0 removes the assignment. */
#define SOHU_ADMIN_VF_CONTEXT_CONTEXT_DW 7
#define SOHU_ADMIN_VF_CONTEXT_CONTEXT_SHIFT 0
#define SOHU_ADMIN_VF_CONTEXT_CONTEXT_MASK 0x0000FFFFu

/* ==== I/O opcodes ==== */
/* NOP: Completes with SUCCESS and does nothing. */
#define SOHU_IO_OP_NOP 0x00u
/* DMA_COPY: Copy LENGTH bytes between address spaces. */
#define SOHU_IO_OP_DMA_COPY 0x01u
/*
 * GEMM: C = act(op(A)[MxK] x op(B)[KxN] + bias) + residual; row-major, packed, FP32 accumulation. D
 * is the bias row (BIAS) or the residual matrix (RESIDUAL): setting both is INVALID_FIELD.
 */
#define SOHU_IO_OP_GEMM 0x02u
/*
 * ATTENTION: Scaled dot-product attention with grouped-query heads. Layouts are position-major:
 * Q[q_len][batch][q_heads][head_dim], K and V[kv_len][batch][kv_heads][head_dim], O like Q. A KV
 * cache laid out this way needs no stride for its capacity: a decode step's new rows for every
 * sequence are contiguous, and KV_LEN selects a prefix.
 */
#define SOHU_IO_OP_ATTENTION 0x03u
/* VECTOR: Vector-engine operation over ROWS x COLS. */
#define SOHU_IO_OP_VECTOR 0x04u
/*
 * COLLECTIVE: One step of a collective over a chip-to-chip port, or a whole one-shot all-reduce
 * over several (ALL_REDUCE: the buffer is read once and sent to every peer in PEERS at once, one
 * port each; when every peer's buffer with the same TAG has arrived, they are added into the buffer
 * on the vector lanes, read and written once).
 */
#define SOHU_IO_OP_COLLECTIVE 0x05u
/* SEM_SIGNAL: Add VALUE to a semaphore, local or on a peer device. */
#define SOHU_IO_OP_SEM_SIGNAL 0x06u
/* SEM_WAIT: Wait until a local semaphore is >= VALUE (SEM_TIMEOUT after TIMEOUT_US). */
#define SOHU_IO_OP_SEM_WAIT 0x07u
/* FENCE: Completes when every earlier command of this queue has completed. */
#define SOHU_IO_OP_FENCE 0x08u
/* TIMESTAMP: Write the 8-byte device time to ADDR. */
#define SOHU_IO_OP_TIMESTAMP 0x09u
/*
 * PMU_SNAPSHOT: Write the cycle counter then the 8 event counters (9 x 8 = 72 bytes) to host
 * memory.
 */
#define SOHU_IO_OP_PMU_SNAPSHOT 0x0Au
/* EXEC_PROGRAM: Execute an array of SQEs from device memory in order; completes when all have. */
#define SOHU_IO_OP_EXEC_PROGRAM 0x0Bu

/* ==== I/O DMA_COPY operands ==== */
/* DW4-5 SRC: Source address. */
#define SOHU_IO_DMA_COPY_SRC_DW 4
#define SOHU_IO_DMA_COPY_SRC_SHIFT 0
#define SOHU_IO_DMA_COPY_SRC_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6-7 DST: Destination address. */
#define SOHU_IO_DMA_COPY_DST_DW 6
#define SOHU_IO_DMA_COPY_DST_SHIFT 0
#define SOHU_IO_DMA_COPY_DST_MASK 0xFFFFFFFFFFFFFFFFull
/* DW8-9 LENGTH: Bytes to copy. */
#define SOHU_IO_DMA_COPY_LENGTH_DW 8
#define SOHU_IO_DMA_COPY_LENGTH_SHIFT 0
#define SOHU_IO_DMA_COPY_LENGTH_MASK 0xFFFFFFFFFFFFFFFFull
/* DW10[3:0] SRC_SPACE: Source address space. (SPACE encoding) */
#define SOHU_IO_DMA_COPY_SRC_SPACE_DW 10
#define SOHU_IO_DMA_COPY_SRC_SPACE_SHIFT 0
#define SOHU_IO_DMA_COPY_SRC_SPACE_MASK 0x0000000Fu
/* DW10[7:4] DST_SPACE: Destination address space. (SPACE encoding) */
#define SOHU_IO_DMA_COPY_DST_SPACE_DW 10
#define SOHU_IO_DMA_COPY_DST_SPACE_SHIFT 4
#define SOHU_IO_DMA_COPY_DST_SPACE_MASK 0x000000F0u
/* DW10[15:8] PEER: Peer device index for PEER_HBM. */
#define SOHU_IO_DMA_COPY_PEER_DW 10
#define SOHU_IO_DMA_COPY_PEER_SHIFT 8
#define SOHU_IO_DMA_COPY_PEER_MASK 0x0000FF00u

/* ==== I/O GEMM operands ==== */
/* DW4-5 A: A, device address (M x K, or K x M with TRANS_A). */
#define SOHU_IO_GEMM_A_DW 4
#define SOHU_IO_GEMM_A_SHIFT 0
#define SOHU_IO_GEMM_A_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6-7 B: B, device address (K x N, or N x K with TRANS_B). */
#define SOHU_IO_GEMM_B_DW 6
#define SOHU_IO_GEMM_B_SHIFT 0
#define SOHU_IO_GEMM_B_MASK 0xFFFFFFFFFFFFFFFFull
/* DW8-9 C: C (output), device address, M x N. */
#define SOHU_IO_GEMM_C_DW 8
#define SOHU_IO_GEMM_C_SHIFT 0
#define SOHU_IO_GEMM_C_MASK 0xFFFFFFFFFFFFFFFFull
/* DW10-11 D: Bias row (N) or residual matrix (M x N). */
#define SOHU_IO_GEMM_D_DW 10
#define SOHU_IO_GEMM_D_SHIFT 0
#define SOHU_IO_GEMM_D_MASK 0xFFFFFFFFFFFFFFFFull
/* DW12[31:0] M: Rows of op(A) and C. */
#define SOHU_IO_GEMM_M_DW 12
#define SOHU_IO_GEMM_M_SHIFT 0
#define SOHU_IO_GEMM_M_MASK 0xFFFFFFFFu
/* DW13[31:0] K: Reduction dimension. */
#define SOHU_IO_GEMM_K_DW 13
#define SOHU_IO_GEMM_K_SHIFT 0
#define SOHU_IO_GEMM_K_MASK 0xFFFFFFFFu
/* DW14[31:0] N: Columns of op(B) and C. */
#define SOHU_IO_GEMM_N_DW 14
#define SOHU_IO_GEMM_N_SHIFT 0
#define SOHU_IO_GEMM_N_MASK 0xFFFFFFFFu
/* DW15[3:0] IN_DTYPE: Data type of A and B. (DTYPE encoding) */
#define SOHU_IO_GEMM_IN_DTYPE_DW 15
#define SOHU_IO_GEMM_IN_DTYPE_SHIFT 0
#define SOHU_IO_GEMM_IN_DTYPE_MASK 0x0000000Fu
/* DW15[7:4] OUT_DTYPE: Data type of C and D. (DTYPE encoding) */
#define SOHU_IO_GEMM_OUT_DTYPE_DW 15
#define SOHU_IO_GEMM_OUT_DTYPE_SHIFT 4
#define SOHU_IO_GEMM_OUT_DTYPE_MASK 0x000000F0u
/* DW15[8] TRANS_A: A is stored transposed. */
#define SOHU_IO_GEMM_TRANS_A_DW 15
#define SOHU_IO_GEMM_TRANS_A_SHIFT 8
#define SOHU_IO_GEMM_TRANS_A_MASK 0x00000100u
/* DW15[9] TRANS_B: B is stored transposed. */
#define SOHU_IO_GEMM_TRANS_B_DW 15
#define SOHU_IO_GEMM_TRANS_B_SHIFT 9
#define SOHU_IO_GEMM_TRANS_B_MASK 0x00000200u
/* DW15[11:10] ACT: Epilogue activation. (ACT encoding) */
#define SOHU_IO_GEMM_ACT_DW 15
#define SOHU_IO_GEMM_ACT_SHIFT 10
#define SOHU_IO_GEMM_ACT_MASK 0x00000C00u
/* DW15[12] BIAS: D is a bias row added before the activation. */
#define SOHU_IO_GEMM_BIAS_DW 15
#define SOHU_IO_GEMM_BIAS_SHIFT 12
#define SOHU_IO_GEMM_BIAS_MASK 0x00001000u
/* DW15[13] RESIDUAL: D is a residual matrix added after the activation. */
#define SOHU_IO_GEMM_RESIDUAL_DW 15
#define SOHU_IO_GEMM_RESIDUAL_SHIFT 13
#define SOHU_IO_GEMM_RESIDUAL_MASK 0x00002000u
/*
 * DW15[15:14] DATAFLOW: Dataflow override; DEFAULT uses the device's configured dataflow. The code
 * is sohusim::device::Dataflow + 1.
 */
#define SOHU_IO_GEMM_DATAFLOW_DW 15
#define SOHU_IO_GEMM_DATAFLOW_SHIFT 14
#define SOHU_IO_GEMM_DATAFLOW_MASK 0x0000C000u
#define SOHU_IO_GEMM_DATAFLOW_DEFAULT 0u
#define SOHU_IO_GEMM_DATAFLOW_WS 1u
#define SOHU_IO_GEMM_DATAFLOW_OS 2u
#define SOHU_IO_GEMM_DATAFLOW_IS 3u

/* ==== I/O ATTENTION operands ==== */
/* DW4-5 Q: Queries, device address. */
#define SOHU_IO_ATTENTION_Q_DW 4
#define SOHU_IO_ATTENTION_Q_SHIFT 0
#define SOHU_IO_ATTENTION_Q_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6-7 K: Key cache, device address. */
#define SOHU_IO_ATTENTION_K_DW 6
#define SOHU_IO_ATTENTION_K_SHIFT 0
#define SOHU_IO_ATTENTION_K_MASK 0xFFFFFFFFFFFFFFFFull
/* DW8-9 V: Value cache, device address. */
#define SOHU_IO_ATTENTION_V_DW 8
#define SOHU_IO_ATTENTION_V_SHIFT 0
#define SOHU_IO_ATTENTION_V_MASK 0xFFFFFFFFFFFFFFFFull
/* DW10-11 O: Output, device address. */
#define SOHU_IO_ATTENTION_O_DW 10
#define SOHU_IO_ATTENTION_O_SHIFT 0
#define SOHU_IO_ATTENTION_O_MASK 0xFFFFFFFFFFFFFFFFull
/* DW12[31:0] Q_LEN: Query tokens. */
#define SOHU_IO_ATTENTION_Q_LEN_DW 12
#define SOHU_IO_ATTENTION_Q_LEN_SHIFT 0
#define SOHU_IO_ATTENTION_Q_LEN_MASK 0xFFFFFFFFu
/* DW13[31:0] KV_LEN: Keys visible. */
#define SOHU_IO_ATTENTION_KV_LEN_DW 13
#define SOHU_IO_ATTENTION_KV_LEN_SHIFT 0
#define SOHU_IO_ATTENTION_KV_LEN_MASK 0xFFFFFFFFu
/* DW14[9:0] Q_HEADS: Query heads. */
#define SOHU_IO_ATTENTION_Q_HEADS_DW 14
#define SOHU_IO_ATTENTION_Q_HEADS_SHIFT 0
#define SOHU_IO_ATTENTION_Q_HEADS_MASK 0x000003FFu
/* DW14[19:10] KV_HEADS: Key/value heads (divides Q_HEADS). */
#define SOHU_IO_ATTENTION_KV_HEADS_DW 14
#define SOHU_IO_ATTENTION_KV_HEADS_SHIFT 10
#define SOHU_IO_ATTENTION_KV_HEADS_MASK 0x000FFC00u
/* DW14[31:20] HEAD_DIM: Head dimension. */
#define SOHU_IO_ATTENTION_HEAD_DIM_DW 14
#define SOHU_IO_ATTENTION_HEAD_DIM_SHIFT 20
#define SOHU_IO_ATTENTION_HEAD_DIM_MASK 0xFFF00000u
/* DW15[3:0] DTYPE: Data type of Q, K, V and O. (DTYPE encoding) */
#define SOHU_IO_ATTENTION_DTYPE_DW 15
#define SOHU_IO_ATTENTION_DTYPE_SHIFT 0
#define SOHU_IO_ATTENTION_DTYPE_MASK 0x0000000Fu
/* DW15[4] CAUSAL: Causal mask (queries are the last Q_LEN positions). */
#define SOHU_IO_ATTENTION_CAUSAL_DW 15
#define SOHU_IO_ATTENTION_CAUSAL_SHIFT 4
#define SOHU_IO_ATTENTION_CAUSAL_MASK 0x00000010u
/* DW15[31:16] BATCH: Batch size. */
#define SOHU_IO_ATTENTION_BATCH_DW 15
#define SOHU_IO_ATTENTION_BATCH_SHIFT 16
#define SOHU_IO_ATTENTION_BATCH_MASK 0xFFFF0000u

/* ==== I/O VECTOR operands ==== */
/* DW4-5 X: Input, device address. */
#define SOHU_IO_VECTOR_X_DW 4
#define SOHU_IO_VECTOR_X_SHIFT 0
#define SOHU_IO_VECTOR_X_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6-7 Y: Second operand, gamma (then beta for LAYERNORM) or RoPE table. */
#define SOHU_IO_VECTOR_Y_DW 6
#define SOHU_IO_VECTOR_Y_SHIFT 0
#define SOHU_IO_VECTOR_Y_MASK 0xFFFFFFFFFFFFFFFFull
/* DW8-9 OUT: Output, device address. */
#define SOHU_IO_VECTOR_OUT_DW 8
#define SOHU_IO_VECTOR_OUT_SHIFT 0
#define SOHU_IO_VECTOR_OUT_MASK 0xFFFFFFFFFFFFFFFFull
/* DW10[31:0] ROWS: Rows. */
#define SOHU_IO_VECTOR_ROWS_DW 10
#define SOHU_IO_VECTOR_ROWS_SHIFT 0
#define SOHU_IO_VECTOR_ROWS_MASK 0xFFFFFFFFu
/* DW11[31:0] COLS: Columns. */
#define SOHU_IO_VECTOR_COLS_DW 11
#define SOHU_IO_VECTOR_COLS_SHIFT 0
#define SOHU_IO_VECTOR_COLS_MASK 0xFFFFFFFFu
/* DW12[7:0] VOP: Operation. (VOP encoding) */
#define SOHU_IO_VECTOR_VOP_DW 12
#define SOHU_IO_VECTOR_VOP_SHIFT 0
#define SOHU_IO_VECTOR_VOP_MASK 0x000000FFu
/* DW12[11:8] IN_DTYPE: Input data type. (DTYPE encoding) */
#define SOHU_IO_VECTOR_IN_DTYPE_DW 12
#define SOHU_IO_VECTOR_IN_DTYPE_SHIFT 8
#define SOHU_IO_VECTOR_IN_DTYPE_MASK 0x00000F00u
/* DW12[15:12] OUT_DTYPE: Output data type. (DTYPE encoding) */
#define SOHU_IO_VECTOR_OUT_DTYPE_DW 12
#define SOHU_IO_VECTOR_OUT_DTYPE_SHIFT 12
#define SOHU_IO_VECTOR_OUT_DTYPE_MASK 0x0000F000u
/* DW13[31:0] SCALAR: IEEE-754 float bits: eps (norms), scale (SCALE), theta base (ROPE). */
#define SOHU_IO_VECTOR_SCALAR_DW 13
#define SOHU_IO_VECTOR_SCALAR_SHIFT 0
#define SOHU_IO_VECTOR_SCALAR_MASK 0xFFFFFFFFu
/* DW14[15:0] AUX: ROPE: head_dim. */
#define SOHU_IO_VECTOR_AUX_DW 14
#define SOHU_IO_VECTOR_AUX_SHIFT 0
#define SOHU_IO_VECTOR_AUX_MASK 0x0000FFFFu
/*
 * DW14[31:16] GROUP: ROPE: consecutive rows that share one position (the batch, for position-major
 * rows); 0 or 1 = every row its own position.
 */
#define SOHU_IO_VECTOR_GROUP_DW 14
#define SOHU_IO_VECTOR_GROUP_SHIFT 16
#define SOHU_IO_VECTOR_GROUP_MASK 0xFFFF0000u
/* DW15[31:0] AUX2: ROPE: position of row 0; row r is at AUX2 + r / GROUP. */
#define SOHU_IO_VECTOR_AUX2_DW 15
#define SOHU_IO_VECTOR_AUX2_SHIFT 0
#define SOHU_IO_VECTOR_AUX2_MASK 0xFFFFFFFFu

/* ==== I/O COLLECTIVE operands ==== */
/* DW4-5 ADDR: Buffer, device address. */
#define SOHU_IO_COLLECTIVE_ADDR_DW 4
#define SOHU_IO_COLLECTIVE_ADDR_SHIFT 0
#define SOHU_IO_COLLECTIVE_ADDR_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6-7 LENGTH: Bytes. */
#define SOHU_IO_COLLECTIVE_LENGTH_DW 6
#define SOHU_IO_COLLECTIVE_LENGTH_SHIFT 0
#define SOHU_IO_COLLECTIVE_LENGTH_MASK 0xFFFFFFFFFFFFFFFFull
/* DW8[3:0] OP: Step kind. */
#define SOHU_IO_COLLECTIVE_OP_DW 8
#define SOHU_IO_COLLECTIVE_OP_SHIFT 0
#define SOHU_IO_COLLECTIVE_OP_MASK 0x0000000Fu
#define SOHU_IO_COLLECTIVE_OP_SEND 0u
#define SOHU_IO_COLLECTIVE_OP_RECV 1u
#define SOHU_IO_COLLECTIVE_OP_REDUCE_STEP 2u
#define SOHU_IO_COLLECTIVE_OP_GATHER_STEP 3u
#define SOHU_IO_COLLECTIVE_OP_ALL_REDUCE 4u
/* DW8[15:8] PEER: Peer device index (not ALL_REDUCE). */
#define SOHU_IO_COLLECTIVE_PEER_DW 8
#define SOHU_IO_COLLECTIVE_PEER_SHIFT 8
#define SOHU_IO_COLLECTIVE_PEER_MASK 0x0000FF00u
/* DW8[19:16] DTYPE: Element type (REDUCE_STEP, ALL_REDUCE). (DTYPE encoding) */
#define SOHU_IO_COLLECTIVE_DTYPE_DW 8
#define SOHU_IO_COLLECTIVE_DTYPE_SHIFT 16
#define SOHU_IO_COLLECTIVE_DTYPE_MASK 0x000F0000u
/* DW9[31:0] TAG: Matches a SEND with its RECV (ALL_REDUCE: the peers' ALL_REDUCEs with it). */
#define SOHU_IO_COLLECTIVE_TAG_DW 9
#define SOHU_IO_COLLECTIVE_TAG_SHIFT 0
#define SOHU_IO_COLLECTIVE_TAG_MASK 0xFFFFFFFFu
/* DW10[31:0] PEERS: ALL_REDUCE: the peers, bit i = device i (not this device; at least one). */
#define SOHU_IO_COLLECTIVE_PEERS_DW 10
#define SOHU_IO_COLLECTIVE_PEERS_SHIFT 0
#define SOHU_IO_COLLECTIVE_PEERS_MASK 0xFFFFFFFFu

/* ==== I/O SEM_SIGNAL operands ==== */
/* DW6[7:0] SEM: Semaphore id. */
#define SOHU_IO_SEM_SIGNAL_SEM_DW 6
#define SOHU_IO_SEM_SIGNAL_SEM_SHIFT 0
#define SOHU_IO_SEM_SIGNAL_SEM_MASK 0x000000FFu
/* DW6[15:8] DEVICE: Device index; LOCAL = this device. */
#define SOHU_IO_SEM_SIGNAL_DEVICE_DW 6
#define SOHU_IO_SEM_SIGNAL_DEVICE_SHIFT 8
#define SOHU_IO_SEM_SIGNAL_DEVICE_MASK 0x0000FF00u
#define SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL 255u
/* DW7[31:0] VALUE: Value added. */
#define SOHU_IO_SEM_SIGNAL_VALUE_DW 7
#define SOHU_IO_SEM_SIGNAL_VALUE_SHIFT 0
#define SOHU_IO_SEM_SIGNAL_VALUE_MASK 0xFFFFFFFFu

/* ==== I/O SEM_WAIT operands ==== */
/* DW6[7:0] SEM: Semaphore id. */
#define SOHU_IO_SEM_WAIT_SEM_DW 6
#define SOHU_IO_SEM_WAIT_SEM_SHIFT 0
#define SOHU_IO_SEM_WAIT_SEM_MASK 0x000000FFu
/* DW7[31:0] VALUE: Threshold. */
#define SOHU_IO_SEM_WAIT_VALUE_DW 7
#define SOHU_IO_SEM_WAIT_VALUE_SHIFT 0
#define SOHU_IO_SEM_WAIT_VALUE_MASK 0xFFFFFFFFu
/* DW8[31:0] TIMEOUT_US: Timeout in us; 0 = wait forever. */
#define SOHU_IO_SEM_WAIT_TIMEOUT_US_DW 8
#define SOHU_IO_SEM_WAIT_TIMEOUT_US_SHIFT 0
#define SOHU_IO_SEM_WAIT_TIMEOUT_US_MASK 0xFFFFFFFFu

/* ==== I/O TIMESTAMP operands ==== */
/* DW4-5 ADDR: Destination address. */
#define SOHU_IO_TIMESTAMP_ADDR_DW 4
#define SOHU_IO_TIMESTAMP_ADDR_SHIFT 0
#define SOHU_IO_TIMESTAMP_ADDR_MASK 0xFFFFFFFFFFFFFFFFull
/* DW10[3:0] SPACE: Destination address space. (SPACE encoding) */
#define SOHU_IO_TIMESTAMP_SPACE_DW 10
#define SOHU_IO_TIMESTAMP_SPACE_SHIFT 0
#define SOHU_IO_TIMESTAMP_SPACE_MASK 0x0000000Fu

/* ==== I/O PMU_SNAPSHOT operands ==== */
/* DW4-5 ADDR: Host IOVA of 72 bytes. */
#define SOHU_IO_PMU_SNAPSHOT_ADDR_DW 4
#define SOHU_IO_PMU_SNAPSHOT_ADDR_SHIFT 0
#define SOHU_IO_PMU_SNAPSHOT_ADDR_MASK 0xFFFFFFFFFFFFFFFFull

/* ==== I/O EXEC_PROGRAM operands ==== */
/* DW4-5 ADDR: Device address of the SQE array (64 bytes each). */
#define SOHU_IO_EXEC_PROGRAM_ADDR_DW 4
#define SOHU_IO_EXEC_PROGRAM_ADDR_SHIFT 0
#define SOHU_IO_EXEC_PROGRAM_ADDR_MASK 0xFFFFFFFFFFFFFFFFull
/* DW6[31:0] COUNT: Number of SQEs. */
#define SOHU_IO_EXEC_PROGRAM_COUNT_DW 6
#define SOHU_IO_EXEC_PROGRAM_COUNT_SHIFT 0
#define SOHU_IO_EXEC_PROGRAM_COUNT_MASK 0xFFFFFFFFu

/* ==== status codes (CQE STATUS) ==== */
/* SUCCESS: The command completed. */
#define SOHU_STATUS_SUCCESS 0x0000u
/* INVALID_OPCODE: The opcode is not defined for this queue type. */
#define SOHU_STATUS_INVALID_OPCODE 0x0001u
/* INVALID_FIELD: A reserved bit is set or a field value is outside its range. */
#define SOHU_STATUS_INVALID_FIELD 0x0002u
/* INVALID_QUEUE_ID: The queue id is 0 for an I/O queue or above CAP0.MQP, or names no queue. */
#define SOHU_STATUS_INVALID_QUEUE_ID 0x0003u
/* QUEUE_EXISTS: CREATE_CQ/CREATE_SQ for a queue id already in use. */
#define SOHU_STATUS_QUEUE_EXISTS 0x0004u
/* INVALID_QUEUE_SIZE: Queue size 0 entries-minus-one or above CAP0.MQES. */
#define SOHU_STATUS_INVALID_QUEUE_SIZE 0x0005u
/* MISALIGNED: An address is not aligned as the command requires. */
#define SOHU_STATUS_MISALIGNED 0x0006u
/* OUT_OF_RANGE: An address range lies outside the memory it names. */
#define SOHU_STATUS_OUT_OF_RANGE 0x0007u
/* HOST_DMA_ERROR: A host memory access failed (IOMMU fault or PCIe error). */
#define SOHU_STATUS_HOST_DMA_ERROR 0x0008u
/* MMU_FAULT: The device MMU found no valid translation in the command's context. */
#define SOHU_STATUS_MMU_FAULT 0x0009u
/* INVALID_DTYPE: A data type code is not defined or not supported by the operation. */
#define SOHU_STATUS_INVALID_DTYPE 0x000Au
/* INVALID_DIMENSIONS: A dimension is zero, too large or inconsistent. */
#define SOHU_STATUS_INVALID_DIMENSIONS 0x000Bu
/* INVALID_FEATURE: The feature id is not defined or not settable. */
#define SOHU_STATUS_INVALID_FEATURE 0x000Cu
/* ABORTED_RESET: Aborted by a controller reset or the deletion of its queue. */
#define SOHU_STATUS_ABORTED_RESET 0x000Du
/* SEM_TIMEOUT: SEM_WAIT timed out. */
#define SOHU_STATUS_SEM_TIMEOUT 0x000Eu
/* PEER_UNREACHABLE: The peer device is not connected or does not respond. */
#define SOHU_STATUS_PEER_UNREACHABLE 0x000Fu
/* DEVICE_DISABLED: The controller is not enabled (CTRL.EN 0 or shutting down). */
#define SOHU_STATUS_DEVICE_DISABLED 0x0010u
/*
 * INVALID_DOORBELL: A doorbell write named an index beyond the queue or a queue that does not
 * exist.
 */
#define SOHU_STATUS_INVALID_DOORBELL 0x0011u
/* QUEUE_IN_USE: DELETE_CQ of a completion queue that submission queues still use. */
#define SOHU_STATUS_QUEUE_IN_USE 0x0012u
/* INTERNAL_ERROR: The device failed for a reason of its own (logged in ERRLOG). */
#define SOHU_STATUS_INTERNAL_ERROR 0x0013u

/* ==== feature ids (SET_FEATURES / GET_FEATURES) ==== */
/*
 * INT_COALESCING: Interrupt coalescing of every I/O CQ (defaults come from
 * COAL_COUNT/COAL_TIME_NS).
 */
#define SOHU_FEAT_INT_COALESCING 0x01u
/* value[15:0] COUNT: Completions per interrupt; 0 or 1 = every one. */
#define SOHU_FEAT_INT_COALESCING_COUNT_SHIFT 0
#define SOHU_FEAT_INT_COALESCING_COUNT_MASK 0x0000FFFFu
/* value2[31:0] TIME_NS: Maximum delay in ns; 0 = none. */
#define SOHU_FEAT_INT_COALESCING_TIME_NS_SHIFT 0
#define SOHU_FEAT_INT_COALESCING_TIME_NS_MASK 0xFFFFFFFFu
/* POWER_STATE: Power state (as POWER_STATE.PS). */
#define SOHU_FEAT_POWER_STATE 0x02u
/* value[1:0] PS: P0..P3. */
#define SOHU_FEAT_POWER_STATE_PS_SHIFT 0
#define SOHU_FEAT_POWER_STATE_PS_MASK 0x00000003u
/* NUM_QUEUES: Number of I/O queue pairs supported. */
#define SOHU_FEAT_NUM_QUEUES 0x03u
/* result[7:0] MAX_PAIRS: Maximum I/O queue pairs (as CAP0.MQP). */
#define SOHU_FEAT_NUM_QUEUES_MAX_PAIRS_SHIFT 0
#define SOHU_FEAT_NUM_QUEUES_MAX_PAIRS_MASK 0x000000FFu
/* ARBITRATION: Round-robin arbitration burst between submission queues. */
#define SOHU_FEAT_ARBITRATION 0x04u
/* value[7:0] BURST: Commands taken from a queue per round. */
#define SOHU_FEAT_ARBITRATION_BURST_SHIFT 0
#define SOHU_FEAT_ARBITRATION_BURST_MASK 0x000000FFu

/* ==== DTYPE: Element data types (sohusim::device::DataType, dtype.hpp). ==== */
#define SOHU_DTYPE_FP8_E4M3 0u
#define SOHU_DTYPE_FP8_E5M2 1u
#define SOHU_DTYPE_BF16 2u
#define SOHU_DTYPE_FP16 3u
#define SOHU_DTYPE_FP32 4u
#define SOHU_DTYPE_COUNT 5u

/* ==== ACT: GEMM epilogue activations (sohusim::device::Activation, ops.hpp). ==== */
#define SOHU_ACT_NONE 0u
#define SOHU_ACT_RELU 1u
#define SOHU_ACT_GELU 2u
#define SOHU_ACT_SILU 3u
#define SOHU_ACT_COUNT 4u

/* ==== VOP: Vector operations (sohusim::device::VectorOp, ops.hpp). ==== */
#define SOHU_VOP_RMSNORM 0u
#define SOHU_VOP_LAYERNORM 1u
#define SOHU_VOP_ROPE 2u
#define SOHU_VOP_SILU 3u
#define SOHU_VOP_GELU 4u
#define SOHU_VOP_SWIGLU 5u
#define SOHU_VOP_ADD 6u
#define SOHU_VOP_SCALE 7u
#define SOHU_VOP_CAST 8u
#define SOHU_VOP_SOFTMAX 9u
#define SOHU_VOP_COUNT 10u

/* ==== SPACE: DMA address spaces. ==== */
#define SOHU_SPACE_HOST 0u
#define SOHU_SPACE_HBM 1u
#define SOHU_SPACE_SRAM 2u
#define SOHU_SPACE_PEER_HBM 3u
#define SOHU_SPACE_COUNT 4u

/* ==== PMU event ids (PMU_EVTSEL.EVENT) ==== */
/* CMD_COMPLETED: Commands completed. (statistics dev.cp.commands_completed) */
#define SOHU_PMU_EVT_CMD_COMPLETED 1u
/*
 * ME_ACTIVE_CYCLES: Matrix-engine busy cycles, summed over engines. (statistics
 * dev.me*.active_cycles)
 */
#define SOHU_PMU_EVT_ME_ACTIVE_CYCLES 2u
/* ME_MACS: Useful MACs (padding excluded), summed over engines. (statistics dev.me*.macs_useful) */
#define SOHU_PMU_EVT_ME_MACS 3u
/*
 * VE_ACTIVE_CYCLES: Vector-engine busy cycles, summed over engines. (statistics
 * dev.ve*.active_cycles)
 */
#define SOHU_PMU_EVT_VE_ACTIVE_CYCLES 4u
/* HBM_READ_BYTES: Bytes read from HBM. (statistics dev.hbm*.bytes_read) */
#define SOHU_PMU_EVT_HBM_READ_BYTES 5u
/* HBM_WRITE_BYTES: Bytes written to HBM. (statistics dev.hbm*.bytes_written) */
#define SOHU_PMU_EVT_HBM_WRITE_BYTES 6u
/* DMA_HOST_BYTES: Bytes moved to or from host memory by DMA. (statistics dev.dma.host_bytes) */
#define SOHU_PMU_EVT_DMA_HOST_BYTES 7u
/*
 * SRAM_CONFLICTS: SRAM line accesses delayed by a bank conflict. (statistics
 * dev.sram*.bank_conflicts)
 */
#define SOHU_PMU_EVT_SRAM_CONFLICTS 8u
/* C2C_TX_BYTES: Bytes sent over chip-to-chip ports. (statistics dev.c2c.*.tx.bytes) */
#define SOHU_PMU_EVT_C2C_TX_BYTES 9u
/* MMU_TLB_MISSES: Device-MMU TLB misses. (statistics dev.mmu*.tlb_misses) */
#define SOHU_PMU_EVT_MMU_TLB_MISSES 10u
/* IRQ_SENT: MSI-X interrupts sent. (statistics dev.cp.interrupts) */
#define SOHU_PMU_EVT_IRQ_SENT 11u
/*
 * ME_STALL_HBM_CYCLES: Matrix-engine cycles stalled waiting for HBM. (statistics
 * dev.me*.stall_hbm_cycles)
 */
#define SOHU_PMU_EVT_ME_STALL_HBM_CYCLES 12u

#endif /* SOHUSIM_MODELS_SOHU_REGS_H */
