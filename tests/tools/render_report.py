#!/usr/bin/env python3
"""Renders sohusim's reports for real and checks what came out.

    render_report.py REPORT.html GRAPH.dot [--ids ID,ID,...] [--keep DIR]
    render_report.py REPORT.html - --ids ID,...     (no graph: a run without ops, e.g. serving)
    render_report.py --example BIN [--keep DIR]

The HTML report is opened in headless Chromium (Debian's `chromium`): a screenshot must be a
real picture (not blank, not one colour, the report's verdict colours present) and the DOM
Chromium built must hold each chart, <svg id=...>, of --ids (by default the five charts of
report_html.hpp). The DOT file is laid out by Graphviz (`dot -Tsvg`): the SVG must hold every
node and edge of the DOT file and the critical path in red, within a time budget.

--example BIN runs BIN DIR (tests/tools/report_example.cpp), which writes a small and a big
example (report.html, graph.dot, report_big.html, graph_big.dot) into DIR, and checks them
all. `sohusim report` output can be checked the same way by naming its files.

When chromium or dot are missing, the script installs them with scripts/install-deps.sh
scripts/debian-packages-test.txt (as `scripts/quickstart.sh test` does); only if that is not
possible (no root, no sudo, no network) does it skip, with exit status 77 (CTest's
SKIP_RETURN_CODE) and a message saying what is missing. Exit 1 on a failed check.
$CHROMIUM names another Chromium or Chrome binary.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

SKIP = 77
DEFAULT_IDS = ["verdict-share", "timeline", "utilization", "roofline", "stalls"]
# The verdict palette of counters/src/report_common.hpp (compute, HBM, PCIe, interconnect,
# latency, host) and the critical path's red.
VERDICT_COLOURS = [(0x4E, 0x79, 0xA7), (0xF2, 0x8E, 0x2B), (0xB0, 0x7A, 0xA1), (0x76, 0xB7, 0xB2),
                   (0xBA, 0xB0, 0xAC), (0xED, 0xC9, 0x48)]
CRITICAL = "#d62728"
CHROMIUM_TIMEOUT = 90
DOT_BUDGET_S = 30


class Failure(Exception):
    pass


def source_dir():
    env = os.environ.get("SOHUSIM_SOURCE_DIR")
    if env:
        return env
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def find_chromium():
    if "CHROMIUM" in os.environ:  # another build of Chromium (or Chrome) by path
        path = os.environ["CHROMIUM"]
        return path if os.access(path, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def have_pil():
    try:
        import PIL.Image  # noqa: F401
        return True
    except ImportError:
        return False


def system_python_with_pil():
    """The Debian python3 when it has PIL and this interpreter (a virtualenv, pyenv) has not."""
    system = "/usr/bin/python3"
    if have_pil() or os.environ.get("RENDER_REPORT_REEXEC") or not os.access(system, os.X_OK):
        return None
    if os.path.realpath(sys.executable) == os.path.realpath(system):
        return None
    ok = subprocess.run([system, "-c", "import PIL.Image"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0
    return system if ok else None


def ensure_tools():
    """Returns (chromium, dot); installs them when missing; exits 77 when that fails."""
    for attempt in (0, 1):
        system = system_python_with_pil()
        if system:  # PIL is there, for the system's python: run under it
            os.environ["RENDER_REPORT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        if attempt == 0 and not (find_chromium() and shutil.which("dot") and have_pil()):
            install()
    chromium, dot = find_chromium(), shutil.which("dot")
    if not chromium or not dot:
        print("render_report: SKIPPED: %s not installed and could not be installed; run "
              "scripts/install-deps.sh scripts/debian-packages-test.txt as root, or "
              "scripts/quickstart.sh test" % " and ".join(n for n, ok in (("chromium", chromium), ("dot", dot))
                                                         if not ok))
        sys.exit(SKIP)
    if not have_pil():
        print("render_report: python3-pil not available: the screenshot is checked without pixel statistics")
    return chromium, dot


def install():
    chromium, dot = find_chromium(), shutil.which("dot")
    root = source_dir()
    script = os.path.join(root, "scripts", "install-deps.sh")
    lst = os.path.join(root, "scripts", "debian-packages-test.txt")
    missing = [n for n, ok in (("chromium", chromium), ("graphviz (dot)", dot), ("python3-pil", have_pil())) if not ok]
    print("render_report: missing %s; installing with %s %s" % (", ".join(missing), script, lst), flush=True)
    try:
        r = subprocess.run(["bash", script, lst], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=900)
        if r.returncode != 0:
            print(r.stdout)
            print("render_report: installing failed (exit %d)" % r.returncode)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("render_report: installing failed: %s" % e)


def chromium_cmd(chromium, profile_dir):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
            "--user-data-dir=" + profile_dir]


def run(cmd, timeout, what):
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure("%s took more than %d s: %s" % (what, timeout, " ".join(cmd)))
    return r, time.monotonic() - t


def check_png(path):
    if not os.path.exists(path):
        raise Failure("chromium wrote no screenshot at %s" % path)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("screenshot %s is not a PNG" % path)
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if width < 800 or height < 800 or size < 20000:
        raise Failure("screenshot too small: %dx%d, %d bytes" % (width, height, size))
    summary = "%dx%d, %d bytes" % (width, height, size)
    if not have_pil():
        return summary
    from PIL import Image
    img = Image.open(path).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 24)
    total = width * height
    white = sum(n for n, c in colours if min(c) >= 250)
    if len(colours) < 50:
        raise Failure("screenshot has only %d colours: nothing was drawn" % len(colours))
    if total - white < total * 0.02:
        raise Failure("screenshot is %.1f%% white: nothing was drawn" % (100.0 * white / total))

    def count(rgb):
        return sum(n for n, c in colours if all(abs(c[i] - rgb[i]) <= 3 for i in range(3)))

    present = [count(rgb) for rgb in VERDICT_COLOURS]
    if sum(1 for n in present if n >= 100) < 2:
        raise Failure("the verdict colours are (almost) absent from the screenshot: %s pixels" % present)
    return summary + ", %d colours, %.1f%% not white, verdict colour pixels %s" % (
        len(colours), 100.0 * (total - white) / total, present)


def check_html(chromium, html, ids, work, screenshot):
    html = os.path.abspath(html)
    with open(html, encoding="utf-8") as f:
        text = f.read()
    for bad in ("http://", "https://", "<script src", "<link", "<img", "@import"):
        if bad in text:
            raise Failure("%s is not self-contained: it holds %r" % (html, bad))
    url = "file://" + html
    notes = []
    if screenshot:
        png = os.path.join(work, os.path.basename(html) + ".png")
        prof = tempfile.mkdtemp(prefix="chromium-", dir=work)
        r, dt = run(chromium_cmd(chromium, prof) + ["--screenshot=" + png, "--window-size=1400,4000", url],
                    CHROMIUM_TIMEOUT, "chromium --screenshot")
        if r.returncode != 0:
            raise Failure("chromium --screenshot failed (%d): %s" % (r.returncode, r.stderr.decode(errors="replace")))
        notes.append("screenshot in %.1f s: %s" % (dt, check_png(png)))
    prof = tempfile.mkdtemp(prefix="chromium-", dir=work)
    r, dt = run(chromium_cmd(chromium, prof) + ["--dump-dom", url], CHROMIUM_TIMEOUT, "chromium --dump-dom")
    if r.returncode != 0:
        raise Failure("chromium --dump-dom failed (%d): %s" % (r.returncode, r.stderr.decode(errors="replace")))
    dom = r.stdout.decode("utf-8", errors="replace")
    missing = [i for i in ids if not re.search(r'<svg[^>]*\bid="%s"' % re.escape(i), dom)]
    if missing:
        raise Failure("charts missing from the rendered DOM of %s: %s" % (html, ", ".join(missing)))
    if "</html>" not in dom or "</main>" not in dom:
        raise Failure("rendered DOM of %s is truncated" % html)
    # Shapes of each chart made it into the DOM (not just empty <svg> elements).
    for i in ids:
        body = dom[dom.index('id="%s"' % i):]
        body = body[:body.index("</svg>")]
        shapes = len(re.findall(r"<(rect|polyline|circle|line)\b", body))
        if shapes < 3:
            raise Failure("chart %s of %s has %d shapes in the rendered DOM" % (i, html, shapes))
    notes.append("DOM in %.1f s: %d bytes, charts %s present" % (dt, len(dom), ", ".join(ids)))
    return notes


def check_dot(dot, path, work):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    nodes = set(re.findall(r"^\s+((?:op|g)\d+) \[", src, re.M))
    edges = re.findall(r"^\s+((?:op|g)\d+) -> ((?:op|g)\d+)", src, re.M)
    if not nodes:
        raise Failure("%s has no nodes" % path)
    out = os.path.join(work, os.path.basename(path) + ".svg")
    r, dt = run([dot, "-Tsvg", path, "-o", out], DOT_BUDGET_S, "dot -Tsvg " + path)
    if r.returncode != 0:
        raise Failure("dot -Tsvg %s failed (%d): %s" % (path, r.returncode, r.stderr.decode(errors="replace")))
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.parse(out).getroot()
    titles = {g.find("s:title", ns).text for g in root.iter("{http://www.w3.org/2000/svg}g")
              if g.get("class") == "node"}
    edge_titles = [g.find("s:title", ns).text for g in root.iter("{http://www.w3.org/2000/svg}g")
                   if g.get("class") == "edge"]
    if titles != nodes:
        raise Failure("dot's SVG of %s has nodes %d, the DOT file %d (missing: %s)" % (
            path, len(titles), len(nodes), sorted(nodes - titles)[:5]))
    if len(edge_titles) != len(edges):
        raise Failure("dot's SVG of %s has %d edges, the DOT file %d" % (path, len(edge_titles), len(edges)))
    with open(out, encoding="utf-8") as f:
        svg = f.read()
    critical = svg.count('stroke="%s"' % CRITICAL)
    if ('color="%s"' % CRITICAL) in src and critical == 0:
        raise Failure("the critical path is red in %s but not in dot's SVG" % path)
    return ["%s: %d nodes, %d edges laid out in %.1f s, %d red shapes" % (
        os.path.basename(path), len(nodes), len(edges), dt, critical)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("html", nargs="?", help="report.html to render")
    ap.add_argument("dot", nargs="?", help="graph.dot to lay out")
    ap.add_argument("--example", metavar="BIN", help="generate the examples with BIN DIR and check them")
    ap.add_argument("--ids", default=",".join(DEFAULT_IDS), help="chart ids the HTML must hold")
    ap.add_argument("--keep", metavar="DIR", help="leave the outputs (PNG, SVG) in DIR")
    args = ap.parse_args()
    if not args.example and not (args.html and args.dot):
        ap.error("give REPORT.html and GRAPH.dot, or --example BIN")
    chromium, dot = ensure_tools()
    ids = [i for i in args.ids.split(",") if i]
    work = args.keep or tempfile.mkdtemp(prefix="render-report-")
    os.makedirs(work, exist_ok=True)
    t0 = time.monotonic()
    failed = False
    try:
        notes = []
        if args.example:
            r = subprocess.run([args.example, work], timeout=120)
            if r.returncode != 0:
                raise Failure("%s %s failed (%d)" % (args.example, work, r.returncode))
            pairs = [(os.path.join(work, "report.html"), os.path.join(work, "graph.dot"), True),
                     (os.path.join(work, "report_big.html"), os.path.join(work, "graph_big.dot"), False)]
        else:
            pairs = [(args.html, args.dot, True)]
        for html, dotfile, screenshot in pairs:
            notes += check_html(chromium, html, ids, work, screenshot)
            if dotfile != "-":
                notes += check_dot(dot, dotfile, work)
        for n in notes:
            print("render_report: " + n)
        print("render_report: OK in %.1f s%s" % (time.monotonic() - t0, " (outputs in %s)" % work if args.keep else ""))
        return 0
    except Failure as e:
        failed = True
        print("render_report: FAILED: %s (outputs left in %s)" % (e, work))
        return 1
    finally:
        if not args.keep and not failed:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
