/* SPDX-License-Identifier: MIT */
/*
 * abi.h: types shared by the BPF programs (bpf/) and stkrec (record/). Included by BPF C code
 * after vmlinux.h, and by user space after <linux/types.h>; uses only __u32/__s32/__u64.
 */
#ifndef STK_ABI_H
#define STK_ABI_H

#define STK_COMM_LEN 16
/* Default depth of a stored stack; stkrec follows kernel.perf_event_max_stack up to the max. */
#define STK_DEFAULT_DEPTH 127
#define STK_MAX_DEPTH 1024

/*
 * Stacks are stored in hash maps keyed by a 64-bit hash of their frames (docs/bpf.md 4): no
 * buckets, so no collisions. A stack field of a key is such a hash, or 0 with the reason in the
 * matching *_err field.
 */
#define STK_STACK_NOT_WANTED (-1000)	/* -K/-U left it out */
#define STK_STACK_NONE (-1001)		/* none exists, nothing lost: a kernel thread's user
					 * stack, the kernel stack of an event in user mode,
					 * the user stack of a task in execve() between its
					 * old image and the new one */

/*
 * A process's image as BPF stamps it (bpf/unwind.bpf.h exec_ns): the time of its last exec, or of
 * its fork (struct stk_key image_ns), and the address of that image's mm_struct. A task whose mm
 * is another is in an exec not stamped yet.
 */
struct stk_image {
	__u64 ns;
	__u64 mm;
};

/* What the counts maps count (struct stk_count): one row of an interval. */
struct stk_key {
	__u32 tgid;
	__u32 pid;		/* thread id */
	__u32 probe;		/* probe id (from the BPF cookie) */
	__s32 kerr;		/* 0: kstack names a stored stack; else STK_STACK_* or -errno */
	__u64 kstack;		/* stack hash, 0 when kerr != 0 */
	__u64 ustack;
	__s32 uerr;
	__u32 pad;		/* zero: hash keys compare every byte */
	char comm[STK_COMM_LEN];
	/*
	 * uprobes with --unwind fp only: the return address at the stack pointer at function
	 * entry. The frame pointer is not pushed yet there, so a frame-pointer walk skips the
	 * direct caller; stkrec inserts this address as the stack's second frame. (The CFI walker
	 * knows the entry rule and needs no help.) 0 for other probes.
	 */
	__u64 uret;
	/*
	 * kprobes only: the return address at the kernel stack pointer at function entry, the
	 * direct caller; stkrec inserts it as the kernel stack's second frame when the kernel's
	 * unwinder left it out. 0 for other probes.
	 */
	__u64 kret;
	/*
	 * The process image the event ran in: the CLOCK_MONOTONIC time of the tgid's last exec (or,
	 * for a new process, its fork) that BPF saw, 0 for none. stkrec names the row with the
	 * mappings of that image, so rows from before an exec in the same interval keep the old
	 * image's names (docs/bpf.md 4).
	 */
	__u64 image_ns;
};

/*
 * Value of the counts maps, whose key is a 64-bit keyed digest of `key` (docs/bpf.md 2): the
 * kernel then hashes and compares 8 bytes an event, not the 80 of struct stk_key.
 */
struct stk_count {
	__u64 count;
	struct stk_key key;
};

/*
 * A leaf guess's return address (bpf/unwind.bpf.h leaf_guess()) outside every known mapping
 * may be in a library mapped since stkrec read the process, and is asked about, when it lies
 * where code can be: at or above vm.mmap_min_addr's default and below the user address
 * space's end (5-level paging). A stale 7 or 0x12 at rsp is not worth a re-read.
 */
#define STK_MAY_BE_CODE(addr) ((addr) >= 0x10000ull && (addr) < (1ull << 56))
/*
 * A walk at pc, in no known mapping, after n frames (n >= 1; guessed: frame 1 is the leaf
 * guess's). Why it ends, the same in BPF (bpf/unwind.bpf.h) and in stkrec (record/unwind/unwind.c):
 * - a caller: no mapping, and stkrec is asked (a library mapped since it read the process);
 * - a leaf guess: a bad frame, asked only where code can be (cc1's frame_dummy, called from
 *   libc before stkrec had read libc);
 * - a leaf guess from rbp 0 that reads no code: the leaf is the outermost frame, as rbp 0
 *   says. A program's entry (ld.so's _start has no CFI) has argc at rsp: a profile of compile
 *   loops sampled it 26 times a minute, each counted as a bad frame. Where the guess reads
 *   code, rbp 0 was just a register's value (GMP's __gmpn_invert_limb).
 */
#define STK_MISS_GUESS(n, guessed) ((n) == 1 && (guessed))
#define STK_MISS_STOP(n, guessed, bp, pc)						\
	(!STK_MISS_GUESS(n, guessed) ? STK_STOP_NO_MAPPING :				\
	 !(bp) && !STK_MAY_BE_CODE(pc) ? STK_STOP_COMPLETE : STK_STOP_BAD_FRAME)
#define STK_MISS_ASKS(n, guessed, pc) (!STK_MISS_GUESS(n, guessed) || STK_MAY_BE_CODE(pc))

/* Why a user stack ends (struct stk_stack.stop); every reason but COMPLETE is a counted loss. */
enum stk_stop {
	STK_STOP_NONE = 0,		/* --unwind fp: the kernel's walk, which does not say */
	STK_STOP_COMPLETE,		/* reached the outermost frame */
	STK_STOP_TRUNCATED,		/* the depth limit */
	STK_STOP_PROC_UNKNOWN,		/* the process's mappings are not loaded yet */
	STK_STOP_NO_MAPPING,		/* a return address in no known executable mapping */
	STK_STOP_NO_CFI,		/* --unwind cfi: code without CFI */
	STK_STOP_UNSUPPORTED,		/* a CFI rule the walker does not follow */
	STK_STOP_READ_FAULT,		/* the user stack could not be read (not present) */
	STK_STOP_BAD_FRAME,		/* a frame that does not move up the stack */
	STK_STOP_TABLE_LIMIT,		/* --unwind-memory was full: the object has no table */
	STK_STOP_COPY_END,		/* a deferred walk reached the end of its stack copy */
	STK_STOP_DEFER_FULL,		/* to be deferred, but the ring had no room: the walk so far */
	STK_STOP__COUNT
};

/* A stored stack: the value of the stacks maps (value_size = 8 + depth * 8). */
struct stk_stack {
	__u16 nr;		/* frames (a Python frame is two, STK_PYWORD) */
	__u16 stop;		/* enum stk_stop (user stacks) */
	__u32 pystop;		/* enum stk_pystop of the Python frames spliced in (user stacks) */
	__u64 ips[STK_MAX_DEPTH];	/* ips[0] is the leaf */
};

/* Indexes of the per-CPU stats array: events lost or damaged in BPF (see cap_loss). */
enum stk_stat {
	STK_STAT_KSTACK_FULL = 0,	/* the generation's stacks map was full */
	STK_STAT_USTACK_FULL = 1,
	STK_STAT_KSTACK_ERROR = 2,	/* bpf_get_stack() failed on a kernel stack */
	STK_STAT_USTACK_MISSING = 3,	/* a user task whose stack could not be read at all */
	STK_STAT_COUNTS_FULL = 4,
	STK_STAT_NOTIFY_DROPPED = 5,
	STK_STAT_EVENTS = 6,		/* every event the programs saw after filtering */
	STK_STAT_DRAIN_RACE = 7,	/* counted into a generation user space was draining */
	STK_STAT_NESTED = 8,		/* programs nested too deep on one CPU: no scratch left */
	STK_STAT__COUNT
};

/*
 * Values of the tgids filter map. A `-- COMMAND` child enters it as FROM_EXEC: until its exec
 * it is a copy of stkrec (its comm too), and perf's enable_on_exec starts there as well.
 */
enum stk_tgid_filter {
	STK_TGID_TRACED = 1,
	STK_TGID_FROM_EXEC = 2,	/* becomes TRACED at its sched_process_exec */
};

/* --offcpu's -u and -k (bcc offcputime): which threads' blocks count. */
enum stk_threads {
	STK_THREADS_ALL = 0,
	STK_THREADS_USER = 1,	/* -u: no kernel threads */
	STK_THREADS_KERNEL = 2,	/* -k: kernel threads only */
};

/* Ring-buffer message: user space reads the process's /proc entries now. */
enum stk_notify_kind {
	STK_NOTIFY_SEEN = 0,	/* the first event of a tgid since BPF last forgot it */
	STK_NOTIFY_EXEC = 1,	/* an exec replaced its mappings */
	STK_NOTIFY_MAPS = 2,	/* the unwinder met an address in none of its known mappings */
	STK_NOTIFY_FILL = 3,	/* a generation's map is over half full (tgid 0) */
	STK_NOTIFY_PYCODE = 4,	/* a Python code object BPF met first (addr, check) */
};

struct stk_notify {
	__u32 tgid;
	__u32 kind;		/* enum stk_notify_kind */
	__u64 addr;		/* STK_NOTIFY_MAPS: the address in none of the known mappings, */
	__u64 ts_ns;		/* met then (bpf_ktime_get_ns()); STK_NOTIFY_EXEC: the new
				 * image's stamp, as in struct stk_key image_ns */
	__u32 check;		/* STK_NOTIFY_PYCODE: the code object's stk_py_check() */
	__u32 pad;
};

/*
 * --snoop: one ring-buffer record per event (88 bytes). The stacks travel as hashes of
 * generation `gen`'s stacks map: user space resolves them as events arrive, and deletes a
 * generation's stacks only after the flip and grace period of docs/bpf.md 4.
 */
struct stk_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 uret;		/* as in struct stk_key */
	__u64 kret;
	__u64 kstack, ustack;	/* as in struct stk_key */
	__u32 tgid;
	__u32 pid;		/* thread id */
	__u32 probe;
	__u32 cpu;
	__s32 kerr, uerr;
	__u32 gen;		/* generation of the stacks map the hashes belong to */
	__u32 pad;
	char comm[STK_COMM_LEN];
};

/* ---- user stacks from CFI (docs/bpf.md 7) ---------------------------------------------------- */

/*
 * One row of a compact unwind table, built by stkrec from an object's .eh_frame or .debug_frame
 * (record/unwind/cfi.c) and read by the BPF walker: from `pc` up to the next row's pc, how to find
 * the caller's frame. A table is an array of rows sorted by pc; 8 bytes each, so libc's table is
 * about 220 KB and cc1's about 3.7 MiB.
 *
 * x86-64 only: the return address is at CFA - 8 (a row whose CFI says otherwise is
 * STK_CFA_UNSUPPORTED), but in a leaf's register (vfork's rdi, an exception return's rcx), and
 * the only callee-saved registers the walker needs are rbp and rbx (ld.so's lazy-binding
 * trampoline finds its CFA from rbx: STK_CFA_RBX).
 */
struct stk_urow {
	__u32 pc;	/* ELF virtual address minus the table's base address */
	__u16 cfa_off;	/* see enum stk_cfa */
	__u8 kind;	/* enum stk_cfa in bits 0-3, enum stk_rbp_rule in 4-5, stk_rbx_rule 6-7 */
	__s8 rbp_off;	/* rbp's save slot, in 8-byte words (see enum stk_rbp_rule), or rbx's
			 * (STK_RBX_AT_CFA) */
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
	STK_CFA_RSP8 = 8,	/* a frame over 64 KiB: CFA = rsp + 8 * cfa_off */
	/*
	 * glibc's vfork: `pop %rdi` keeps the return address in rdi across the system call (the
	 * child shares the stack and would overwrite it): CFA = rsp + cfa_off, the return address
	 * is rdi. The event's rdi is known at the leaf only: elsewhere the stack ends, counted.
	 */
	STK_CFA_RA_RDI = 9,
	/*
	 * CFA = rbx + cfa_off: ld.so's _dl_runtime_resolve_* and _dl_tlsdesc_dynamic_* keep their
	 * entry rsp in rbx while they realign the stack for xsave. rbx is the event's, or restored
	 * through the callee frames' rbx rules (enum stk_rbx_rule); a walk that lost it ends here.
	 */
	STK_CFA_RBX = 10,
	/*
	 * libgcc's exception return (__builtin_eh_return, in _Unwind_RaiseException and its
	 * siblings): `mov %rcx,%rsp` with CFA = rcx + cfa_off (STK_CFA_RCX), then `pop %rcx; jmp
	 * *%rcx` into the landing pad, the return address in rcx and CFA = rsp + cfa_off
	 * (STK_CFA_RA_RCX). The event's rcx is known at the leaf only (not in a system call, which
	 * clobbers it): elsewhere the stack ends, counted, as with STK_CFA_RA_RDI.
	 */
	STK_CFA_RCX = 11,
	STK_CFA_RA_RCX = 12,
	STK_CFA__COUNT
};

/* Where the caller's rbp is. */
enum stk_rbp_rule {
	STK_RBP_SAME = 0,	/* unchanged (not saved by this frame) */
	STK_RBP_AT_CFA = 1,	/* saved at CFA + 8 * rbp_off */
	STK_RBP_AT_RBP = 2,	/* saved at rbp + 8 * rbp_off (DW_CFA_expression breg6) */
};

/*
 * Where the caller's rbx is. The row has one slot byte, rbp_off, and gcc saves rbx by a push
 * right after rbp's, or without saving rbp: these two shapes cover 99.8% of the rows that save
 * rbx in libc, ld.so, cc1, as and bash. Others (frame-pointer functions that push r12-r15
 * between rbp and rbx, expressions) are STK_RBX_LOST: the walk goes on without rbx, and only a
 * CFA from rbx further out ends there.
 */
enum stk_rbx_rule {
	STK_RBX_SAME = 0,	/* unchanged (not saved by this frame) */
	STK_RBX_AT_CFA = 1,	/* saved at CFA + 8 * rbp_off; rbp's rule is STK_RBP_SAME */
	STK_RBX_BELOW_RBP = 2,	/* saved at CFA + 8 * (rbp_off - 1), below rbp (STK_RBP_AT_CFA) */
	STK_RBX_LOST = 3,	/* saved where the row cannot say: unknown further out */
};

#define STK_UROW_CFA(kind) ((kind) & 0x0f)
#define STK_UROW_RBP(kind) (((kind) >> 4) & 3)
#define STK_UROW_RBX(kind) ((kind) >> 6)
#define STK_UROW_KIND(cfa, rbp, rbx) ((__u8)((cfa) | ((rbp) << 4) | ((rbx) << 6)))


/*
 * The executable mappings of one process, for the walker (map unwind_procs, key: tgid): sorted
 * by start. stkrec writes a whole value at a time (the map is not preallocated, so an update
 * replaces the element and a program never sees half of one).
 */
#define STK_MAX_UMAPS 512

struct stk_umap {
	__u64 start, end;
	__u64 bias;		/* pc - bias = the pc's offset in the object's table (rows' pc) */
	__u32 first;		/* first row of the table in its chunk */
	__u32 nrows;		/* 0: no table: frame pointers, or stop (see flags) */
	__u32 flags;		/* STK_UMAP_F_* */
	__u32 chunk;		/* the slot of unwind_chunks whose array holds the rows */
};

#define STK_UMAP_F_LIMIT 0x1u	/* the table did not fit in --unwind-memory */

/* ---- interpreter frames: CPython (docs/bpf.md 10) ------------------------------------------- */

/* Python frames one event's chain holds (struct stk_pychain). */
#define STK_PY_FRAMES 64

/*
 * A Python frame in a stack BPF stores: two words, STK_PYWORD(check, lasti) then the code
 * object's address. The tag byte is no user address (they end below 2^56) and no kernel one.
 */
#define STK_PYWORD_TAG 0xfe00000000000000ull
#define STK_PYWORD_IS(w) (((w) >> 56) == 0xfe)
#define STK_PYWORD(check, lasti)							\
	(STK_PYWORD_TAG | ((__u64)((check) & STK_PY_CHECK_MASK) << 32) | (__u32)(lasti))
#define STK_PYWORD_CHECK(w) ((__u32)((w) >> 32) & STK_PY_CHECK_MASK)
#define STK_PYWORD_LASTI(w) ((__u32)(w))
#define STK_PY_LASTI_NONE 0xffffffffu	/* the frame has run no instruction yet */

/*
 * A digest of a code object's fields, stored with its address in every frame: a code object
 * freed and another made at its address (OpenTelemetry's profiler checks the same fields) gets
 * another digest, and stkrec, which reads the names later, names a frame only when the object
 * it reads still has the digest the frame has.
 */
#define STK_PY_CHECK_MASK 0xffffffu
static inline __u32 stk_py_check(__u32 firstlineno, __u32 argcount, __u32 kwonly, __u32 flags)
{
	__u32 h = firstlineno * 2654435761u ^ argcount * 40503u ^ kwonly * 2246822519u ^
		  flags * 3266489917u;

	return (h ^ (h >> 15)) & STK_PY_CHECK_MASK;
}

/* Why a thread's Python frame chain ends (struct stk_pychain stop, struct stk_stack pystop). */
enum stk_pystop {
	STK_PYSTOP_NONE = 0,		/* no chain: not a Python process, or --python-frames native */
	STK_PYSTOP_COMPLETE,		/* every frame, to the first */
	STK_PYSTOP_TRUNCATED,		/* more than STK_PY_FRAMES frames */
	STK_PYSTOP_READ_FAULT,		/* interpreter memory not readable */
	STK_PYSTOP_BAD_FRAME,		/* a frame whose code is no code object */
	STK_PYSTOP_NO_THREAD,		/* an interpreter activation, but no thread state found */
	STK_PYSTOP__COUNT
};

/* One frame of a chain */
struct stk_pyframe {
	__u64 code;		/* the code object's address */
	__u32 lasti;		/* instruction index (code units), STK_PY_LASTI_NONE */
	__u32 check;		/* stk_py_check() */
};

/* Activations of _PyEval_EvalFrameDefault one event's chain holds (struct stk_pychain). */
#define STK_PY_ACTS 32

/*
 * One activation of the interpreter's evaluation function and the frames it runs: the walker
 * splices them after the native frame of the activation whose stack frame holds `at`
 * (docs/bpf.md 10).
 */
struct stk_pyact {
	__u64 at;		/* the activation's mark on the C stack: its _PyCFrame (3.11) or
				 * its shim frame (3.12+) */
	__u32 end;		/* its frames are f[the previous activation's end .. end) */
	__u32 pad;
};

/*
 * A thread's Python frames, innermost first, in activations, as BPF read them at an event. A
 * deferred event's chain precedes it in the deferred ring (magic tells it from struct
 * stk_deferred, whose first word is a tgid, and from struct stk_deferred_time): the walker in
 * stkrec splices it as BPF's does. Sent as long as its n frames.
 */
#define STK_PYCHAIN_MAGIC 0xfffffffeu

struct stk_pychain {
	__u32 magic;		/* STK_PYCHAIN_MAGIC */
	__u32 tid;
	__u32 n;		/* frames in f */
	__u32 stop;		/* enum stk_pystop */
	__u32 nact;		/* activations in act, innermost first */
	__u32 pad;
	struct stk_pyact act[STK_PY_ACTS];
	struct stk_pyframe f[STK_PY_FRAMES];
};

/* How the activations of _PyEval_EvalFrameDefault are told apart, and where each is marked. */
enum stk_pyentry {
	STK_PYENTRY_FLAG = 1,	/* 3.11: the byte at fr_entry is not 0 (is_entry) in the first
				 * frame of an activation; its mark is its _PyCFrame, on the C
				 * stack: the thread state's cframe, then each one's previous */
	STK_PYENTRY_SHIM = 2,	/* 3.12+: a frame whose byte at fr_entry (owner) is entry_value
				 * (FRAME_OWNED_BY_CSTACK) ends the activation; it runs no code */
};

/* Bytes BPF reads of a frame and of a code object: every offset below + 8 fits. */
#define STK_PY_READ 80

/*
 * Where an interpreter keeps what the walk reads: byte offsets, one set per CPython version
 * (record/python/python.c holds the table). 0xffff: the field does not exist in this version.
 */
struct stk_pylayout {
	__u16 rt_tstate;	/* _PyRuntime: the thread state holding the GIL (3.11) */
	__u16 rt_interp;	/* _PyRuntime: the first interpreter (interpreters.head) */
	__u16 interp_threads;	/* PyInterpreterState: its first thread state (threads.head) */
	__u16 ts_next;		/* PyThreadState: the next thread state */
	__u16 ts_tid;		/* PyThreadState: native_thread_id */
	__u16 ts_cframe;	/* PyThreadState: cframe (3.11, 3.12); 0xffff: the current frame
				 * is in the thread state itself (3.13+) */
	__u16 cur_frame;	/* _PyCFrame (or PyThreadState): current_frame */
	__u16 cf_previous;	/* _PyCFrame: previous (STK_PYENTRY_FLAG only) */
	__u16 fr_code;		/* _PyInterpreterFrame: f_code (f_executable) */
	__u16 fr_previous;
	__u16 fr_instr;		/* prev_instr (instr_ptr): index = (ptr - first instruction) / 2 */
	__u16 fr_entry;		/* is_entry (3.11) or owner (3.12+): enum stk_pyentry */
	__u16 co_firstlineno;	/* PyCodeObject */
	__u16 co_argcount;
	__u16 co_kwonly;
	__u16 co_flags;
	__u16 co_code;		/* the first instruction (co_code_adaptive) */
	__u8 entry_kind;	/* enum stk_pyentry */
	__u8 entry_value;
	__u16 version;		/* major << 8 | minor of the table entry (stkrec's own reads) */
	/* what BPF copies of a code object at its first sight (struct stk_pycode): */
	__u8 str_ascii;		/* sizeof(PyASCIIObject): an ASCII string's bytes follow */
	__u8 str_compact;	/* sizeof(PyCompactUnicodeObject): other strings' bytes follow */
	__u16 co_filename;	/* PyCodeObject: its str objects and its line table (bytes) */
	__u16 co_qualname;
	__u16 co_linetable;
	__u16 pad;
};

/* A Python process for the walker (struct stk_uproc py): 0 runtime, not one. */
struct stk_pyproc {
	__u64 runtime;		/* address of _PyRuntime */
	__u64 code_type;	/* address of PyCode_Type: every frame's code object has it */
	__u64 eval_start, eval_end;	/* _PyEval_EvalFrameDefault */
	struct stk_pylayout l;
};

/*
 * A code object BPF met first, with what stkrec names it by, copied in the traced task at that
 * moment (bpf/python.bpf.h py_send_code()): a short-lived process may be gone, or have freed
 * the object, before stkrec's thread could read it (process_vm_readv()). Each object is copied
 * from its start (the str's head, then its characters; the bytes object's head, then its
 * bytes), as far as the process let BPF read it and up to the array's size: stkrec decodes
 * them as it decodes its own reads, and reads from the process only what is missing.
 */
#define STK_PYCODE_STR 512	/* a name's or file name's str object: head (72) + characters */
#define STK_PYCODE_LINES 1024	/* a line table's bytes object: head (32) + bytes */

struct stk_pycode {
	struct stk_notify n;	/* STK_NOTIFY_PYCODE: tgid, addr (the code object), check */
	__u16 version;		/* stk_pylayout version the copy is of; 0: nothing copied */
	__u16 name_len;		/* bytes of name, file, lines copied (0: not read) */
	__u16 file_len;
	__u16 lines_len;
	__u32 firstline;	/* co_firstlineno */
	__u32 pad;
	__u64 name_at, file_at, lines_at;	/* the objects' addresses: where the rest is */
	__u8 name[STK_PYCODE_STR];	/* co_qualname */
	__u8 file[STK_PYCODE_STR];	/* co_filename */
	__u8 lines[STK_PYCODE_LINES];	/* co_linetable */
};

/*
 * An interpreter executable's CPython, for a process stkrec has not set up yet (map py_exes,
 * key struct stk_pyexe_key): BPF walks the chain of a process without an unwind_procs entry
 * with it (bpf/python.bpf.h py_exe_proc()), its addresses moved by the process's load bias,
 * mm->start_code - text (0 for a non-PIE executable, ELF type EXEC). Only an executable that
 * holds the runtime itself: a python linked to libpython waits for stkrec's read (its
 * library's address is not in mm_struct).
 */
struct stk_pyexe_key {
	__u64 ino;		/* mm->exe_file's inode number */
	__u32 dev;		/* and its superblock's s_dev (the kernel's encoding: major << 20 |
				 * minor) */
	__u32 pad;
};

struct stk_pyexe {
	struct stk_pyproc py;	/* at the file's own addresses (load bias 0) */
	__u64 text;		/* vaddr of its first executable PT_LOAD (mm->start_code at bias 0) */
};

struct stk_uproc {
	__u32 n;
	__u32 asked;		/* set by BPF when it sent STK_NOTIFY_MAPS; reset by an update */
	/*
	 * Set by stkrec when a re-read asked for an address found it in none of the mappings: it
	 * is not a mapping stkrec missed (a frame-pointer step into garbage), so BPF neither asks
	 * again nor defers such events.
	 */
	__u32 settled;
	__u32 pad;
	struct stk_pyproc py;	/* the CPython of the process, if any (record/python/) */
	struct stk_umap maps[STK_MAX_UMAPS];
};

/*
 * An event whose user stack the walker could not finish because the process or a mapping was
 * not known yet (its first events, a library just mapped): BPF sends its registers and the top
 * of its stack through the `deferred` ring buffer instead of counting it, and stkrec walks it
 * with the same tables once it has read the process (record/unwind/unwind.c), then counts it.
 */
/*
 * Bytes of user stack copied, from sp up: perf's largest (its default is 8 KiB). gcc's cc1 and
 * bash recurse past 8 KiB at their start, where events are deferred, and cc1's frames of 4-8
 * KiB take it past 32 KiB in 0.7% of its samples, past 64 KiB in 0.09% (two compile loops).
 */
#define STK_DEFER_STACK 65536
/* A thread other than the main one, whose stack has no bound BPF knows (defer_stack_bytes()) */
#define STK_DEFER_THREAD_STACK 16384
/* The copy's pieces (struct stk_deferred holes): each ends on a multiple of this in the address. */
#define STK_DEFER_PIECE 1024

/* BPF programs nested on one CPU that each have a scratch slot (bpf/stkrec.bpf.c) */
#define STK_NEST_MAX 4

struct stk_deferred {
	struct stk_key key;	/* as it would have been counted; the user stack fields unused */
	__u64 pc, sp, bp;	/* user registers at the event */
	__u64 di;		/* rdi: the return address in a STK_CFA_RA_RDI leaf */
	__u64 bx;		/* rbx: for a STK_CFA_RBX frame */
	__u64 cx;		/* rcx: a STK_CFA_RCX or STK_CFA_RA_RCX leaf's */
	__u64 ts_ns;		/* bpf_ktime_get_ns() at the event */
	__u32 gen;		/* generation whose stacks map holds key.kstack */
	__u32 len;		/* bytes of stack copied */
	__u32 entry;		/* the leaf is a function's first instruction (uprobe) */
	__u32 cpu;		/* --snoop: the event's CPU (its time is ts_ns) */
	/*
	 * Bytes from sp the copy spans, holes included, when it stopped at its size limit rather
	 * than at the stack's start: a walk that reads past them is cut by the copy (0: it was not).
	 */
	__u32 limit;
	__u32 syscall;		/* 1: the event came in a system call, pc follows its instruction */
	/*
	 * Bit i: piece i was not read (not present): stack holds sp's bytes up to the next
	 * STK_DEFER_PIECE boundary of the address (piece 0), then STK_DEFER_PIECE bytes a piece;
	 * len ends after the last piece read. 64 pieces at most.
	 */
	__u64 holes;
	__u8 stack[STK_DEFER_STACK];
};

/*
 * --offcpu: a task whose user stack was deferred (struct stk_deferred, at its switch-out) ran
 * again after blocking for us microseconds: stkrec adds them to that stack. The deferred ring
 * carries both records: they differ in size.
 */
struct stk_deferred_time {
	__u32 tid;
	__u32 pad;
	__u64 us;
};

/* --unwind: how user stacks are walked. */
enum stk_unwind {
	STK_UNWIND_FP = 0,	/* frame pointers, by the kernel (bpf_get_stack) */
	STK_UNWIND_CFI = 1,	/* CFI tables only: code without CFI ends the stack */
	STK_UNWIND_AUTO = 2,	/* CFI where the object has it, frame pointers otherwise */
};

/*
 * bpf/ksyms.bpf.c names kernel addresses in batches of this many: "name+0xOFF/0xSIZE [module]"
 * (KSYM_NAME_LEN is 512 since 6.1, a module name 56) or "0xADDR" where no symbol holds one.
 */
#define STK_KSYMNAME_BATCH 64
#define STK_KSYMNAME_TEXT 640

#endif /* STK_ABI_H */

