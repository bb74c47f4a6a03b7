#!/usr/bin/env python3
# tests/golden/svg_check.py NAME FILE.svg [PATH=COUNT[:before=N][:hue=red|blue|kernel|user|python]]...
#                          [title=TEXT] [inverted]
# Checks a flame graph written by stkreport --svg: valid XML (SVG namespace), the script with
# zoom and search (also Ctrl-F and ?s=REGEX), every frame's rectangle where its data-s/data-n put it (x and width to 0.1 px
# of 1180 px for the root's samples), every frame but the root named, and each PATH (frames
# from the root, ';'-joined, without "all") present with COUNT samples in its title, and
# optionally the "before N" of --diff and a colour class. Prints `ok golden/svg/NAME/CHECK` or
# `not ok ...: why` (tests/test.h protocol).
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = {"s": "http://www.w3.org/2000/svg"}
XPAD = 10.0
failed = 0


def check(name, cond, why):
    global failed
    if cond:
        print(f"ok golden/svg/{NAME}/{name}")
    else:
        print(f"not ok golden/svg/{NAME}/{name}: {why}")
        failed = 1


def hue(fill):
    r, g, b = (int(v) for v in re.match(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())
    if r == 255 and g == b and g < 210:
        return "red"
    if b == 255 and r == g and r < 210:
        return "blue"
    if r >= 205 and b <= 55:
        return "user"
    if r <= 110 and b >= 200:
        return "kernel"
    if r <= 100 and g >= 180 and b <= 110:
        return "python"
    return f"other {fill}"


NAME, path = sys.argv[1], sys.argv[2]
try:
    root = ET.parse(path).getroot()
except (ET.ParseError, OSError) as e:
    check("xml", False, str(e))
    sys.exit(1)
check("xml", root.tag == "{http://www.w3.org/2000/svg}svg", f"root element {root.tag}")
WIDTH = float(root.get("width"))  # --width, 1200 by default
script = "".join(s.text or "" for s in root.iter("{http://www.w3.org/2000/svg}script"))
check("script", "function zoom" in script and "function search" in script and
      "keydown" in script and "URLSearchParams" in script and
      root.find(".//s:text[@id='search']", NS) is not None and
      root.find(".//s:text[@id='unzoom']", NS) is not None,
      "no zoom/search script (Ctrl-F, ?s=) or controls")

# the script parses (node --check) when node is installed
node = shutil.which("node") or shutil.which("nodejs")
if node:
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as js:
        js.write(script)
    r = subprocess.run([node, "--check", js.name], capture_output=True, text=True)
    os.unlink(js.name)
    check("script-syntax", r.returncode == 0, r.stderr.strip()[:300])

frames = []
for g in root.findall("s:g[@class='f']", NS):
    title = g.find("s:title", NS).text
    rect = g.find("s:rect", NS)
    m = re.match(r"^(.*) \((\d+) samples, [\d.]+%(?:; before (\d+))?\)$", title)
    frames.append({
        "name": m.group(1), "count": int(m.group(2)),
        "before": int(m.group(3)) if m.group(3) else None,
        "s": int(g.get("data-s")), "n": int(g.get("data-n")), "d": int(g.get("data-d")),
        "x": float(rect.get("x")), "w": float(rect.get("width")), "fill": rect.get("fill"),
        "y": float(rect.get("y")),
    })
total = next((f["n"] for f in frames if f["d"] == 0), 0)
check("root", total > 0 and frames[0]["name"] == "all", "no root frame 'all'")
bad = [f["name"] for f in frames
       if f["n"] != f["count"] or
       abs(f["w"] - round(f["n"] / total * (WIDTH - 2 * XPAD), 1)) > 0.051 or
       abs(f["x"] - round(XPAD + f["s"] / total * (WIDTH - 2 * XPAD), 1)) > 0.051]
check("geometry", not bad, f"frames placed off their counts: {bad[:5]}")

# no nameless bar (e.g. stackcount's empty comm field drawn as a frame; its path would hide it)
check("named", all(f["name"] for f in frames if f["d"] > 0),
      f"{sum(1 for f in frames if f['d'] > 0 and not f['name'])} frames without a name")

# path of each frame: its ancestors are the frames one level up whose span holds its start
paths = {}
by_depth = {}
for f in frames:
    by_depth.setdefault(f["d"], []).append(f)
for f in sorted(frames, key=lambda f: f["d"]):
    if f["d"] == 0:
        f["path"] = ""
        paths[""] = f
        continue
    parent = next(p for p in by_depth[f["d"] - 1] if p["s"] <= f["s"] < p["s"] + p["n"] or
                  (p["n"] == f["n"] == 0 and p["s"] == f["s"]))
    f["path"] = (parent["path"] + ";" if parent["path"] else "") + f["name"]
    paths[f["path"]] = f

wants = []
for want in sys.argv[3:]:
    if want.startswith("title="):
        got = root.find("s:text[@text-anchor='middle']", NS)
        check("title", got is not None and got.text == want[6:],
              f"title {got.text if got is not None else None!r}, want {want[6:]!r}")
    elif want == "inverted":
        # an icicle graph: each level below the one before it, the root on top
        check("inverted", all(f["y"] > p["y"] for f in frames for p in frames if f["d"] == p["d"] + 1),
              "a frame is not below its parent's level")
    else:
        wants.append(want)
if "inverted" not in sys.argv[3:]:
    check("upright", all(f["y"] < p["y"] for f in frames for p in frames if f["d"] == p["d"] + 1),
          "a frame is not above its parent's level")

for want in wants:
    spec, *extra = want.split(":")
    p, count = spec.rsplit("=", 1)
    f = paths.get(p)
    ok = f is not None and f["count"] == int(count)
    why = f"{p}: " + ("missing" if f is None else f"count {f['count']}, want {count}")
    for e in extra:
        k, v = e.split("=")
        if f is not None and k == "before":
            ok = ok and f["before"] == int(v)
            why += f"; before {f['before']}, want {v}"
        if f is not None and k == "hue":
            ok = ok and hue(f["fill"]) == v
            why += f"; hue {hue(f['fill'])}, want {v}"
    check(p or "all", ok, why)
sys.exit(failed)
