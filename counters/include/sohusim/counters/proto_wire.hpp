// A tiny encoder for the protobuf wire format, just enough for the Perfetto trace writer:
// varints, field tags, fixed64 and length-delimited (nested) fields, written into a growable
// byte buffer.
//
// Why hand-written rather than libprotobuf: the trace budget (docs/trace.md, "Cost") is >= 5 M
// slices per wall-second, i.e. a couple of hundred nanoseconds for two packets. Building
// message objects and serializing them costs allocations and reflection-free but still generic
// code per field; here each field is a few stores into a buffer we already own. libprotobuf is
// still used, by the tests, to decode what this produces.
//
// Nested messages: open() writes the tag and reserves one byte for the length, close() fills it
// in. Almost every message we nest is shorter than 128 bytes, so the length fits that byte; a
// longer one is moved forward by the extra length bytes (a memmove, off the hot path). The
// output therefore never contains padded (non-minimal) varints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

namespace sohusim::counters::proto {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

constexpr std::uint64_t tag(std::uint32_t field, WireType type) {
  return (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(type);
}

constexpr std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Worst-case size of a varint, and of a tag + varint field with a field number below 2^11.
inline constexpr std::size_t kMaxVarint = 10;
inline constexpr std::size_t kMaxVarintField = 2 + kMaxVarint;

// Writes `v` as a varint at `p` (which must have kMaxVarint bytes of room); returns the end.
inline std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

// A tag that fits one byte (field numbers 1..15), for hand-laid hot-path packets.
constexpr std::uint8_t tag1(std::uint32_t field, WireType type) {
  return static_cast<std::uint8_t>(tag(field, type));
}

class WireBuffer {
 public:
  explicit WireBuffer(std::size_t initial_capacity = 4096) : capacity_(initial_capacity < 64 ? 64 : initial_capacity) {
    data_.reset(new std::uint8_t[capacity_]);
  }

  const std::uint8_t* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }

  // Makes room for `n` more bytes. Every write below calls it; it is one compare when the
  // buffer is large enough, which is almost always.
  void reserve_more(std::size_t n) {
    if (capacity_ - size_ < n) grow(n);
  }

  void raw(const void* bytes, std::size_t n) {
    reserve_more(n);
    std::memcpy(data_.get() + size_, bytes, n);
    size_ += n;
  }

  // Unchecked writing for hot paths: tail(n) guarantees n bytes of room and returns where to
  // write; commit(end) takes what was written up to `end`.
  std::uint8_t* tail(std::size_t n) {
    reserve_more(n);
    return data_.get() + size_;
  }
  void commit(const std::uint8_t* end) { size_ = static_cast<std::size_t>(end - data_.get()); }

  void varint(std::uint64_t v) { commit(put_varint(tail(kMaxVarint), v)); }

  void field_varint(std::uint32_t field, std::uint64_t v) {
    varint(tag(field, WireType::Varint));
    varint(v);
  }

  // int64 fields use plain (not zig-zag) varints: a negative value takes ten bytes.
  void field_int64(std::uint32_t field, std::int64_t v) { field_varint(field, static_cast<std::uint64_t>(v)); }

  void field_bool(std::uint32_t field, bool v) { field_varint(field, v ? 1 : 0); }

  void field_fixed64(std::uint32_t field, std::uint64_t v) {
    varint(tag(field, WireType::Fixed64));
    std::uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<std::uint8_t>(v >> (8 * i));
    raw(le, sizeof le);
  }

  void field_double(std::uint32_t field, double v) {
    std::uint64_t bits;
    static_assert(sizeof bits == sizeof v);
    std::memcpy(&bits, &v, sizeof bits);
    field_fixed64(field, bits);
  }

  void field_bytes(std::uint32_t field, std::string_view bytes) {
    varint(tag(field, WireType::LengthDelimited));
    varint(bytes.size());
    raw(bytes.data(), bytes.size());
  }

  // Starts a nested message; returns the mark to pass to close().
  std::size_t open(std::uint32_t field) {
    varint(tag(field, WireType::LengthDelimited));
    reserve_more(1);
    ++size_;  // the length byte, filled in by close()
    return size_;
  }

  void close(std::size_t mark) {
    const std::size_t length = size_ - mark;
    if (length < 0x80) {
      data_[mark - 1] = static_cast<std::uint8_t>(length);
      return;
    }
    const std::size_t extra = varint_size(length) - 1;
    reserve_more(extra);
    std::uint8_t* body = data_.get() + mark;
    std::memmove(body + extra, body, length);
    std::uint8_t* p = body - 1;
    std::size_t v = length;
    while (v >= 0x80) {
      *p++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p = static_cast<std::uint8_t>(v);
    size_ += extra;
  }

 private:
  void grow(std::size_t n) {
    std::size_t cap = capacity_ * 2;
    while (cap - size_ < n) cap *= 2;
    std::unique_ptr<std::uint8_t[]> bigger(new std::uint8_t[cap]);
    std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = cap;
  }

  std::size_t capacity_;
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0;
};

}  // namespace sohusim::counters::proto
