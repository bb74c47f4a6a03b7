/* SPDX-License-Identifier: MIT */
/*
 * vmlinux.h: the few kernel types stkrec's BPF programs use, kept by hand (docs/bpf.md).
 *
 * Why not `bpftool btf dump file /sys/kernel/btf/vmlinux format c`: that needs the build machine's
 * kernel (and its BTF), produces a 3 MB header that changes with every kernel, and the build must
 * work anywhere. CO-RE makes the short version portable: every struct the programs read carries
 * __attribute__((preserve_access_index)), so clang records field accesses as relocations and
 * libbpf rewrites the offsets at load time against the running kernel's BTF. The same object runs
 * on 6.1 and 6.18. Only the fields named here exist for the programs; layouts need not match.
 *
 * Defining __VMLINUX_H__ tells bpf_tracing.h to use the kernel's pt_regs field names (di, sp, ...).
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
enum { false = 0, true = 1 };

/* UAPI constants (include/uapi/linux/bpf.h): stable numbers, not relocated. */
enum bpf_map_type {
	BPF_MAP_TYPE_UNSPEC = 0,
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,	/* bench/floor.bpf.c only */
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

/* Map flags (BPF_MAP_CREATE map_flags). */
enum {
	BPF_F_NO_PREALLOC = (1U << 0),
	BPF_F_MMAPABLE = (1U << 10),
	BPF_F_INNER_MAP = (1U << 12),
};

/* Flags of bpf_get_stackid() and bpf_get_stack(). */
enum {
	BPF_F_SKIP_FIELD_MASK = 0xffULL,
	BPF_F_USER_STACK = (1ULL << 8),
	BPF_F_FAST_STACK_CMP = (1ULL << 9),
	BPF_F_REUSE_STACKID = (1ULL << 10),	/* never used: it mixes stacks silently */
};

/* include/linux/sched.h: a kernel thread has no user stack to walk. */
#define PF_KTHREAD 0x00200000

/* x86_64 register frame; the names bpf_tracing.h and usdt.bpf.h expect. */
struct pt_regs {
	unsigned long r15;
	unsigned long r14;
	unsigned long r13;
	unsigned long r12;
	unsigned long bp;
	unsigned long bx;
	unsigned long r11;
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
	unsigned long flags;
	unsigned long sp;
	unsigned long ss;
} __attribute__((preserve_access_index));

/*
 * Context of BPF_PROG_TYPE_PERF_EVENT programs (UAPI: bpf_user_pt_regs_t is the x86-64 UAPI
 * struct pt_regs, 8-byte fields at fixed offsets). Not relocated: the kernel's own pt_regs has
 * a 2-byte cs today, and the verifier allows only whole 8-byte loads of this context.
 */
struct user_pt_regs_uapi {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};

struct bpf_perf_event_data {
	struct user_pt_regs_uapi regs;
	__u64 sample_period;
	__u64 addr;
};

struct super_block {
	unsigned int s_dev;	/* dev_t: major << 20 | minor */
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct mm_struct {
	unsigned long start_code;
	unsigned long end_code;
	unsigned long start_stack;
	struct file *exe_file;
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int flags;
	struct mm_struct *mm;
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

/*
 * A map value field the kernel finds by this name in the value's BTF (6.18+; a plain 8 bytes to
 * older kernels): the task work of bpf_task_work_schedule_resume_impl().
 */
struct bpf_task_work {
	__u64 __opaque;
};

/* Only as a pointer, in the task work callback's type; libbpf matches a kfunc's prototype by kinds,
 * and a declaration alone (BTF FWD) is no struct to it. */
struct bpf_map {
	int __unused;
};

#endif /* __VMLINUX_H__ */
