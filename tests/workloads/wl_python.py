# SPDX-License-Identifier: MIT
# wl_python.py: a known chain of pure Python calls for tests/e2e/python.sh, run by Debian's
# /usr/bin/python3 as it is. The chain, root first (the lines are the calls' and checked):
#   <module> -> main -> Worker.handle -> Worker.handle.<locals>.<lambda> (through map)
#   -> recurse x DEPTH -> produce (a generator) -> leaf
# leaf does the mode's work:
#   spin SECONDS     burn SECONDS of CPU time in Python, with a sort through a Python key (C
#                    calling Python)
#   getppid N        os.getppid() N times: one getppid(2) each
#   malloc N         bytearray(1 MiB) N times: one malloc() of libc each
#   sleep N          time.sleep(0.02) N times: N blocks off CPU (stkrec --offcpu)
#   threads SECONDS  two threads, SECONDS of CPU time together: spin_a and spin_b, each its own
#                    chain under Thread.run
#   wait MODE N      read a line from stdin first, then MODE N (a process a tool attaches to
#                    after it started: python.sh, bench/run)
import os
import sys
import threading
import time

DEPTH = 5


def keyfn(v):
    return -v


def leaf(mode, n):
    if mode == "getppid":
        for _ in range(n):
            os.getppid()
        return n
    if mode == "malloc":
        for _ in range(n):
            bytearray(1 << 20)
        return n
    if mode == "sleep":
        for _ in range(n):
            time.sleep(0.02)
        return n
    total = 0
    data = list(range(400))
    end = n
    while spin_clock() < end:
        for i in range(2000):
            total += i * i
        sorted(data, key=keyfn)
    return total


def spin_clock():
    # the process's CPU time, not the clock's: as many samples however busy the host is
    return sum(os.times()[:2])


def produce(mode, n):
    yield leaf(mode, n)


def recurse(depth, mode, n):
    if depth > 1:
        return recurse(depth - 1, mode, n)
    return sum(produce(mode, n))


class Worker:
    def __init__(self, mode, n):
        self.mode = mode
        self.n = n

    def handle(self):
        return list(map(lambda d: recurse(d, self.mode, self.n), [DEPTH]))


def spin_a(end):
    while spin_clock() < end:
        sum(i * i for i in range(1000))


def spin_b(end):
    while spin_clock() < end:
        sorted(range(200), key=keyfn)


def main(argv):
    mode = argv[1]
    if mode == "threads":
        end = spin_clock() + float(argv[2])
        threads = [threading.Thread(target=spin_a, args=(end,)),
                   threading.Thread(target=spin_b, args=(end,))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return 0
    if mode == "wait":
        sys.stdin.readline()
        mode, argv = argv[2], argv[1:]
    n = float(argv[2]) + spin_clock() if mode == "spin" else int(argv[2])
    Worker(mode, n).handle()
    return 0


sys.exit(main(sys.argv))
