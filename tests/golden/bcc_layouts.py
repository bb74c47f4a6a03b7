#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/golden/bcc_layouts.py: what bcc's tools print for a golden capture, from bcc's own print
code, to hold stkreport's layouts against (tests/golden/run, "bcc layouts").

    bcc_layouts.py LAYOUT ELF_DIR < capdump -k output

The capture's rows (capdump -k: processes, mappings, kernel symbols, stacks of raw addresses)
are keyed as each tool keys its BPF counts, on stack ids, one per distinct stack of addresses
(struct key_t), and printed with each tool's print statements, quoted below from bcc's current
sources (git 6d0a964, 2026):

  profile      tools/profile.py: b.ksym(addr, True, True) / b.sym(addr, k.pid, True, True),
               "NAME+0xOFF [MODULE]", "    %s" or with -A "    0x%-16x %s" (kernel) and
               "    0x%016x %s" (user), "    %-16s %s (%d)" % ("-", name, k.pid),
               "        %d\\n" % value; "[Missed Kernel Stack]", "[Missed User Stack]"
  offcputime   tools/offcputime.py: the same lines with b.ksym(addr) / b.sym(addr, k.tgid),
               names only, keyed per thread (k.pid is the thread id)
  stackcount   tools/stackcount.py: "  %s" per frame, "    %d\\n" % value (no comm without
               -P: its key's tgid is 0xffffffff)
  stacksnoop   examples/tracing/stacksnoop.py: "%-18s %s" % ("TIME(s)", "FUNCTION"), with -v
               "%-18s %-12s %-6s %-3s %s" % ("TIME(s)", "COMM", "PID", "CPU", "FUNCTION");
               per event "%-18.9f %s" % (ts, function) or "%-18.9f %-12.12s %-6d %-3d %s",
               "\\t%s" % b.ksym(addr) per frame, then print()

Addresses are named as bcc's symbolizers name them (BPF.sym(): "[unknown]", with " [MODULE]"
when only the object is known; KSyms: the module, "kernel" for the image), from the golden ELF
files (nm, readelf) and the capture's kernel symbols. Return addresses are looked up at
address - 1, and the offset printed is the raw address's. Where bcc's order is its hash map's
(equal counts), the script orders as stkreport documents: comm, pid, frames, then addresses.
What stkreport adds to bcc's tools is printed the way stkreport(1) says: the user stack after
the kernel stack in stacksnoop (bcc's has kernel frames only), the capture's SPEC as FUNCTION,
and TIME(s) counted from the capture's start.
"""
import os
import re
import subprocess
import sys

KSTACK_LOST, USTACK_LOST = 0x1, 0x2


def parse(lines):
    cap = {"meta": {}, "probes": {}, "ksyms": [], "procs": {}, "rows": []}
    stacks = {}
    for line in lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "meta":
            k, _, v = line[5:].rstrip("\n").partition("=")
            cap["meta"][k] = v
        elif w[0] == "probe":
            cap["probes"][int(w[1])] = line.split("spec=", 1)[1].rstrip("\n")
        elif w[0] == "ksym":
            mod = w[4][1:-1] if len(w) > 4 else None
            cap["ksyms"].append((int(w[1], 16), w[3], mod))
        elif w[0] == "proc":
            f = dict(x.split("=", 1) for x in w[1:] if "=" in x)
            proc = {"comm": f["comm"], "maps": []}
            cap["procs"][int(f["pid"])] = proc
        elif w[0] == "map":
            start, end = (int(x, 16) for x in w[1].split("-"))
            pgoff = int(w[2].split("=")[1], 16)
            proc["maps"].append((start, end, pgoff, w[-1]))
        elif w[0] in ("interval", "events"):
            stacks = {}
        elif w[0] in ("kstack", "ustack"):
            ips = [int(x, 16) for x in line.split(":", 1)[1].split()]
            stacks[(w[0][0], int(w[1]))] = ips
        elif w[0] == "row":
            f = dict(x.split("=", 1) for x in w[1:])
            row = {k: int(f[k], 0) for k in ("probe", "pid", "tid", "k", "u", "flags", "count")}
            row["comm"] = f["comm"]
            row["kips"] = stacks.get(("k", row["k"]), [])
            row["uips"] = stacks.get(("u", row["u"]), [])
            for k in ("ts", "cpu"):
                if k in f:
                    row[k] = int(f[k])
            cap["rows"].append(row)
    cap["ksyms"].sort()
    return cap


class Elf:
    def __init__(self, path):
        out = subprocess.run(["nm", "-nS", path], capture_output=True, text=True).stdout
        self.syms = []
        for line in out.splitlines():
            w = line.split()
            if len(w) == 4 and w[2] in "tTwW":
                self.syms.append((int(w[0], 16), int(w[1], 16), w[3]))
        out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
        self.loads = [(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))
                      for m in re.finditer(r"LOAD\s+(0x\w+)\s+(0x\w+)\s+0x\w+\s+(0x\w+)", out)]

    def name(self, off, is_return):
        for p_off, p_vaddr, p_filesz in self.loads:
            if p_off <= off < p_off + p_filesz:
                vaddr = off - p_off + p_vaddr
                look = vaddr - 1 if is_return else vaddr
                for start, size, name in reversed(self.syms):
                    if start <= look < start + size:
                        return name, vaddr - start
                return None
        return None


class Names:
    def __init__(self, cap, elf_dir):
        self.cap, self.elf_dir, self.elfs = cap, elf_dir, {}

    def ksym(self, addr, is_return):
        """(name, offset, module) or None; the last symbol at or below, as bcc's KSyms"""
        look = addr - 1 if is_return else addr
        best = None
        for a, name, mod in self.cap["ksyms"]:
            if a <= look:
                best = (name, addr - a, mod or "kernel")
        return best

    def sym(self, pid, addr, is_return):
        """(name, offset, module); name None when only the module is known; None for neither"""
        for start, end, pgoff, path in self.cap["procs"].get(pid, {"maps": []})["maps"]:
            if start <= addr < end:
                module = os.path.basename(path)
                file = os.path.join(self.elf_dir, module)
                if not os.path.exists(file):
                    return None, 0, module
                if file not in self.elfs:
                    self.elfs[file] = Elf(file)
                found = self.elfs[file].name(addr - start + pgoff, is_return)
                return (found[0], found[1], module) if found else (None, 0, module)
        return None


def text(found, show_module, show_offset):
    """BPF.sym()'s string"""
    if found is None:
        return "[unknown]"
    name, offset, module = found
    s = (name + ("+0x%x" % offset if show_offset else "")) if name else "[unknown]"
    return s + (" [%s]" % module if show_module and module else "")


def frames(names, row, show_module, show_offset, address):
    out = []
    for kernel, ips in ((True, row["kips"]), (False, row["uips"])):
        lines = []
        for i, addr in enumerate(ips):
            f = names.ksym(addr, i > 0) if kernel else names.sym(row["pid"], addr, i > 0)
            s = text(f, show_module, show_offset)
            if address:
                s = ("0x%-16x %s" if kernel else "0x%016x %s") % (addr, s)
            lines.append(s)
        out.append(lines)
    return out


def addr_key(row):
    return "k:" + "".join("%x," % a for a in row["kips"]) + \
           "u:" + "".join("%x," % a for a in row["uips"])


def counted(cap, key):
    """the rows summed by key (bcc's counts map), least first"""
    counts = {}
    for row in cap["rows"]:
        k = key(row)
        if k in counts:
            counts[k][1] += row["count"]
        else:
            counts[k] = [row, row["count"]]
    return counts.values()


def profile_like(cap, names, show_module, show_offset, address, per_thread):
    entries = []
    key = (lambda r: (r["tid"] if per_thread else r["pid"], r["comm"], r["flags"], addr_key(r)))
    for row, value in counted(cap, key):
        k, u = frames(names, row, show_module, show_offset, address)
        pid = row["tid"] if per_thread else row["pid"]
        entries.append(((value, row["comm"], pid, k, u, row["flags"], addr_key(row)),
                        row, k, u, pid))
    print()
    for key, row, k, u, pid in sorted(entries, key=lambda e: e[0]):
        if row["flags"] & KSTACK_LOST:
            print("    [Missed Kernel Stack]")
        for s in k:
            print("    %s" % s)
        if row["flags"] & USTACK_LOST:
            print("    [Missed User Stack]")
        for s in u:
            print("    %s" % s)
        print("    %-16s %s (%d)" % ("-", row["comm"], pid))
        print("        %d\n" % key[0])


def stackcount(cap, names):
    entries = []
    for row, value in counted(cap, lambda r: (r["flags"], addr_key(r))):
        k, u = frames(names, row, False, False, False)
        entries.append(((value, "", 0, k, u, row["flags"], addr_key(row)), k, u))
    print()
    for key, k, u in sorted(entries, key=lambda e: e[0]):
        for s in k + u:
            print("  %s" % s)
        print("    %d\n" % key[0])


def stacksnoop(cap, names, verbose):
    start = int(cap["meta"]["start.mono_ns"])
    if verbose:
        print("%-18s %-12s %-6s %-3s %s" % ("TIME(s)", "COMM", "PID", "CPU", "FUNCTION"))
    else:
        print("%-18s %s" % ("TIME(s)", "FUNCTION"))
    for row in cap["rows"]:
        ts = (row["ts"] - start) / 1e9
        function = cap["probes"][row["probe"]]
        if verbose:
            print("%-18.9f %-12.12s %-6d %-3d %s" % (ts, row["comm"], row["pid"], row["cpu"],
                                                    function))
        else:
            print("%-18.9f %s" % (ts, function))
        k, u = frames(names, row, False, False, False)
        for s in k + u:
            print("\t%s" % s)
        print()


def main():
    layout, elf_dir = sys.argv[1], sys.argv[2]
    cap = parse(sys.stdin)
    names = Names(cap, elf_dir)
    if layout in ("profile", "profile-A"):
        profile_like(cap, names, True, True, layout == "profile-A", False)
    elif layout == "offcputime":
        profile_like(cap, names, False, False, False, True)
    elif layout == "stackcount":
        stackcount(cap, names)
    elif layout in ("stacksnoop", "stacksnoop-v"):
        stacksnoop(cap, names, layout == "stacksnoop-v")
    else:
        sys.exit("bcc_layouts.py: unknown layout " + layout)


main()
