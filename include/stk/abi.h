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

#endif /* STK_ABI_H */
