/* SPDX-License-Identifier: MIT */
/*
 * abi.h: types shared by the BPF programs (bpf/) and stkrec (record/). Included by BPF C code
 * after vmlinux.h, and by user space after <linux/types.h>; uses only __u32/__s32/__u64.
 */
#ifndef STK_ABI_H
#define STK_ABI_H

#define STK_COMM_LEN 16
/* Default depth of a stack-map value; stkrec sizes the maps from kernel.perf_event_max_stack. */
#define STK_DEFAULT_DEPTH 127

/*
 * A stack id field holds a stack-map id (>= 0), or a negative errno from bpf_get_stackid()
 * (-EEXIST collision, -EFAULT no stack), or STK_STACK_NOT_WANTED when -K/-U left it out.
 */
#define STK_STACK_NOT_WANTED (-1000)
/* A kernel thread has no user stack: nothing was lost. */
#define STK_STACK_NONE (-1001)

/* Key of the counts maps: one row of an interval. */
struct stk_key {
	__u32 tgid;
	__u32 pid;		/* thread id */
	__u32 probe;		/* probe id (from the BPF cookie) */
	__s32 kstack;
	__s32 ustack;
	__u32 pad;		/* zero: hash keys compare every byte */
	char comm[STK_COMM_LEN];
	/*
	 * uprobes only: the return address at the stack pointer at function entry. The frame
	 * pointer is not pushed yet there, so a frame-pointer walk skips the direct caller;
	 * stkrec inserts this address as the stack's second frame. 0 for other probes.
	 */
	__u64 uret;
	/*
	 * kprobes only: the return address at the kernel stack pointer at function entry, the
	 * direct caller; stkrec inserts it as the kernel stack's second frame when the kernel's
	 * unwinder left it out. 0 for other probes.
	 */
	__u64 kret;
};

/* Indexes of the per-CPU stats array: events lost or damaged in BPF (see cap_loss). */
enum stk_stat {
	STK_STAT_KSTACK_COLLISION = 0,
	STK_STAT_USTACK_COLLISION = 1,
	STK_STAT_KSTACK_ERROR = 2,
	STK_STAT_USTACK_MISSING = 3,
	STK_STAT_COUNTS_FULL = 4,
	STK_STAT_NOTIFY_DROPPED = 5,
	STK_STAT_EVENTS = 6,	/* every event the programs saw after filtering */
	STK_STAT__COUNT
};

/*
 * Ring-buffer message: the first event of a tgid since BPF last forgot it (start of the run, an
 * exec, a pid reuse, an LRU eviction). User space reads the process's maps at once.
 */
struct stk_notify {
	__u32 tgid;
};

/*
 * --snoop: one ring-buffer record per event (72 bytes). The stacks travel as stack-map ids of
 * generation `gen`: user space resolves them when it drains the interval, after the flip and
 * grace period of docs/bpf.md 4, so the ids are still valid then (and a record stays small).
 */
struct stk_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 uret;		/* as in struct stk_key */
	__u64 kret;		/* as in struct stk_key */
	__u32 tgid;
	__u32 pid;		/* thread id */
	__u32 probe;
	__u32 cpu;
	__s32 kstack;		/* stack id fields as in struct stk_key */
	__s32 ustack;
	__u32 gen;		/* generation of the stack map the ids belong to */
	__u32 pad;
	char comm[STK_COMM_LEN];
};


/* ---- user stacks from CFI (docs/bpf.md 7) ---------------------------------------------------- */

/*
 * One row of a compact unwind table, built by stkrec from an object's .eh_frame or .debug_frame
 * (record/cfi.c) and read by the BPF walker: from `pc` up to the next row's pc, how to find the
 * caller's frame. A table is an array of rows sorted by pc; 8 bytes each, so libc's table is
 * about 200 KB and cc1's about 3.5 MB.
 *
 * x86-64 only: the return address is always at CFA - 8 (a row whose CFI says otherwise is
 * STK_CFA_UNSUPPORTED), and the only callee-saved register the walker needs is rbp.
 */
struct stk_urow {
	__u32 pc;	/* ELF virtual address minus the table's base address */
	__u16 cfa_off;	/* see enum stk_cfa */
	__u8 kind;	/* enum stk_cfa in the low 4 bits, enum stk_rbp_rule << 4 */
	__s8 rbp_off;	/* rbp's save slot, in 8-byte words (see enum stk_rbp_rule) */
};

/* How the canonical frame address (the caller's rsp) is found. */
enum stk_cfa {
	STK_CFA_GAP = 0,	/* no FDE covers the pc (code without CFI): frame pointers */
	STK_CFA_END = 1,	/* the return address is undefined: the outermost frame */
	STK_CFA_RSP = 2,	/* CFA = rsp + cfa_off */
	STK_CFA_RBP = 3,	/* CFA = rbp + cfa_off */
	STK_CFA_PLT = 4,	/* PLT entry: CFA = rsp + 8, plus 8 when (pc & 15) >= cfa_off */
	STK_CFA_SIGNAL = 5,	/* signal trampoline: the interrupted registers are in the
				 * ucontext at rsp (rbp at +120, rsp at +160, rip at +168) */
	STK_CFA_RBP_DEREF = 6,	/* realigned stack (gcc's DRAP): CFA = *(rbp + (__s16)cfa_off) */
	STK_CFA_UNSUPPORTED = 7,	/* any other rule: the stack ends here, counted */
};

/* Where the caller's rbp is. */
enum stk_rbp_rule {
	STK_RBP_SAME = 0,	/* unchanged (not saved by this frame) */
	STK_RBP_AT_CFA = 1,	/* saved at CFA + 8 * rbp_off */
	STK_RBP_AT_RBP = 2,	/* saved at rbp + 8 * rbp_off (DW_CFA_expression breg6) */
};

#define STK_UROW_CFA(kind) ((kind) & 0x0f)
#define STK_UROW_RBP(kind) ((kind) >> 4)
#define STK_UROW_KIND(cfa, rbp) ((__u8)((cfa) | ((rbp) << 4)))

#endif /* STK_ABI_H */
