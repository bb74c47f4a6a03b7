#!/usr/bin/env python3
# stacks.py: `protoc --decode=perftools.profiles.Profile` text on stdin -> one line per sample,
# sorted: `VALUES LABELS: leaf;...;root`, each location printed as its functions (inlined callee
# first, joined with '<'), `name:line` when a line is known, or `@0xADDR` when it has none.
# The ids are resolved through the profile's own tables, so this checks what pprof would show.
import re
import sys


def parse(lines):
    """protoc text format -> nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        elif line == "}":
            cur = stack.pop()
        else:
            key, val = line.split(":", 1)
            val = val.strip()
            if val.startswith('"'):
                val = bytes(val[1:-1], "utf-8").decode("unicode_escape")
            else:
                val = int(val) if re.fullmatch(r"-?\d+", val) else val
            cur.setdefault(key, []).append(val)
    return root


def one(d, key, default=0):
    return d.get(key, [default])[0]


p = parse(sys.stdin)
strs = p.get("string_table", [])
# protoc leaves string_table[0] = "" out of the text? no: it prints it as ""
funcs = {one(f, "id"): (strs[one(f, "name")], strs[one(f, "filename")]) for f in p.get("function", [])}
locs = {}
for loc in p.get("location", []):
    names = []
    for ln in loc.get("line", []):
        name = funcs[one(ln, "function_id")][0]
        names.append(f"{name}:{one(ln, 'line')}" if one(ln, "line") else name)
    locs[one(loc, "id")] = "<".join(names) if names else "@%#x" % one(loc, "address")
types = ["%s/%s" % (strs[one(t, "type")], strs[one(t, "unit")]) for t in p.get("sample_type", [])]
pt = p.get("period_type", [{}])[0]
print("sample_type", " ".join(types), "period_type %s/%s" % (strs[one(pt, "type")], strs[one(pt, "unit")]),
      "period", one(p, "period"))
print("time_nanos", one(p, "time_nanos"), "duration_nanos", one(p, "duration_nanos"))
for m in p.get("mapping", []):
    print("mapping", one(m, "id"), "%#x-%#x@%#x" % (one(m, "memory_start"), one(m, "memory_limit"),
          one(m, "file_offset")), strs[one(m, "filename")], strs[one(m, "build_id")] or "-")
out = []
for s in p.get("sample", []):
    labels = " ".join(
        "%s=%s" % (strs[one(lb, "key")], strs[one(lb, "str")] if one(lb, "str") else one(lb, "num"))
        for lb in s.get("label", []))
    frames = ";".join(locs[i] for i in s.get("location_id", []))
    out.append("%s %s: %s" % (",".join(str(v) for v in s.get("value", [])), labels, frames))
for line in sorted(out):
    print(line)
