#!/usr/bin/env python3
"""Where a Perfetto trace written by sohusim spends its bytes.

    scripts/trace_sizes.py t.pftrace [--top N]

Reads the protobuf wire format directly (no protobuf package needed): every TracePacket is
charged to the track its TrackEvent names, and tracks are grouped by name with the digits of
device, engine and lane numbers folded ("dev* / me*", "dma"), so that a system's 8 devices x
32 engines read as one line. Prints, per group, the events and bytes (packet framing included)
and the flow ids the events carry. Field numbers are Perfetto's public ones
(tests/counters/perfetto_subset.proto). Used for the trace-size table of docs/trace.md.
"""
import argparse
import re
import sys
from collections import defaultdict

# TracePacket fields
PKT_TRACK_EVENT, PKT_TRACK_DESCRIPTOR = 11, 60
# TrackEvent fields
TE_TRACK_UUID, TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS = 11, 47, 48
# TrackDescriptor fields
TD_UUID, TD_NAME, TD_PROCESS, TD_THREAD, TD_PARENT = 1, 2, 3, 4, 5
PROCESS_NAME, THREAD_NAME = 6, 5


def varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def fields(buf, start, end):
    """Yields (field number, wire type, value or (begin, end) of a length-delimited field)."""
    i = start
    while i < end:
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
            yield number, wire, value
        elif wire == 1:
            yield number, wire, (i, i + 8)
            i += 8
        elif wire == 2:
            length, i = varint(buf, i)
            yield number, wire, (i, i + length)
            i += length
        elif wire == 5:
            yield number, wire, (i, i + 4)
            i += 4
        else:
            raise ValueError("unsupported wire type %d at byte %d" % (wire, i))


def text(buf, span):
    return bytes(buf[span[0]:span[1]]).decode("utf-8", "replace")


def fold(name):
    name = re.sub(r" #\d+$", "", name)  # async lanes
    return re.sub(r"\d+", "*", name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    with open(a.trace, "rb") as f:
        buf = memoryview(f.read())
    tracks = {}  # uuid -> (name, parent uuid, process name)
    groups = defaultdict(lambda: [0, 0, 0])  # group -> events, bytes, flow ids
    total = other = 0
    for number, wire, span in fields(buf, 0, len(buf)):
        if number != 1 or wire != 2:
            raise SystemExit("%s: not a Perfetto trace (top-level field %d)" % (a.trace, number))
        size = span[1] - span[0] + 2
        total += size
        event = descriptor = None
        for n, w, v in fields(buf, span[0], span[1]):
            if n == PKT_TRACK_EVENT and w == 2:
                event = v
            elif n == PKT_TRACK_DESCRIPTOR and w == 2:
                descriptor = v
        if descriptor is not None:
            uuid, name, parent, process = 0, "", 0, None
            for n, w, v in fields(buf, descriptor[0], descriptor[1]):
                if n == TD_UUID:
                    uuid = v
                elif n == TD_NAME:
                    name = text(buf, v)
                elif n == TD_PARENT:
                    parent = v
                elif n in (TD_PROCESS, TD_THREAD):
                    for n2, _, v2 in fields(buf, v[0], v[1]):
                        if n == TD_PROCESS and n2 == PROCESS_NAME:
                            process = text(buf, v2)
                            name = name or process
                        elif n == TD_THREAD and n2 == THREAD_NAME:
                            name = text(buf, v2)
            tracks[uuid] = (name, parent, process)
        if event is None:
            other += size
            continue
        track, flows = 0, 0
        for n, w, v in fields(buf, event[0], event[1]):
            if n == TE_TRACK_UUID:
                track = v
            elif n in (TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS):
                flows += 1 if w == 1 else (v[1] - v[0]) // 8
        name, parent, process = tracks.get(track, ("?", 0, None))
        owner = parent
        while process is None and owner in tracks:
            _, owner_parent, process = tracks[owner]
            owner = owner_parent
        g = groups["%s / %s" % (fold(process or "?"), fold(name))]
        g[0] += 1
        g[1] += size
        g[2] += flows
    events = sum(g[0] for g in groups.values())
    print("%s: %.1f MB, %.2f M events, %.2f M flow ids; descriptors, interning and clocks %.1f MB"
          % (a.trace, total / 1e6, events / 1e6, sum(g[2] for g in groups.values()) / 1e6, other / 1e6))
    print("%-44s %10s %10s %10s" % ("track group", "events", "MB", "flow ids"))
    for name, (n, size, flows) in sorted(groups.items(), key=lambda x: -x[1][1])[:a.top]:
        print("%-44s %10d %10.1f %10d" % (name[:44], n, size / 1e6, flows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
