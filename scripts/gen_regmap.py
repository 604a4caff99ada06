#!/usr/bin/env python3
"""Validate the device register map and generate its C header, C++ table and documentation.

The single source is regmap/sohu_regmap.yaml (its schema is described at its top).
Outputs, relative to --out-dir (default: the repository root):
  regmap/include/sohusim/regmap/sohu_regs.h  C99/C++ header for drivers
  device/src/frontend/regmap_table.inc        tables the RegisterFile decoder is built from
  docs/registers.md                           documentation

Usage:
  gen_regmap.py [--yaml FILE] [--out-dir DIR]          write the outputs (only changed files)
  gen_regmap.py --check [--yaml FILE] [--out-dir DIR]  regenerate in memory, compare with
                                                       the files, print a unified diff
Exit status: 0 ok (or no drift), 1 drift found by --check, 2 invalid YAML or usage error,
3 PyYAML missing (so that tests can skip rather than fail).
Every validation error is printed as `FILE:LINE: message` naming the register or field.

Needs PyYAML (Debian: python3-yaml).
"""

import argparse
import difflib
import os
import re
import sys
import textwrap

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("gen_regmap.py: PyYAML is missing (Debian package python3-yaml)\n")
    sys.exit(3)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_YAML = os.path.join(REPO, "regmap", "sohu_regmap.yaml")
OUT_HEADER = "regmap/include/sohusim/regmap/sohu_regs.h"
OUT_TABLE = "device/src/frontend/regmap_table.inc"
OUT_DOC = "docs/registers.md"
SCRIPT_NAME = "scripts/gen_regmap.py"

ACCESS = ("RO", "RW", "RW1C", "WO", "RC")
WRITABLE = ("RW", "RW1C", "WO")
# Which field accesses a register of a given access may contain, and why: the decoder keeps
# one access per register plus a writable mask and a self-clearing mask, so a field can only
# narrow its register (RO bits in a writable register, WO action bits in an RW register).
FIELD_ACCESS_ALLOWED = {
    "RO": ("RO",),
    "RW": ("RW", "RO", "WO"),
    "RW1C": ("RW1C", "RO"),
    "WO": ("WO",),
    "RC": ("RC",),
}
PAGE_KINDS = ("registers", "doorbells", "msix_table", "msix_pba")
_NONE = object()  # integer(): give None for an invalid value, so it is not compared with others
NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
PAGE_4K = 0x1000


# --------------------------------------------------------------------------------------
# Loading: a SafeLoader that remembers line numbers and refuses YAML 1.1 surprises.


class LineDict(dict):
    """A mapping that remembers where it (and each key) was written."""

    line = 0
    key_lines = None

    def line_of(self, key):
        if self.key_lines and key in self.key_lines:
            return self.key_lines[key]
        return self.line


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader (libyaml's parser when PyYAML has it: several times faster)."""


# YAML 1.1 reads `15:0` as the sexagesimal integer 900, `010` as octal 8 and `ON`/`NO` as
# booleans; a register map is full of such tokens, so only plain decimal/hex/binary
# integers and true/false are resolved, everything else stays a string.
_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:bool")]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?0b[01_]+|[-+]?0x[0-9a-fA-F_]+|[-+]?(?:0|[1-9][0-9_]*))$"),
    list("-+0123456789"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _construct_mapping(loader, node):
    loader.flatten_mapping(node)
    d = LineDict()
    d.line = node.start_mark.line + 1
    d.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "unhashable key", key_node.start_mark)
        if key in d:
            raise yaml.constructor.ConstructorError(
                None, None, "duplicate key %r (first at line %d)" % (key, d.key_lines[key]), key_node.start_mark
            )
        d[key] = loader.construct_object(value_node, deep=True)
        d.key_lines[key] = key_node.start_mark.line + 1
    return d


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


# --------------------------------------------------------------------------------------
# Model


class Errors:
    def __init__(self, src):
        self.src = src
        self.items = []

    def add(self, line, msg):
        self.items.append((line or 0, msg))

    def __bool__(self):
        return bool(self.items)

    def lines(self):
        return ["%s:%d: %s" % (self.src, line, msg) for line, msg in self.items]


def hx(v):
    return "0x%X" % v


def mask_of(msb, lsb):
    return ((1 << (msb - lsb + 1)) - 1) << lsb


class Field:
    """A bit field of a register (dw None) or of a command dword (dw set)."""

    def __init__(self):
        self.name = ""
        self.msb = self.lsb = 0
        self.access = None
        self.reset = None
        self.description = ""
        self.values = []  # [(value, NAME)]
        self.encoding = None
        self.within = None
        self.dw = None
        self.where = None  # features: value | value2 | result
        self.line = 0
        self.children = []

    @property
    def width(self):
        return self.msb - self.lsb + 1

    @property
    def mask(self):
        return mask_of(self.msb, self.lsb)

    def bits_text(self):
        return "%d" % self.lsb if self.msb == self.lsb else "%d:%d" % (self.msb, self.lsb)


class Register:
    def __init__(self):
        self.name = ""
        self.offset = 0
        self.width = 32
        self.access = "RO"
        self.reset = 0
        self.description = ""
        self.fields = []
        self.count = 1
        self.stride = 0
        self.page = None
        self.line = 0
        self.writable_mask = 0
        self.self_clearing_mask = 0

    @property
    def nbytes(self):
        return self.width // 8

    def elements(self):
        for i in range(self.count):
            yield i, self.offset + i * self.stride


class Page:
    def __init__(self):
        self.name = ""
        self.offset = 0
        self.pages = 1
        self.kind = "registers"
        self.description = ""
        self.registers = []
        self.line = 0

    @property
    def size(self):
        return self.pages * PAGE_4K


class Command:
    def __init__(self, queue):
        self.queue = queue  # "admin" | "io"
        self.code = 0
        self.name = ""
        self.description = ""
        self.result = ""
        self.operands = []
        self.line = 0


class Simple:
    """A named code with a description (status, encoding value, PMU event)."""

    def __init__(self, code, name, description, line, extra=None):
        self.code = code
        self.name = name
        self.description = description
        self.line = line
        self.extra = extra


class Feature:
    def __init__(self):
        self.fid = 0
        self.name = ""
        self.set = True
        self.get = True
        self.description = ""
        self.fields = []
        self.line = 0


class Encoding:
    def __init__(self):
        self.name = ""
        self.title = ""
        self.description = ""
        self.values = []  # [Simple]
        self.line = 0


class Model:
    def __init__(self):
        self.overview = ""
        self.conventions = []
        self.bar0_size = 0
        self.page_size = PAGE_4K
        self.bar2 = ""
        self.pages = []
        self.sqe_size = 64
        self.sqe_description = ""
        self.sqe = []
        self.cqe_size = 16
        self.cqe_description = ""
        self.cqe = []
        self.admin = []
        self.io = []
        self.statuses = []
        self.features = []
        self.encodings = []
        self.pmu_events = []

    def registers(self):
        for p in self.pages:
            for r in p.registers:
                yield r

    def encoding(self, name):
        for e in self.encodings:
            if e.name == name:
                return e
        return None


# --------------------------------------------------------------------------------------
# Parsing and validation


class Parser:
    def __init__(self, errors):
        self.e = errors

    # ---- small typed getters: each reports what was wrong and where ----
    def mapping(self, obj, what, line):
        if not isinstance(obj, dict):
            self.e.add(line, "%s must be a mapping" % what)
            return None
        return obj

    def keys(self, d, what, required, optional=()):
        allowed = set(required) | set(optional)
        for k in d:
            if k not in allowed:
                self.e.add(d.line_of(k), "%s: unknown key '%s' (allowed: %s)" % (what, k, ", ".join(sorted(allowed))))
        ok = True
        for k in required:
            if k not in d:
                self.e.add(d.line, "%s: missing key '%s'" % (what, k))
                ok = False
        return ok

    def integer(self, d, key, what, lo=0, hi=None, default=None):
        """d[key] checked against lo..hi; `default` when absent or wrong (_NONE: None when wrong)."""
        if key not in d:
            return None if default is _NONE else default
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, int):
            self.e.add(d.line_of(key), "%s: %s must be an integer (hex or decimal), got %r" % (what, key, v))
            return None if default is _NONE else default
        if v < lo or (hi is not None and v > hi):
            rng = "%s..%s" % (hx(lo), hx(hi)) if hi is not None else ">= %d" % lo
            self.e.add(d.line_of(key), "%s: %s = %s outside %s" % (what, key, hx(v), rng))
            return None if default is _NONE else default
        return v

    def text(self, d, key, what, default=""):
        if key not in d:
            return default
        v = d[key]
        if not isinstance(v, str):
            self.e.add(d.line_of(key), "%s: %s must be text, got %r" % (what, key, v))
            return default
        v = " ".join(v.split())
        if any(ord(c) > 126 for c in v):
            self.e.add(d.line_of(key), "%s: %s must be ASCII (it goes into C comments and strings)" % (what, key))
        if "*/" in v:
            self.e.add(d.line_of(key), "%s: %s must not contain '*/' (it goes into C comments)" % (what, key))
        return v

    def name(self, d, what):
        v = d.get("name")
        if not isinstance(v, str) or not NAME_RE.match(v):
            self.e.add(d.line_of("name"), "%s: name %r must be an identifier in capitals ([A-Z][A-Z0-9_]*)" % (what, v))
            return None
        return v

    def boolean(self, d, key, what, default):
        if key not in d:
            return default
        v = d[key]
        if not isinstance(v, bool):
            self.e.add(d.line_of(key), "%s: %s must be true or false, got %r" % (what, key, v))
            return default
        return v

    def bits(self, d, what, width):
        """Parse `bits:` (msb:lsb or a bit number); check against the container width."""
        if "bits" not in d:
            self.e.add(d.line, "%s: missing key 'bits'" % what)
            return None
        v = d["bits"]
        line = d.line_of("bits")
        if isinstance(v, int) and not isinstance(v, bool):
            msb = lsb = v
        elif isinstance(v, str) and re.match(r"^\s*\d+\s*:\s*\d+\s*$", v):
            msb, lsb = (int(x) for x in v.split(":"))
        else:
            self.e.add(line, "%s: bits %r must be msb:lsb or a bit number" % (what, v))
            return None
        if msb < lsb:
            self.e.add(line, "%s: bits %d:%d have msb below lsb" % (what, msb, lsb))
            return None
        if msb >= width:
            self.e.add(line, "%s: bits %d:%d lie outside the %d-bit container (allowed bits %d:0)"
                       % (what, msb, lsb, width, width - 1))
            return None
        return msb, lsb

    def values(self, d, what, field):
        if "values" not in d:
            return []
        v = d["values"]
        line = d.line_of("values")
        if not isinstance(v, dict) or not v:
            self.e.add(line, "%s: values must be a mapping {value: NAME, ...}" % what)
            return []
        out = []
        seen = set()
        for code, name in v.items():
            if isinstance(code, bool) or not isinstance(code, int):
                self.e.add(line, "%s: value %r must be an integer" % (what, code))
                continue
            if not isinstance(name, str) or not NAME_RE.match(name):
                self.e.add(line, "%s: value name %r must be an identifier in capitals" % (what, name))
                continue
            if code < 0 or code >= (1 << field.width):
                self.e.add(line, "%s: value %s = %s does not fit the %d-bit field (0..%s)"
                           % (what, name, hx(code), field.width, hx((1 << field.width) - 1)))
            if name in seen:
                self.e.add(line, "%s: duplicate value name %s" % (what, name))
            seen.add(name)
            out.append((code, name))
        return sorted(out)

    def seq(self, doc, key, what, line):
        v = doc.get(key)
        if not isinstance(v, list):
            self.e.add(line, "%s must be a list" % what)
            return []
        return v

    # ---- document ----
    def parse(self, doc):
        m = Model()
        if not isinstance(doc, dict):
            self.e.add(1, "the document must be a mapping")
            return m
        top = ("overview", "conventions", "bar0", "bar2", "pages", "sqe", "cqe", "admin_opcodes", "io_opcodes",
               "statuses", "features", "encodings", "pmu_events")
        self.keys(doc, "document", top)
        m.overview = self.text(doc, "overview", "document")
        conv = doc.get("conventions", [])
        if not isinstance(conv, list) or not all(isinstance(c, str) for c in conv):
            self.e.add(doc.line_of("conventions"), "conventions must be a list of sentences")
        else:
            m.conventions = [" ".join(c.split()) for c in conv]
        bar0 = self.mapping(doc.get("bar0"), "bar0", doc.line_of("bar0"))
        if bar0 is not None:
            self.keys(bar0, "bar0", ("size", "page_size"))
            m.bar0_size = self.integer(bar0, "size", "bar0", 1, 1 << 31, 0)
            m.page_size = self.integer(bar0, "page_size", "bar0", 1, 1 << 31, PAGE_4K)
            if m.page_size != PAGE_4K:
                self.e.add(bar0.line_of("page_size"), "bar0: page_size must be 0x1000 (the 4 KiB page the "
                           "MSI-X placement rule and host mappings use)")
            if m.bar0_size & (m.bar0_size - 1) or m.bar0_size < PAGE_4K:
                self.e.add(bar0.line_of("size"), "bar0: size %s must be a power of two >= 4 KiB (PCI BAR sizing)"
                           % hx(m.bar0_size))
        bar2 = self.mapping(doc.get("bar2"), "bar2", doc.line_of("bar2"))
        if bar2 is not None:
            self.keys(bar2, "bar2", ("description",))
            m.bar2 = self.text(bar2, "description", "bar2")
        for p in self.seq(doc, "pages", "pages", doc.line_of("pages")):
            page = self.page(p, doc.line_of("pages"))
            if page:
                m.pages.append(page)
        m.sqe_size, m.sqe_description, m.sqe = self.entry(doc, "sqe", 64)
        m.cqe_size, m.cqe_description, m.cqe = self.entry(doc, "cqe", 16)
        m.admin = self.commands(doc, "admin_opcodes", "admin")
        m.io = self.commands(doc, "io_opcodes", "io")
        m.statuses = self.simple_list(doc, "statuses", "status", "code", 15)
        m.features = self.features(doc)
        m.encodings = self.encodings(doc)
        m.pmu_events = self.simple_list(doc, "pmu_events", "PMU event", "id", 16, extra="counter")
        self.check_model(m)
        return m

    def page(self, p, line):
        p = self.mapping(p, "page", line)
        if p is None:
            return None
        pg = Page()
        pg.line = p.line
        pg.name = self.name(p, "page") or "?"
        what = "page %s" % pg.name
        self.keys(p, what, ("name", "offset", "description"), ("pages", "kind", "registers"))
        pg.offset = self.integer(p, "offset", what, 0, 1 << 31, 0)
        pg.pages = self.integer(p, "pages", what, 1, 1 << 19, 1)
        pg.kind = p.get("kind", "registers")
        if pg.kind not in PAGE_KINDS:
            self.e.add(p.line_of("kind"), "%s: kind %r not one of %s" % (what, pg.kind, ", ".join(PAGE_KINDS)))
        pg.description = self.text(p, "description", what)
        if pg.offset % PAGE_4K:
            self.e.add(p.line_of("offset"), "%s: offset %s is not 4 KiB aligned" % (what, hx(pg.offset)))
        regs = p.get("registers", [])
        if pg.kind.startswith("msix") and regs:
            self.e.add(p.line_of("registers"), "%s: an MSI-X region has no registers (the PCIe endpoint serves it)"
                       % what)
            regs = []
        if not isinstance(regs, list):
            self.e.add(p.line_of("registers"), "%s: registers must be a list" % what)
            regs = []
        for r in regs:
            reg = self.register(r, pg, p.line_of("registers"))
            if reg:
                pg.registers.append(reg)
        return pg

    def register(self, r, page, line):
        r = self.mapping(r, "register", line)
        if r is None:
            return None
        reg = Register()
        reg.page = page
        reg.line = r.line
        reg.name = self.name(r, "register in page %s" % page.name) or "?"
        what = "register %s" % reg.name
        self.keys(r, what, ("name", "offset", "access", "description"), ("width", "reset", "fields", "count", "stride"))
        reg.offset = self.integer(r, "offset", what, 0, 1 << 31, 0)
        reg.width = self.integer(r, "width", what, 0, 64, 32)
        if reg.width not in (32, 64):
            self.e.add(r.line_of("width"), "%s: width %d must be 32 or 64" % (what, reg.width))
            reg.width = 32
        reg.access = r.get("access", "RO")
        if reg.access not in ACCESS:
            self.e.add(r.line_of("access"), "%s: access %r not one of %s" % (what, reg.access, ", ".join(ACCESS)))
            reg.access = "RO"
        reg.description = self.text(r, "description", what)
        reg.count = self.integer(r, "count", what, 1, 1 << 16, 1)
        reg.stride = self.integer(r, "stride", what, 0, 1 << 20, 0)
        if reg.count > 1 and reg.stride < reg.nbytes:
            self.e.add(r.line_of("stride") if "stride" in r else r.line,
                       "%s: array of %d needs a stride >= %d bytes" % (what, reg.count, reg.nbytes))
            reg.count = 1
        if reg.count > 1 and reg.stride % reg.nbytes:
            self.e.add(r.line_of("stride"), "%s: stride %s must be a multiple of the register size (%d)"
                       % (what, hx(reg.stride), reg.nbytes))
        if reg.count == 1 and "stride" in r:
            self.e.add(r.line_of("stride"), "%s: stride given without count > 1" % what)
        if reg.count == 1:
            reg.stride = 0
        if reg.offset % reg.nbytes:
            self.e.add(r.line_of("offset"), "%s: offset %s is not aligned to its %d-bit width"
                       % (what, hx(reg.offset), reg.width))
        fields = r.get("fields", [])
        if not isinstance(fields, list):
            self.e.add(r.line_of("fields"), "%s: fields must be a list" % what)
            fields = []
        names = {}
        for f in fields:
            fld = self.field(f, reg, r.line_of("fields"))
            if fld is None:
                continue
            if fld.name in names:
                self.e.add(fld.line, "%s: duplicate field %s (first at line %d)" % (what, fld.name, names[fld.name]))
            names[fld.name] = fld.line
            for other in reg.fields:
                if other.mask & fld.mask:
                    self.e.add(fld.line, "%s: field %s (bits %s) overlaps field %s (bits %s)"
                               % (what, fld.name, fld.bits_text(), other.name, other.bits_text()))
            reg.fields.append(fld)
        reg.fields.sort(key=lambda f: f.lsb)
        # Reset: whole or per field; the two must agree and fit.
        wmask = mask_of(reg.width - 1, 0)
        field_reset = sum((f.reset or 0) << f.lsb for f in reg.fields)
        if "reset" in r:
            reg.reset = self.integer(r, "reset", what, 0, None, 0)
            if reg.reset & ~wmask:
                self.e.add(r.line_of("reset"), "%s: reset %s does not fit %d bits" % (what, hx(reg.reset), reg.width))
            if any(f.reset is not None for f in reg.fields) and reg.reset != field_reset:
                self.e.add(r.line_of("reset"), "%s: reset %s disagrees with its fields' resets (%s)"
                           % (what, hx(reg.reset), hx(field_reset)))
        else:
            reg.reset = field_reset
        defined = sum(f.mask for f in reg.fields) if reg.fields else wmask
        if reg.reset & ~defined & wmask:
            self.e.add(r.line_of("reset") if "reset" in r else r.line,
                       "%s: reset %s sets reserved bits %s (outside every field)"
                       % (what, hx(reg.reset), hx(reg.reset & ~defined & wmask)))
        if reg.fields:
            reg.writable_mask = sum(f.mask for f in reg.fields if f.access in WRITABLE)
            reg.self_clearing_mask = sum(f.mask for f in reg.fields if f.access == "WO" and reg.access == "RW")
        else:
            reg.writable_mask = wmask if reg.access in WRITABLE else 0
        return reg

    def field(self, f, reg, line):
        what0 = "register %s field" % reg.name
        f = self.mapping(f, what0, line)
        if f is None:
            return None
        fld = Field()
        fld.line = f.line
        fld.name = self.name(f, what0) or "?"
        what = "register %s field %s" % (reg.name, fld.name)
        self.keys(f, what, ("name", "bits", "description"), ("access", "reset", "values"))
        b = self.bits(f, what, reg.width)
        if b is None:
            return None
        fld.msb, fld.lsb = b
        fld.description = self.text(f, "description", what)
        fld.access = f.get("access", reg.access)
        if fld.access not in ACCESS:
            self.e.add(f.line_of("access"), "%s: access %r not one of %s" % (what, fld.access, ", ".join(ACCESS)))
            fld.access = reg.access
        elif fld.access not in FIELD_ACCESS_ALLOWED[reg.access]:
            self.e.add(f.line_of("access"), "%s: access %s not allowed in a %s register (allowed: %s)"
                       % (what, fld.access, reg.access, ", ".join(FIELD_ACCESS_ALLOWED[reg.access])))
        if "reset" in f:
            fld.reset = self.integer(f, "reset", what, 0, None, 0)
            if fld.reset >> fld.width:
                self.e.add(f.line_of("reset"), "%s: reset %s does not fit the %d-bit field (0..%s)"
                           % (what, hx(fld.reset), fld.width, hx((1 << fld.width) - 1)))
                fld.reset = 0
        fld.values = self.values(f, what, fld)
        return fld

    def dw_fields(self, items, what0, line, dw_lo, dw_hi, allow_within, allow_where=False):
        """Fields of command dwords: dw + bits (bits above 31 continue into dw+1)."""
        out = []
        if not isinstance(items, list):
            self.e.add(line, "%s must be a list" % what0)
            return out
        for f in items:
            f = self.mapping(f, what0, line)
            if f is None:
                continue
            fld = Field()
            fld.line = f.line
            fld.name = self.name(f, what0) or "?"
            what = "%s %s" % (what0, fld.name)
            opt = ["values", "encoding"] + (["within"] if allow_within else [])
            req = ["name", "bits", "description"] + (["in"] if allow_where else ["dw"])
            self.keys(f, what, req, opt)
            if allow_where:
                fld.where = f.get("in")
                if fld.where not in ("value", "value2", "result"):
                    self.e.add(f.line_of("in"), "%s: in %r must be value, value2 or result" % (what, fld.where))
                width = 64 if fld.where == "result" else 32
            else:
                fld.dw = self.integer(f, "dw", what, dw_lo, dw_hi, dw_lo)
                width = 64 if fld.dw < dw_hi else 32
            b = self.bits(f, what, width)
            if b is None:
                continue
            fld.msb, fld.lsb = b
            if not allow_where and fld.msb > 31 and fld.lsb % 32:
                self.e.add(f.line_of("bits"), "%s: a field spanning two dwords must start at bit 0" % what)
            fld.description = self.text(f, "description", what)
            fld.values = self.values(f, what, fld)
            fld.encoding = f.get("encoding")
            fld.within = f.get("within")
            out.append(fld)
        # Overlaps: compare absolute bit ranges; a field may overlap only the field it is `within`.
        seen = {}
        for fld in out:
            if fld.name in seen:
                self.e.add(fld.line, "%s: duplicate field %s (first at line %d)" % (what0, fld.name, seen[fld.name].line))
            seen[fld.name] = fld
        for fld in out:
            if fld.within is not None:
                parent = seen.get(fld.within)
                if parent is None or parent.within is not None:
                    self.e.add(fld.line, "%s %s: within %r names no top-level field" % (what0, fld.name, fld.within))
                    fld.within = None
                elif not self.abs_range_inside(fld, parent):
                    self.e.add(fld.line, "%s %s: bits lie outside its parent %s" % (what0, fld.name, parent.name))
                else:
                    parent.children.append(fld)
        for i, a in enumerate(out):
            for b2 in out[:i]:
                if a.within == b2.name or b2.within == a.name:
                    continue
                if self.abs_overlap(a, b2):
                    self.e.add(a.line, "%s %s (%s) overlaps %s (%s)"
                               % (what0, a.name, dw_bits_text(a), b2.name, dw_bits_text(b2)))
        return out

    @staticmethod
    def abs_range(f):
        base = 32 * (f.dw or 0) if f.where is None else {"value": 0, "value2": 64, "result": 128}.get(f.where, 0)
        return base + f.lsb, base + f.msb

    def abs_overlap(self, a, b):
        al, ah = self.abs_range(a)
        bl, bh = self.abs_range(b)
        return al <= bh and bl <= ah

    def abs_range_inside(self, a, parent):
        al, ah = self.abs_range(a)
        pl, ph = self.abs_range(parent)
        return pl <= al and ah <= ph

    def entry(self, doc, key, size):
        d = self.mapping(doc.get(key), key, doc.line_of(key))
        if d is None:
            return size, "", []
        self.keys(d, key, ("size", "description", "fields"))
        got = self.integer(d, "size", key, 1, 4096, size)
        if got != size:
            self.e.add(d.line_of("size"), "%s: size %d, the command processor's format is %d bytes" % (key, got, size))
        fields = self.dw_fields(d.get("fields", []), key.upper() + " field", d.line_of("fields"), 0,
                                size // 4 - 1, True)
        return size, self.text(d, "description", key), fields

    def commands(self, doc, key, queue):
        out = []
        for c in self.seq(doc, key, key, doc.line_of(key)):
            c = self.mapping(c, key + " entry", doc.line_of(key))
            if c is None:
                continue
            cmd = Command(queue)
            cmd.line = c.line
            cmd.name = self.name(c, key + " entry") or "?"
            what = "%s opcode %s" % (queue, cmd.name)
            self.keys(c, what, ("code", "name", "description"), ("result", "operands"))
            cmd.code = self.integer(c, "code", what, 0, 0xFF, 0)
            cmd.description = self.text(c, "description", what)
            cmd.result = self.text(c, "result", what)
            cmd.operands = self.dw_fields(c.get("operands", []), "%s operand" % what, c.line_of("operands"), 4, 15,
                                          False)
            out.append(cmd)
        self.unique(out, "%s opcode" % queue, "code", lambda x: x.code)
        self.unique(out, "%s opcode" % queue, "name", lambda x: x.name)
        return out

    def simple_list(self, doc, key, what0, code_key, bits, extra=None):
        out = []
        for s in self.seq(doc, key, key, doc.line_of(key)):
            s = self.mapping(s, what0, doc.line_of(key))
            if s is None:
                continue
            name = self.name(s, what0) or "?"
            what = "%s %s" % (what0, name)
            self.keys(s, what, (code_key, "name", "description") + ((extra,) if extra else ()))
            code = self.integer(s, code_key, what, 0, (1 << bits) - 1, _NONE)
            ex = self.text(s, extra, what) if extra else None
            if code is not None:
                out.append(Simple(code, name, self.text(s, "description", what), s.line, ex))
        self.unique(out, what0, code_key, lambda x: x.code)
        self.unique(out, what0, "name", lambda x: x.name)
        return out

    def features(self, doc):
        out = []
        for f in self.seq(doc, "features", "features", doc.line_of("features")):
            f = self.mapping(f, "feature", doc.line_of("features"))
            if f is None:
                continue
            ft = Feature()
            ft.line = f.line
            ft.name = self.name(f, "feature") or "?"
            what = "feature %s" % ft.name
            self.keys(f, what, ("fid", "name", "description", "set", "get"), ("fields",))
            ft.fid = self.integer(f, "fid", what, 1, 0xFF, 0)
            ft.set = self.boolean(f, "set", what, True)
            ft.get = self.boolean(f, "get", what, True)
            ft.description = self.text(f, "description", what)
            ft.fields = self.dw_fields(f.get("fields", []), "%s field" % what, f.line_of("fields"), 0, 0, False,
                                       allow_where=True)
            out.append(ft)
        self.unique(out, "feature", "fid", lambda x: x.fid)
        self.unique(out, "feature", "name", lambda x: x.name)
        return out

    def encodings(self, doc):
        out = []
        for en in self.seq(doc, "encodings", "encodings", doc.line_of("encodings")):
            en = self.mapping(en, "encoding", doc.line_of("encodings"))
            if en is None:
                continue
            enc = Encoding()
            enc.line = en.line
            enc.name = self.name(en, "encoding") or "?"
            what = "encoding %s" % enc.name
            self.keys(en, what, ("name", "title", "description", "values"))
            enc.title = self.text(en, "title", what)
            enc.description = self.text(en, "description", what)
            vals = en.get("values")
            if not isinstance(vals, list):
                self.e.add(en.line_of("values"), "%s: values must be a list" % what)
                vals = []
            for v in vals:
                v = self.mapping(v, "%s value" % what, en.line_of("values"))
                if v is None:
                    continue
                vname = self.name(v, "%s value" % what) or "?"
                self.keys(v, "%s value %s" % (what, vname), ("value", "name", "description"))
                code = self.integer(v, "value", "%s value %s" % (what, vname), 0, 0xFFFF, 0)
                enc.values.append(Simple(code, vname, self.text(v, "description", what), v.line))
            self.unique(enc.values, "%s value" % what, "value", lambda x: x.code)
            self.unique(enc.values, "%s value" % what, "name", lambda x: x.name)
            enc.values.sort(key=lambda x: x.code)
            out.append(enc)
        self.unique(out, "encoding", "name", lambda x: x.name)
        return out

    def unique(self, items, what, key_name, key):
        seen = {}
        for it in items:
            k = key(it)
            if k is None:
                continue  # already reported as invalid
            if k in seen:
                shown = hx(k) if isinstance(k, int) else k
                self.e.add(it.line, "%s %s: duplicate %s %s (first at line %d)"
                           % (what, it.name, key_name, shown, seen[k].line))
            else:
                seen[k] = it

    # ---- whole-map checks ----
    def check_model(self, m):
        e = self.e
        # Pages inside BAR0, not overlapping.
        spans = []
        for p in m.pages:
            if p.offset + p.size > m.bar0_size:
                e.add(p.line, "page %s (%s..%s) extends beyond BAR0 (size %s)"
                      % (p.name, hx(p.offset), hx(p.offset + p.size - 1), hx(m.bar0_size)))
            spans.append((p.offset, p.offset + p.size - 1, p))
        spans.sort(key=lambda s: s[0])
        for (a0, a1, pa), (b0, b1, pb) in zip(spans, spans[1:]):
            if b0 <= a1:
                e.add(pb.line, "page %s (%s..%s) overlaps page %s (%s..%s)"
                      % (pb.name, hx(b0), hx(b1), pa.name, hx(a0), hx(a1)))
        self.unique(m.pages, "page", "name", lambda x: x.name)
        self.unique(list(m.registers()), "register", "name", lambda x: x.name)
        # Register elements: inside their page, not crossing a 4 KiB page, not overlapping.
        elems = []
        for r in m.registers():
            p = r.page
            for i, off in r.elements():
                end = off + r.nbytes - 1
                label = r.name if r.count == 1 else "%s[%d]" % (r.name, i)
                if off // PAGE_4K != end // PAGE_4K:
                    e.add(r.line, "register %s (%s..%s) crosses a 4 KiB page boundary" % (label, hx(off), hx(end)))
                if off < p.offset or end >= p.offset + p.size:
                    e.add(r.line, "register %s at %s lies outside its page %s (%s..%s)"
                          % (label, hx(off), p.name, hx(p.offset), hx(p.offset + p.size - 1)))
                    break  # one message per array is enough
                elems.append((off, end, label, r))
        elems.sort(key=lambda x: x[0])
        for (a0, a1, la, ra), (b0, b1, lb, rb) in zip(elems, elems[1:]):
            if b0 <= a1:
                e.add(rb.line, "register %s (%s..%s) overlaps register %s (%s..%s)"
                      % (lb, hx(b0), hx(b1), la, hx(a0), hx(a1)))
        # PCIe Base Spec 7.7.2 (MSI-X Table/PBA): other registers must not share a naturally
        # aligned 4 KiB range with the MSI-X table or PBA, so that a hypervisor can trap those
        # pages while it maps the rest (doorbells above all) straight into a guest.
        msix_pages = {}
        for p in m.pages:
            if p.kind in ("msix_table", "msix_pba"):
                for k in range(p.pages):
                    msix_pages[p.offset // PAGE_4K + k] = p
        for off, end, label, r in elems:
            for frame in {off // PAGE_4K, end // PAGE_4K}:
                if frame in msix_pages:
                    kind = "doorbell" if r.page.kind == "doorbells" else "register"
                    e.add(r.line, "%s %s at %s shares the 4 KiB page %s with MSI-X region %s"
                          % (kind, label, hx(off), hx(frame * PAGE_4K), msix_pages[frame].name))
        # Encodings referenced by fields exist and fit.
        for what, fields in self.all_dw_fields(m):
            for f in fields:
                if f.encoding is None:
                    continue
                enc = m.encoding(f.encoding)
                if enc is None:
                    e.add(f.line, "%s %s: encoding %r is not defined under encodings" % (what, f.name, f.encoding))
                elif enc.values and enc.values[-1].code >> f.width:
                    e.add(f.line, "%s %s: encoding %s needs values up to %d, the %d-bit field holds 0..%d"
                          % (what, f.name, enc.name, enc.values[-1].code, f.width, (1 << f.width) - 1))
        # Fixed facts the other tables rely on.
        status = next((f for f in m.cqe if f.name == "STATUS"), None)
        if status is None:
            e.add(0, "cqe: a STATUS field is required")
        else:
            for s in m.statuses:
                if s.code >> status.width:
                    e.add(s.line, "status %s: code %s does not fit CQE.STATUS (%d bits)"
                          % (s.name, hx(s.code), status.width))
        if not any(s.code == 0 and s.name == "SUCCESS" for s in m.statuses):
            e.add(0, "statuses: code 0 must be SUCCESS")
        for ev in m.pmu_events:
            if ev.code == 0:
                e.add(ev.line, "PMU event %s: id 0 means 'no event' in PMU_EVTSEL" % ev.name)
        self.check_macros(m)

    @staticmethod
    def all_dw_fields(m):
        yield "SQE field", m.sqe
        yield "CQE field", m.cqe
        for c in m.admin + m.io:
            yield "%s opcode %s operand" % (c.queue, c.name), c.operands
        for f in m.features:
            yield "feature %s field" % f.name, f.fields

    def check_macros(self, m):
        """Every generated macro name must be unique: names from different tables meet in C."""
        seen = {}
        for name, line, _ in header_macros(m):
            name = name.split("(")[0]  # SOHU_PMU_EVTSEL(i) takes the name SOHU_PMU_EVTSEL
            if name in seen:
                self.e.add(line, "generated macro %s collides with the one from line %d" % (name, seen[name]))
            else:
                seen[name] = line


def dw_bits_text(f):
    if f.where is not None:
        return "%s[%s]" % (f.where, f.bits_text())
    if f.msb > 31:
        return "DW%d-%d" % (f.dw, f.dw + f.msb // 32) if f.width == 64 else "DW%d[%s]" % (f.dw, f.bits_text())
    return "DW%d[%s]" % (f.dw, f.bits_text())


def load(path, display):
    errors = Errors(display)
    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.load(fh, Loader=_Loader)  # noqa: S506 - _Loader is a safe loader
    except OSError as ex:
        errors.add(0, "cannot read: %s" % ex.strerror)
        return None, errors
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        errors.add(mark.line + 1 if mark else 0, "YAML: %s" % (getattr(ex, "problem", None) or ex))
        return None, errors
    model = Parser(errors).parse(doc)
    return model, errors


# --------------------------------------------------------------------------------------
# C header


def c32(v):
    return "0x%08Xu" % v


def c64(v):
    return "0x%016Xull" % v


def cmask(v, width):
    return c64(v) if width > 32 else c32(v)


def header_macros(m):
    """(name, yaml line, value text) for every macro of the header, in emission order."""
    out = []

    def add(name, line, value):
        out.append((name, line, value))

    add("SOHU_BAR0_SIZE", 0, c32(m.bar0_size))
    add("SOHU_BAR0_PAGE_SIZE", 0, c32(m.page_size))
    for p in m.pages:
        add("SOHU_PAGE_%s" % p.name, p.line, c32(p.offset))
        add("SOHU_PAGE_%s_SIZE" % p.name, p.line, c32(p.size))
    for r in m.registers():
        base = "SOHU_%s" % r.name
        if r.count > 1:
            add(base + "(i)", r.line, "(%s + (uint32_t)(i) * %s)" % (c32(r.offset), c32(r.stride)))
            add(base + "_COUNT", r.line, "%du" % r.count)
            add(base + "_STRIDE", r.line, c32(r.stride))
        else:
            add(base, r.line, c32(r.offset))
        add(base + "_RESET", r.line, cmask(r.reset, r.width))
        for f in r.fields:
            add("%s_%s_SHIFT" % (base, f.name), f.line, "%d" % f.lsb)
            add("%s_%s_MASK" % (base, f.name), f.line, cmask(f.mask, r.width))
            for v, vn in f.values:
                add("%s_%s_%s" % (base, f.name, vn), f.line, "%uu" % v)
    add("SOHU_SQE_SIZE", 0, "%du" % m.sqe_size)
    add("SOHU_CQE_SIZE", 0, "%du" % m.cqe_size)
    for prefix, fields in (("SOHU_SQE", m.sqe), ("SOHU_CQE", m.cqe)):
        for f in fields:
            dw_field_macros(add, "%s_%s" % (prefix, f.name), f)
    for queue, cmds in (("ADMIN", m.admin), ("IO", m.io)):
        for c in cmds:
            add("SOHU_%s_OP_%s" % (queue, c.name), c.line, "0x%02Xu" % c.code)
        for c in cmds:
            for f in c.operands:
                dw_field_macros(add, "SOHU_%s_%s_%s" % (queue, c.name, f.name), f)
    for s in m.statuses:
        add("SOHU_STATUS_%s" % s.name, s.line, "0x%04Xu" % s.code)
    for ft in m.features:
        add("SOHU_FEAT_%s" % ft.name, ft.line, "0x%02Xu" % ft.fid)
        for f in ft.fields:
            add("SOHU_FEAT_%s_%s_SHIFT" % (ft.name, f.name), f.line, "%d" % f.lsb)
            add("SOHU_FEAT_%s_%s_MASK" % (ft.name, f.name), f.line, cmask(f.mask, 64 if f.msb > 31 else 32))
            for v, vn in f.values:
                add("SOHU_FEAT_%s_%s_%s" % (ft.name, f.name, vn), f.line, "%uu" % v)
    for enc in m.encodings:
        for v in enc.values:
            add("SOHU_%s_%s" % (enc.name, v.name), v.line, "%uu" % v.code)
        add("SOHU_%s_COUNT" % enc.name, enc.line, "%du" % len(enc.values))
    for ev in m.pmu_events:
        add("SOHU_PMU_EVT_%s" % ev.name, ev.line, "%uu" % ev.code)
    return out


def dw_field_macros(add, base, f):
    add(base + "_DW", f.line, "%d" % f.dw)
    add(base + "_SHIFT", f.line, "%d" % f.lsb)
    add(base + "_MASK", f.line, cmask(f.mask, 64 if f.msb > 31 else 32))
    for v, vn in f.values:
        add("%s_%s" % (base, vn), f.line, "%uu" % v)


def banner(comment, yaml_name):
    lines = [
        "GENERATED FILE - DO NOT EDIT.",
        "Generated from %s by %s." % (yaml_name, SCRIPT_NAME),
        "Edit the YAML, then run python3 %s (the tests run it with --check)." % SCRIPT_NAME,
    ]
    if comment == "c":
        return "/*\n" + "".join(" * %s\n" % ln for ln in lines) + " */\n"
    if comment == "cpp":
        return "".join("// %s\n" % ln for ln in lines)
    return "<!-- " + " ".join(lines) + " -->\n"


def c_comment(text, indent=""):
    """A C comment wrapped to 100 columns."""
    width = 100 - len(indent) - 3
    lines = textwrap.wrap(text, width) or [""]
    if len(lines) == 1 and len(lines[0]) + 6 <= width + 3:
        return "%s/* %s */\n" % (indent, lines[0])
    return "%s/*\n%s%s */\n" % (indent, "".join("%s * %s\n" % (indent, ln) for ln in lines), indent)


def emit_header(m, yaml_name):
    macros = {name: value for name, _, value in header_macros(m)}
    o = [banner("c", yaml_name)]
    o.append(c_comment(
        "Sohu-class device: BAR0 register offsets and fields, the submission and completion entry layouts, "
        "opcodes, status codes, feature ids and encodings (docs/registers.md). C99 and C++; only <stdint.h>. "
        "Offsets are bytes from the start of BAR0. For each field _SHIFT is its lowest bit and _MASK the mask "
        "already shifted into place; value macros (e.g. SOHU_CTRL_SHN_NORMAL) are unshifted field values. "
        "Command fields: _DW is the dword index in the entry; a _MASK wider than 32 bits is a 64-bit "
        "little-endian value starting at dword _DW."))
    o.append("#ifndef SOHUSIM_MODELS_SOHU_REGS_H\n#define SOHUSIM_MODELS_SOHU_REGS_H\n\n#include <stdint.h>\n")

    def d(name):
        o.append("#define %s %s\n" % (name, macros[name]))

    def section(title):
        o.append("\n" + c_comment("==== %s ====" % title))

    section("BAR0 layout: %d KiB, 4 KiB pages" % (m.bar0_size // 1024))
    d("SOHU_BAR0_SIZE")
    d("SOHU_BAR0_PAGE_SIZE")
    for p in m.pages:
        o.append(c_comment("%s: %s, %d page%s" % (p.name, p.kind, p.pages, "s" if p.pages > 1 else "")))
        d("SOHU_PAGE_%s" % p.name)
        d("SOHU_PAGE_%s_SIZE" % p.name)
    for p in m.pages:
        if not p.registers:
            continue
        section("page %s (0x%05X)" % (p.name, p.offset))
        o.append(c_comment(p.description))
        for r in p.registers:
            base = "SOHU_%s" % r.name
            arr = "" if r.count == 1 else ", array of %d, stride 0x%X" % (r.count, r.stride)
            o.append("\n" + c_comment("%s (%d-bit %s%s): %s" % (r.name, r.width, r.access, arr, r.description)))
            if r.count > 1:
                d(base + "(i)")
                d(base + "_COUNT")
                d(base + "_STRIDE")
            else:
                d(base)
            d(base + "_RESET")
            for f in r.fields:
                acc = "" if f.access == r.access else " (%s)" % f.access
                o.append(c_comment("[%s] %s%s: %s" % (f.bits_text(), f.name, acc, f.description)))
                d("%s_%s_SHIFT" % (base, f.name))
                d("%s_%s_MASK" % (base, f.name))
                for v, vn in f.values:
                    d("%s_%s_%s" % (base, f.name, vn))
    for title, prefix, size_macro, fields in (("submission entry", "SOHU_SQE", "SOHU_SQE_SIZE", m.sqe),
                                              ("completion entry", "SOHU_CQE", "SOHU_CQE_SIZE", m.cqe)):
        section(title)
        d(size_macro)
        for f in fields:
            dw_field_lines(o, d, "%s_%s" % (prefix, f.name), f)
    for queue, label, cmds in (("ADMIN", "admin", m.admin), ("IO", "I/O", m.io)):
        section("%s opcodes" % label)
        for c in cmds:
            o.append(c_comment("%s: %s" % (c.name, c.description)))
            d("SOHU_%s_OP_%s" % (queue, c.name))
        for c in cmds:
            if c.operands:
                section("%s %s operands" % (label, c.name))
            for f in c.operands:
                dw_field_lines(o, d, "SOHU_%s_%s_%s" % (queue, c.name, f.name), f)
    section("status codes (CQE STATUS)")
    for s in m.statuses:
        o.append(c_comment("%s: %s" % (s.name, s.description)))
        d("SOHU_STATUS_%s" % s.name)
    section("feature ids (SET_FEATURES / GET_FEATURES)")
    for ft in m.features:
        o.append(c_comment("%s: %s" % (ft.name, ft.description)))
        d("SOHU_FEAT_%s" % ft.name)
        for f in ft.fields:
            o.append(c_comment("%s[%s] %s: %s" % (f.where, f.bits_text(), f.name, f.description)))
            d("SOHU_FEAT_%s_%s_SHIFT" % (ft.name, f.name))
            d("SOHU_FEAT_%s_%s_MASK" % (ft.name, f.name))
            for v, vn in f.values:
                d("SOHU_FEAT_%s_%s_%s" % (ft.name, f.name, vn))
    for enc in m.encodings:
        section("%s: %s" % (enc.name, enc.description))
        for v in enc.values:
            d("SOHU_%s_%s" % (enc.name, v.name))
        d("SOHU_%s_COUNT" % enc.name)
    section("PMU event ids (PMU_EVTSEL.EVENT)")
    for ev in m.pmu_events:
        o.append(c_comment("%s: %s (statistics %s)" % (ev.name, ev.description, ev.extra)))
        d("SOHU_PMU_EVT_%s" % ev.name)
    o.append("\n#endif /* SOHUSIM_MODELS_SOHU_REGS_H */\n")
    return "".join(o)


def dw_field_lines(o, d, base, f):
    extra = " (%s encoding)" % f.encoding if f.encoding else ""
    o.append(c_comment("%s %s: %s%s" % (dw_bits_text(f), f.name, f.description, extra)))
    d(base + "_DW")
    d(base + "_SHIFT")
    d(base + "_MASK")
    for v, vn in f.values:
        d("%s_%s" % (base, vn))


# --------------------------------------------------------------------------------------
# C++ table


def cpp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


KIND_ENUM = {"registers": "Registers", "doorbells": "Doorbells", "msix_table": "MsixTable", "msix_pba": "MsixPba"}


def command_defined_masks(m, cmd):
    """Per dword, the bits a command defines; every other bit is reserved (INVALID_FIELD)."""
    masks = [0] * (m.sqe_size // 4)
    for f in m.sqe + cmd.operands:
        if f.children:
            continue  # a container: only its sub-fields are defined bits
        full = f.mask
        masks[f.dw] |= full & 0xFFFFFFFF
        if f.msb > 31:
            masks[f.dw + 1] |= full >> 32
    return masks


def emit_table(m, yaml_name):
    o = [banner("cpp", yaml_name)]
    o.append("//\n// Included once, by device/src/frontend/register_map.cpp, after register_map.hpp (which declares\n"
             "// the element types). Order of kRegisters: by page, then by offset as in the YAML.\n\n")
    o.append("namespace sohusim::device::regmap_generated {\n\n")
    o.append("inline constexpr std::uint32_t kBar0Size = 0x%Xu;\n\n" % m.bar0_size)
    o.append("// { name, offset, size, kind, description }\n")
    o.append("inline constexpr PageDesc kPages[] = {\n")
    for p in m.pages:
        o.append("    {%s, 0x%05Xu, 0x%05Xu, PageKind::%s, %s},\n"
                 % (cpp_str(p.name), p.offset, p.size, KIND_ENUM[p.kind], cpp_str(p.description)))
    o.append("};\n\n")
    o.append("// { name, offset, width_bits, access, reset, writable_mask, count, stride, description,\n"
             "//   self_clearing_mask }\n")
    o.append("inline constexpr RegisterDesc kRegisters[] = {\n")
    for r in m.registers():
        o.append("    {%s, 0x%05Xu, %d, Access::%s, 0x%Xull, 0x%Xull, %d, 0x%Xu,\n     %s, 0x%Xull},\n"
                 % (cpp_str(r.name), r.offset, r.width, r.access, r.reset, r.writable_mask, r.count, r.stride,
                    cpp_str(r.description), r.self_clearing_mask))
    o.append("};\n\n")
    o.append("// { code, name, description }\n")
    o.append("inline constexpr StatusDesc kStatuses[] = {\n")
    for s in sorted(m.statuses, key=lambda x: x.code):
        o.append("    {0x%02Xu, %s, %s},\n" % (s.code, cpp_str(s.name), cpp_str(s.description)))
    o.append("};\n\n")
    o.append("// { id, name, counter_glob, description }; \"dev\" in the glob stands for the device's prefix\n")
    o.append("inline constexpr PmuEventDesc kPmuEvents[] = {\n")
    for ev in sorted(m.pmu_events, key=lambda x: x.code):
        o.append("    {%du, %s, %s, %s},\n" % (ev.code, cpp_str(ev.name), cpp_str(ev.extra), cpp_str(ev.description)))
    o.append("};\n\n")
    o.append("// { queue, opcode, name, defined_mask[dword] } - bits outside defined_mask are reserved\n")
    o.append("inline constexpr CommandDesc kCommands[] = {\n")
    for cmd in m.admin + m.io:
        masks = command_defined_masks(m, cmd)
        rows = [", ".join("0x%08Xu" % x for x in masks[i:i + 8]) for i in range(0, len(masks), 8)]
        o.append("    {CommandQueue::%s, 0x%02Xu, %s,\n     {%s}},\n"
                 % ("Admin" if cmd.queue == "admin" else "Io", cmd.code, cpp_str(cmd.name), ",\n      ".join(rows)))
    o.append("};\n\n")
    o.append("}  // namespace sohusim::device::regmap_generated\n")
    return "".join(o)


# --------------------------------------------------------------------------------------
# Markdown


def md(s):
    return s.replace("|", "\\|")


def hexw(v, digits):
    return "0x%0*X" % (digits, v)


def emit_doc(m, yaml_name):
    o = [banner("md", yaml_name), "\n# Device registers and command formats\n\n"]
    o.append(m.overview.strip() + "\n\n")
    o.append("Conventions:\n\n")
    for c in m.conventions:
        o.append("- %s\n" % c)
    o.append("\nAccess types: RO read-only (writes ignored); RW read/write; RW1C write 1 to clear; WO "
             "write-only (reads 0); RC read clears. A WO field inside an RW register is an action bit: "
             "writing 1 triggers it and it always reads 0. Resets are the values after power-on and "
             "after CTRL.RST; \"device\" in a description means the device fills the value in from its "
             "configuration.\n\n")
    o.append("The C header `regmap/include/sohusim/regmap/sohu_regs.h` names everything below as "
             "`SOHU_<REGISTER>`, `SOHU_<REGISTER>_<FIELD>_SHIFT`/`_MASK`, `SOHU_SQE_<FIELD>_DW`, "
             "`SOHU_IO_OP_<NAME>`, `SOHU_STATUS_<NAME>` and so on.\n\n")
    if m.bar2:
        o.append("**BAR2.** %s\n\n" % m.bar2)
    o.append("## Page map\n\nBAR0 is %d KiB (0x%X bytes) in 4 KiB pages.\n\n" % (m.bar0_size // 1024, m.bar0_size))
    o.append("| offset | end | name | kind | contents |\n|---|---|---|---|---|\n")
    cursor = 0
    for p in sorted(m.pages, key=lambda x: x.offset):
        if p.offset > cursor:
            o.append("| %s | %s | - | reserved | reads 0, writes ignored |\n"
                     % (hexw(cursor, 5), hexw(p.offset - 1, 5)))
        o.append("| %s | %s | %s | %s | %s |\n"
                 % (hexw(p.offset, 5), hexw(p.offset + p.size - 1, 5), p.name, p.kind, md(p.description)))
        cursor = p.offset + p.size
    if cursor < m.bar0_size:
        o.append("| %s | %s | - | reserved | reads 0, writes ignored |\n"
                 % (hexw(cursor, 5), hexw(m.bar0_size - 1, 5)))
    for p in m.pages:
        o.append("\n## %s (0x%05X)\n\n%s\n" % (p.name, p.offset, p.description))
        if not p.registers:
            o.append("\nNo registers: this region is served by the PCIe endpoint's MSI-X model.\n")
            continue
        o.append("\n| offset | name | width | access | reset | description |\n|---|---|---|---|---|---|\n")
        for r in p.registers:
            off = hexw(r.offset, 5)
            if r.count > 1:
                off += " + i x 0x%X (i < %d)" % (r.stride, r.count)
            name = r.name if r.count == 1 else "%s(i)" % r.name
            o.append("| %s | %s | %d | %s | %s | %s |\n"
                     % (off, name, r.width, r.access, hexw(r.reset, 16 if r.width == 64 else 8), md(r.description)))
        rows = [(r, f) for r in p.registers for f in r.fields]
        if rows:
            o.append("\nFields:\n\n| register | bits | field | access | reset | description |\n"
                     "|---|---|---|---|---|---|\n")
            for r, f in rows:
                desc = f.description
                if f.values:
                    desc += " Values: " + ", ".join("%d %s" % (v, vn) for v, vn in f.values) + "."
                o.append("| %s | %s | %s | %s | %s | %s |\n"
                         % (r.name, f.bits_text(), f.name, f.access, "0x%X" % ((r.reset & f.mask) >> f.lsb),
                            md(desc)))
    o.append("\n## Submission entry (%d bytes)\n\n%s\n\n" % (m.sqe_size, m.sqe_description))
    o.append(dw_table(m.sqe, m.sqe_size // 4, reserved_from=4))
    o.append("\nDW4-DW15 carry the operands of each command (below).\n")
    o.append("\n## Completion entry (%d bytes)\n\n%s\n\n" % (m.cqe_size, m.cqe_description))
    o.append(dw_table(m.cqe, m.cqe_size // 4))
    for title, queue, cmds in (("Admin commands", "ADMIN", m.admin), ("I/O commands", "IO", m.io)):
        o.append("\n## %s\n\nOperand bits not listed are reserved: they must be 0, or the command completes "
                 "with INVALID_FIELD.\n\n| opcode | name | description |\n|---|---|---|\n" % title)
        for c in cmds:
            o.append("| 0x%02X | %s | %s |\n" % (c.code, c.name, md(c.description)))
        for c in cmds:
            o.append("\n### %s (0x%02X)\n\n%s\n" % (c.name, c.code, c.description))
            if c.result:
                o.append("\nResult: %s\n" % c.result)
            if c.operands:
                o.append("\n| dword | bits | operand | description |\n|---|---|---|---|\n")
                for f in sorted(c.operands, key=lambda x: (x.dw, x.lsb)):
                    o.append("| %s | %s | %s | %s |\n" % (dw_text(f), bits_in_dw(f), f.name, md(field_desc(f))))
            else:
                o.append("\nNo operands (DW4-DW15 reserved).\n")
    o.append("\n## Status codes\n\nCQE STATUS, 15 bits; 0 is success.\n\n| code | name | meaning |\n|---|---|---|\n")
    for s in sorted(m.statuses, key=lambda x: x.code):
        o.append("| 0x%02X | %s | %s |\n" % (s.code, s.name, md(s.description)))
    o.append("\n## Features\n\nSET_FEATURES carries `value` in DW7 and `value2` in DW8; GET_FEATURES returns "
             "them in RESULT[31:0] and RESULT[63:32].\n\n| FID | name | set | get | description | fields |\n"
             "|---|---|---|---|---|---|\n")
    for ft in m.features:
        fields = "<br>".join("%s[%s] %s: %s" % (f.where, f.bits_text(), f.name, field_desc(f)) for f in ft.fields)
        o.append("| 0x%02X | %s | %s | %s | %s | %s |\n"
                 % (ft.fid, ft.name, "yes" if ft.set else "no", "yes" if ft.get else "no", md(ft.description),
                    md(fields)))
    o.append("\n## Encodings\n")
    for enc in m.encodings:
        users = ["%s %s.%s" % ("admin" if c.queue == "admin" else "I/O", c.name, f.name)
                 for c in m.admin + m.io for f in c.operands if f.encoding == enc.name]
        o.append("\n### %s (%s)\n\n%s" % (enc.title, enc.name, enc.description))
        if users:
            o.append(" Used by %s." % ", ".join(users))
        o.append("\n\n| value | name | meaning |\n|---|---|---|\n")
        for v in enc.values:
            o.append("| %d | %s | %s |\n" % (v.code, v.name, md(v.description)))
    o.append("\n## PMU events\n\nEvent ids for PMU_EVTSEL.EVENT and PMU_CONFIG. Each counts the sum of the "
             "device statistics matching the glob (counters/glob.hpp syntax), `dev` standing for the "
             "device's own prefix.\n\n| id | name | statistics | description |\n|---|---|---|---|\n")
    for ev in sorted(m.pmu_events, key=lambda x: x.code):
        o.append("| %d | %s | `%s` | %s |\n" % (ev.code, ev.name, ev.extra, md(ev.description)))
    return "".join(o)


def bits_text(msb, lsb):
    return "%d" % lsb if msb == lsb else "%d:%d" % (msb, lsb)


def dw_text(f):
    if f.msb > 31:
        return "DW%d-DW%d" % (f.dw, f.dw + 1)
    return "DW%d" % f.dw


def bits_in_dw(f):
    if f.msb > 31 and f.lsb == 0 and f.msb == 63:
        return "63:0"
    return f.bits_text()


def field_desc(f):
    d = f.description
    if f.encoding:
        d += " Encoding: %s." % f.encoding
    if f.values:
        d += " Values: " + ", ".join("%s %s" % ("0x%X" % v if v > 9 else v, vn) for v, vn in f.values) + "."
    return d


def dw_table(fields, ndw, reserved_from=None):
    """Per dword: its fields in bit order and the reserved gaps between them."""
    o = ["| dword | bits | field | description |\n|---|---|---|---|\n"]
    top = [f for f in fields if f.within is None]
    limit = reserved_from if reserved_from is not None else ndw
    dw = 0
    while dw < limit:
        here = sorted((f for f in top if f.dw == dw), key=lambda x: x.lsb)
        if not here:
            o.append("| DW%d | 31:0 | reserved | must be 0 |\n" % dw)
            dw += 1
            continue
        bit = 0
        for f in here:
            if f.lsb > bit:
                o.append("| DW%d | %s | reserved | must be 0 |\n" % (dw, bits_text(f.lsb - 1, bit)))
            o.append("| %s | %s | %s | %s |\n" % (dw_text(f), bits_in_dw(f), f.name, md(f.description)))
            sub = f.lsb
            for ch in sorted(f.children, key=lambda x: x.lsb):
                if ch.lsb > sub:
                    o.append("| DW%d | %s | %s.reserved | must be 0 |\n" % (dw, bits_text(ch.lsb - 1, sub), f.name))
                o.append("| %s | %s | %s.%s | %s |\n" % (dw_text(ch), ch.bits_text(), f.name, ch.name,
                                                         md(ch.description)))
                sub = ch.msb + 1
            if f.children and sub <= f.msb:
                o.append("| DW%d | %s | %s.reserved | must be 0 |\n" % (dw, bits_text(f.msb, sub), f.name))
            bit = f.msb + 1
        if bit < 32 and max(f.msb for f in here) <= 31:
            o.append("| DW%d | %s | reserved | must be 0 |\n" % (dw, bits_text(31, bit)))
        dw += 2 if any(f.msb > 31 for f in here) else 1
    return "".join(o)


# --------------------------------------------------------------------------------------
# Driver


def display_name(path):
    """How outputs name the YAML: repository-relative when inside the repository, so that
    generated text does not depend on where the checkout lives."""
    ap = os.path.abspath(path)
    rel = os.path.relpath(ap, REPO)
    if not rel.startswith(".."):
        return rel.replace(os.sep, "/")
    return os.path.basename(ap)


def generate(yaml_path):
    name = display_name(yaml_path)
    model, errors = load(yaml_path, name)
    if errors:
        return None, errors
    return {
        OUT_HEADER: emit_header(model, name),
        OUT_TABLE: emit_table(model, name),
        OUT_DOC: emit_doc(model, name),
    }, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description="Validate the register map YAML and generate the header, the "
                                 "decoder table and the documentation.")
    ap.add_argument("--yaml", default=DEFAULT_YAML, help="register map (default: %(default)s)")
    ap.add_argument("--out-dir", default=REPO, help="root the outputs are written under (default: the repository)")
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = ap.parse_args(argv)

    outputs, errors = generate(args.yaml)
    if outputs is None:
        for line in errors.lines():
            sys.stderr.write(line + "\n")
        sys.stderr.write("gen_regmap.py: %d error(s); nothing written\n" % len(errors.items))
        return 2

    drift = []
    for rel, text in outputs.items():
        path = os.path.join(args.out_dir, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        except OSError:
            old = None
        if args.check:
            if old != text:
                drift.append(rel)
                diff = difflib.unified_diff((old or "").splitlines(True), text.splitlines(True),
                                            "committed/" + rel, "generated/" + rel)
                sys.stdout.writelines(diff)
                if old is None:
                    sys.stdout.write("(committed/%s is missing)\n" % rel)
        elif old != text:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            sys.stdout.write("wrote %s\n" % path)
    if drift:
        sys.stderr.write("gen_regmap.py --check: %s out of date with %s; run python3 %s\n"
                         % (", ".join(drift), display_name(args.yaml), SCRIPT_NAME))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
