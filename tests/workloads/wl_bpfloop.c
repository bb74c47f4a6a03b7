/* SPDX-License-Identifier: MIT */
/*
 * wl_bpfloop: loads a BPF program named stk_loop (a socket filter counting to 20000) and runs
 * it N times through BPF_PROG_TEST_RUN, 1000 runs per call, from main -> wl_outer -> wl_run
 * (tests/e2e/ksyms.sh). A call spends some 15 ms on the CPU inside the program's JIT code, so a
 * sampling recorder started before it sees kernel frames in a BPF program that did not exist
 * when the recording began: kallsyms lists it as bpf_prog_<tag>_stk_loop [bpf]. The program
 * stays loaded until the process exits. Options: see wl.h. Needs root (CAP_BPF).
 *
 * Raw bpf(2), no libbpf: workloads build with nothing but the compiler.
 */
#include <linux/bpf.h>
#include <stdint.h>

#include "wl.h"

#define LOOPS 20000	/* the verifier walks every iteration: 40000 instructions */
#define RUNS_PER_CALL 1000

static int prog_fd = -1;

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* r0 = 0; do r0 += 1; while (r0 < LOOPS); return 0 (a bounded loop the verifier unrolls). */
static int load(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_JLT | BPF_K, .dst_reg = BPF_REG_0, .off = -2, .imm = LOOPS },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t)"GPL";
	memcpy(attr.prog_name, "stk_loop", sizeof("stk_loop"));
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		/* again with the verifier's log, for the message */
		attr.log_buf = (uintptr_t)log;
		attr.log_size = sizeof(log);
		attr.log_level = 1;
		sys_bpf(BPF_PROG_LOAD, &attr);
		fprintf(stderr, "wl_bpfloop: BPF_PROG_LOAD: %s\n%.1000s\n", strerror(errno), log);
		return -1;
	}
	return (int)fd;
}

__attribute__((noinline)) void wl_run(void)
{
	static char packet[64];	/* a socket filter's test run wants an Ethernet header at least */
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = prog_fd;
	attr.test.data_in = (uintptr_t)packet;
	attr.test.data_size_in = sizeof(packet);
	attr.test.repeat = RUNS_PER_CALL;
	if (sys_bpf(BPF_PROG_TEST_RUN, &attr) < 0) {
		fprintf(stderr, "wl_bpfloop: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
		exit(1);
	}
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		wl_run();
}

int main(int argc, char **argv)
{
	prog_fd = load();
	if (prog_fd < 0)
		return 1;
	return wl_main(argc, argv, wl_outer);
}
