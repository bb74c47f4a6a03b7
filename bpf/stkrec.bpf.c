// SPDX-License-Identifier: GPL-2.0
/*
 * stkrec.bpf.c: count (process, thread, probe, kernel stack, user stack, comm) in the kernel.
 *
 * Every trigger (perf timer, tracepoint, uprobe, USDT, kprobe) calls count_event_at() with the
 * probe id, which user space put in the BPF cookie of the attachment. Stacks are copied into a
 * per-CPU scratch slot (bpf_get_stack(), or the CFI walker of unwind.bpf.h for user stacks),
 * hashed, and stored once per generation in a hash map keyed by that hash; the counts map counts
 * the keys that name those hashes, by a digest of each key. Two generations of maps
 * (counts0/stacks0, counts1/stacks1) let user space drain one while the programs fill the
 * other: see docs/bpf.md, "drain protocol".
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "stk/abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Knobs set by stkrec between skeleton open and load; the verifier sees them as constants. */
const volatile bool cfg_filter_tgid = false;	/* only tgids in the tgids map (-p, -- COMMAND) */
const volatile bool cfg_inherit = false;	/* and their descendants (on_fork(), on_exit()) */
const volatile bool cfg_filter_tid = false;	/* only threads in the tids map (-L) */
const volatile __s32 cfg_cpu = -1;	/* -C (stackcount's -c): events of this CPU only */
const volatile bool cfg_kstacks = true;		/* false with -U */
const volatile bool cfg_ustacks = true;		/* false with -K */
const volatile bool cfg_skip_idle = false;	/* sampling without -I: drop pid 0 */
const volatile bool cfg_snoop = false;		/* --snoop: every event to the events ring */
const volatile __u32 cfg_depth = STK_DEFAULT_DEPTH;	/* frames per stack, <= STK_MAX_DEPTH */
const volatile __u64 cfg_hash_seed = 0;		/* random per run: stack hashes are keyed */
const volatile bool cfg_defer = false;		/* walk unfinished user stacks in user space */
const volatile bool cfg_defer_all = false;	/* and every other (STKREC_DEFER=all: tests) */
const volatile bool cfg_retry = false;		/* the kernel has BPF task work (retry_walk()) */
/* The new entries of one generation at which its stacks or counts map is over half full. */
const volatile __u64 cfg_stacks_half = 0;
const volatile __u64 cfg_keys_half = 0;

/*
 * State shared with user space, in .bss so the skeleton mmaps it (docs/bpf.md 4):
 * gen_seq counts the flips (the generation counting now is gen_seq & 1); user space sets
 * drained_seq to gen_seq once it starts draining the previous generation, so a program that
 * read an older gen_seq and is still running then has counted into a drained generation.
 * nstacks/nkeys count new entries per generation, so user space drains early when one fills.
 * seen_epoch changes when an exec or exit makes a tgid "unseen" again (see note_first_seen).
 */
__u32 gen_seq;
__u32 drained_seq;
__u64 nstacks[2];
__u64 nkeys[2];
__u32 seen_epoch;

#define COUNTS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, 40960);				\
		__type(key, __u64);	/* key_digest() */		\
		__type(value, struct stk_count);			\
	} name SEC(".maps")

/*
 * struct stk_stack values, resized by stkrec to 8 + depth * 8 bytes before load: sizes, not BTF
 * types, since the kernel checks a BTF value type against value_size.
 */
#define STACKS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, 16384);				\
		__uint(key_size, sizeof(__u64));			\
		__uint(value_size, sizeof(struct stk_stack));		\
	} name SEC(".maps")

COUNTS_MAP(counts0);
COUNTS_MAP(counts1);
STACKS_MAP(stacks0);
STACKS_MAP(stacks1);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STK_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * The traced processes (enum stk_tgid_filter): -p's, the -- COMMAND child, and with cfg_inherit
 * every process they start (on_fork()), until its last thread exits (on_exit()). Not
 * preallocated: a build starts thousands of processes over its run, a few dozen at a time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} tids SEC(".maps");

/* Tgids user space has been told about; LRU so a long run never fills it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

/*
 * The last tgid this CPU found in `seen`, with the seen_epoch it was found in and its image stamp
 * (exec_ns). A per-CPU value: only programs of this CPU write it, one at a time but for nesting,
 * and a nested program that finds a half-written pair takes it for a miss (mark checked last).
 */
struct seen_cache {
	__u64 mark;		/* seen_epoch << 32 | tgid */
	struct stk_image image;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct seen_cache);
} seen_last SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} notify SEC(".maps");

/* Events whose user stack waits for tables stkrec has not published yet (struct stk_deferred). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* sized by stkrec when cfg_defer is set */
} deferred SEC(".maps");

/* ---- --snoop (per-event mode) ---------------------------------------------------------------- */

/* One struct stk_event per event; stkrec sizes it from --ringbuf-size (a page when unused). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/* Events lost to a full ring buffer, per CPU: stored in the capture, never lost silently. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} snoop_drops SEC(".maps");

/* UAPI flag of bpf_ringbuf_submit() (linux/bpf.h BPF_RB_NO_WAKEUP), a stable number. */
#define STK_RB_NO_WAKEUP 1

static __always_inline void stat_add(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	/*
	 * A per-CPU slot: no atomic. A preempted uprobe program can lose an increment to another
	 * program on the same CPU; these counters describe losses, they are not the counts.
	 */
	if (v)
		*v += 1;
}

/* A struct stk_notify into the notify ring; false: it was full. */
static __always_inline bool send_notify_at(__u32 tgid, __u32 kind, __u64 addr, __u64 ts_ns)
{
	struct stk_notify *n = bpf_ringbuf_reserve(&notify, sizeof(*n), 0);

	if (!n) {
		stat_add(STK_STAT_NOTIFY_DROPPED);
		return false;
	}
	n->tgid = tgid;
	n->kind = kind;
	n->addr = addr;
	n->ts_ns = ts_ns;
	n->check = 0;	/* STK_NOTIFY_PYCODE's alone: python.bpf.h sends those itself */
	n->pad = 0;
	bpf_ringbuf_submit(n, 0);
	return true;
}

static __always_inline bool send_notify(__u32 tgid, __u32 kind, __u64 addr)
{
	return send_notify_at(tgid, kind, addr, bpf_ktime_get_ns());
}

/* Mix one frame into a stack's hash (word-wise, keyed by the per-run seed). */
static __always_inline __u64 hash_frame(__u64 h, __u64 ip)
{
	h = ((h << 5) | (h >> 59)) ^ ip;
	return h * 0x9e3779b97f4a7c15ull;
}

/* A stack's hash, finished with its length and stop reason; never 0 (0 means "no stack"). */
static __always_inline __u64 stack_hash_end(__u64 h, __u32 n, __u32 stop)
{
	return hash_frame(h, ((__u64)stop << 32) | n) | 1;
}

#include "python.bpf.h"
#include "unwind.bpf.h"

/*
 * Scratch space for the two stacks of an event and the walk: 24 KiB (a per-CPU value may
 * have 32), far over the 512-byte BPF stack. Uprobe programs run preemptible and a perf-event
 * sample can interrupt a program on its CPU, so one slot per CPU is not enough: `nesting` hands
 * out slots by depth of nesting. A deferred event is built in its own slot of the same depth and
 * CPU (defer_slots): with its 64 KiB of stack it does not fit beside the rest, nor in a per-CPU
 * value.
 */

struct scratch {
	struct stk_stack k, u;
	struct uwalk walk;	/* the user-stack walker's state (unwind.bpf.h) */
	struct stk_pychain py;	/* the thread's Python frames (python.bpf.h), for the walk */
	struct pywalk pyw;	/* their walk's state */
	__u64 py_seen[PY_SEEN_HINTS];	/* code objects told to stkrec lately (py_note_code()) */
	__u32 level;		/* the slot's nesting depth: its defer_slots entry */
	__u32 stored_seq;	/* the generation (gen_seq) the hashes below were stored in */
	__u64 stored[2];	/* the last kernel and user stack stored from this slot in it */
	struct stk_count fresh;	/* a new counts entry, built here */
	struct stk_key ended;	/* --offcpu: the key of a block that ends, out of its entry */
	/* --offcpu: the switched-out task's registers (user_regs(), read only by the walk and a
	 * deferral after it); on the BPF stack, 6.1 counted 544 bytes in on_sched_switch's calls,
	 * over its 512 */
	struct uregs regs;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STK_NEST_MAX);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/*
 * A deferred event per scratch slot, built here and sent by its length: slot CPU x STK_NEST_MAX
 * + level (stkrec sets max_entries to STK_NEST_MAX x possible CPUs).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STK_NEST_MAX);
	__type(key, __u32);
	__type(value, struct stk_deferred);
} defer_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} nesting SEC(".maps");

/*
 * The event carries stack hashes, not stacks: they are stored in generation g's stacks map,
 * which user space clears only after flipping away from g, waiting out the grace period and
 * reading the ring to its end; an 88-byte record keeps the ring buffer's cost per event low.
 */
static __always_inline void snoop_event(const struct stk_key *key, __u32 g)
{
	struct stk_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u32 zero = 0;
	__u64 *drops;

	if (!e) {
		drops = bpf_map_lookup_elem(&snoop_drops, &zero);
		if (drops)
			*drops += 1;	/* per-CPU slot: no atomic needed */
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->uret = key->uret;
	e->kret = key->kret;
	e->kstack = key->kstack;
	e->ustack = key->ustack;
	e->tgid = key->tgid;
	e->pid = key->pid;
	e->probe = key->probe;
	e->cpu = bpf_get_smp_processor_id();
	e->kerr = key->kerr;
	e->uerr = key->uerr;
	e->gen = g;
	e->pad = 0;
	__builtin_memcpy(e->comm, key->comm, sizeof(e->comm));
	/*
	 * Never wake the reader: a wakeup is an irq_work whose self-IPI is a VM exit under
	 * virtualisation, and it cost more than the rest of the event. stkrec's reader never waits
	 * for one: it reads the ring every 5 ms (record/write/snoop.c), and the default 16 MiB ring
	 * holds 20 ms of 10 million events per second.
	 * (Forcing a wakeup above a fill level was tried: while the reader catches up every event
	 * forces one again.)
	 */
	bpf_ringbuf_submit(e, STK_RB_NO_WAKEUP);
}

/* The image of tgid: its last exec or fork BPF saw, else zeroes. */
static __always_inline struct stk_image image_of(__u32 tgid)
{
	struct stk_image *v = bpf_map_lookup_elem(&exec_ns, &tgid), none = {};

	return v ? *v : none;
}

/*
 * Nearly every event is of a tgid seen just before on the same CPU: a per-CPU compare saves
 * the LRU lookups. on_exec()/on_exit() delete the tgid from `seen` and then bump seen_epoch,
 * which voids every CPU's cached tgid (a CPU that reads the new epoch finds the tgid gone);
 * on_exec() and on_fork() stamp exec_ns before any bump, so the cached stamp is voided with it.
 * Returns the tgid's image stamp.
 */
static __always_inline struct stk_image note_first_seen(__u32 tgid)
{
	__u32 zero = 0;
	struct seen_cache *last = bpf_map_lookup_elem(&seen_last, &zero);
	__u64 mark = ((__u64)*(volatile __u32 *)&seen_epoch << 32) | tgid;
	struct stk_image image;
	__u8 one = 1;

	if (last && *(volatile __u64 *)&last->mark == mark)
		return last->image;
	image = image_of(tgid);
	/* A lookup is lock-free, while an update takes the bucket lock even when it fails. */
	if (!bpf_map_lookup_elem(&seen, &tgid)) {
		if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST))
			return image;	/* another CPU inserted it meanwhile (or the LRU is busy) */
		/* Forget it when the message was dropped, so a later event tries again. */
		if (!send_notify(tgid, STK_NOTIFY_SEEN, 0)) {
			bpf_map_delete_elem(&seen, &tgid);
			return image;
		}
	}
	if (last) {
		last->mark = 0;		/* a nested program sees a miss, not a half-written pair */
		last->image = image;
		*(volatile __u64 *)&last->mark = mark;
	}
	return image;
}

/* Global, checked once (see walk_user()): inline, the verifier walked its loop per caller. */
__noinline __u64 hash_frames(const struct stk_stack *s, __u32 n)
{
	__u64 h = cfg_hash_seed;

	if (!s)
		return 0;	/* never: for the verifier */

	for (__u32 i = 0; i < STK_MAX_DEPTH; i++) {
		if (i >= n || i >= cfg_depth)
			break;
		h = hash_frame(h, s->ips[i]);
	}
	return stack_hash_end(h, n, s->stop);
}

/*
 * Copy a stack with bpf_get_stack() (the kernel's walk) into s; returns its hash, or 0 with
 * *err set. flags: BPF_F_USER_STACK, and kernel frames to skip.
 */
static __always_inline __u64 copy_stack(void *ctx, struct stk_stack *s, __u64 flags, __s32 *err)
{
	long bytes = bpf_get_stack(ctx, s->ips, cfg_depth * sizeof(__u64), flags);

	if (bytes <= 0) {
		*err = bytes ? bytes : -EFAULT;
		return 0;
	}
	s->nr = bytes / sizeof(__u64);
	s->stop = STK_STOP_NONE;
	s->pystop = STK_PYSTOP_NONE;
	return hash_frames(s, s->nr);
}

/* Where the user registers of an event are (user_regs()). */
enum uregs_from {
	UREGS_CTX,		/* ctx is the user pt_regs (uprobe, USDT) */
	UREGS_SAMPLE,		/* ctx is a perf-event sample: its regs, if it hit user mode */
	UREGS_TASK,		/* the event is in the kernel: the task's saved user regs */
};

/* A perf-event sample that hit user mode (CPL 3 in cs). */
static __always_inline bool sample_in_user(void *ctx, enum uregs_from from)
{
	struct bpf_perf_event_data *pe = ctx;

	return from == UREGS_SAMPLE && (pe->regs.cs & 3);
}

/* The registers the walk starts from: the event's ctx, or the task's saved user registers. */
static __always_inline void user_regs(void *ctx, enum uregs_from from, struct uregs *r)
{
	struct bpf_perf_event_data *pe = ctx;
	struct pt_regs *regs = ctx;
	__u64 pc, sp, bp, di, bx, cx, orig_ax;

	if (sample_in_user(ctx, from)) {
		r->pc = pe->regs.ip;
		r->sp = pe->regs.sp;
		r->bp = pe->regs.bp;
		r->di = pe->regs.di;
		r->bx = pe->regs.bx;
		r->cx = pe->regs.cx;
		return;
	}
	if (from == UREGS_CTX) {
		r->pc = PT_REGS_IP(regs);
		r->sp = PT_REGS_SP(regs);
		r->bp = regs->bp;
		r->di = regs->di;
		r->bx = regs->bx;
		r->cx = regs->cx;
		return;
	}
	/*
	 * A BTF pointer: plain loads, not three bpf_probe_read_kernel() calls. The empty asm keeps
	 * clang from merging them with the ctx loads above into loads from a pointer chosen at run
	 * time, which the verifier rejects ("dereference of modified ctx ptr").
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	pc = regs->ip;
	sp = regs->sp;
	bp = regs->bp;
	di = regs->di;
	bx = regs->bx;
	cx = regs->cx;
	orig_ax = regs->orig_ax;	/* the system call's number, or -1 (an interrupt, a fault) */
	barrier_var(pc);
	barrier_var(sp);
	barrier_var(bp);
	barrier_var(di);
	barrier_var(bx);
	barrier_var(cx);
	barrier_var(orig_ax);
	r->pc = pc;
	r->sp = sp;
	r->bp = bp;
	r->di = di;
	r->bx = bx;
	r->cx = cx;
	r->in_syscall = (__s64)orig_ax >= 0;
}

/*
 * 0, the hash of no stack, as the verifier sees a number it does not know: s's frame count,
 * set to 0 and read back. A known 0 made it check all that follows a stack's hashing twice,
 * with a stack and without (on_sample on 6.18: 4,500 processed instructions of 12,700 for the
 * kernel stack, 900 of 8,200 for the user stack); with an unknown one the check with a stack
 * stops where the two paths meet. A store and a load, only for an event without that stack.
 */
static __always_inline __u64 no_stack(struct stk_stack *s)
{
	s->nr = 0;
	return *(volatile __u16 *)&s->nr;
}

/*
 * walk_user_stack() into sc, as a global function: the verifier checks a global function once,
 * on its own; inlined, the walk's callbacks were checked in states carrying the whole program's
 * frame, and on_sample took twice as long to load (docs/bpf.md 7). To the verifier a global
 * function's pointer arguments may be NULL. The hash of a walk is never 0.
 */
__noinline __u64 walk_user(struct scratch *sc, const struct uregs *r, __u32 tgid, bool entry)
{
	if (!sc || !r)
		return 0;
	return walk_user_stack(tgid, r, entry, &sc->walk, sc->level, &sc->u, &sc->py, &sc->pyw,
			       sc->py_seen);
}

/* The user stack into sc->u: its hash, or 0 with *err set. */
static __always_inline __u64 user_stack(void *ctx, const struct uregs *r, __u32 tgid, bool entry,
					struct scratch *sc, __s32 *err)
{
	struct stk_stack *s = &sc->u;
	__u64 h;

	if (cfg_unwind == STK_UNWIND_FP)
		h = copy_stack(ctx, s, BPF_F_USER_STACK, err);
	else
		h = walk_user(sc, r, tgid, entry);
	if (!h)
		stat_add(STK_STAT_USTACK_MISSING);
	return h;
}

/*
 * The current task has no user stack: a kernel thread, or a task inside execve() between two
 * images, from exec_mmap(), which drops the old address space, until load_elf_binary() has
 * loaded the new one and sets its code bounds (mm->end_code, 0 in a new mm until then), just
 * before the new registers. The saved user registers are then still the old image's, whose
 * stack and code are gone: a walk from them reads the new image's memory. The BTF task pointer
 * lets the verifier turn the reads into plain loads: two bpf_probe_read_kernel() calls cost
 * 30-40 ns an event.
 */
static __always_inline bool no_user_stack(__u64 image_mm)
{
	struct task_struct *task = bpf_get_current_task_btf();
	/*
	 * task->mm loaded once: for each load of a pointer from a BTF object the verifier searches
	 * the kernel's BTF by name (btf_nested_type_is_trusted), some 8% of a 1 s recording's CPU
	 * with two loads here; clang does not merge two CO-RE reads of one field.
	 */
	struct mm_struct *mm = task->mm;

	if (!mm || (task->flags & PF_KTHREAD) || !mm->end_code)
		return true;
	/*
	 * Another mm than the stamped image's: an exec past that point, not stamped yet (between
	 * load_elf_binary() and on_exec()'s stamp). The registers are the new image's entry, of
	 * which stkrec has no record under the old stamp: named against the old image, such
	 * samples were a frame "outside any mapping" (2-8 a minute in the compile loops).
	 */
	return image_mm && (__u64)mm != image_mm;
}

/*
 * Is there a user stack to take? If not, *err says why (STK_STACK_*). from: an event whose ctx
 * holds user registers (uprobe, USDT) is in a user task, running its image.
 */
static __always_inline bool user_stack_wanted(enum uregs_from from, __u64 image_mm, __s32 *err)
{
	if (!cfg_ustacks) {
		*err = STK_STACK_NOT_WANTED;
		return false;
	}
	if (from != UREGS_CTX && no_user_stack(image_mm)) {
		*err = STK_STACK_NONE;
		return false;
	}
	return true;
}

/*
 * The walk stopped only because stkrec has not read the process or a new mapping yet; or the
 * tests have stkrec walk every user stack, to check that its walker agrees with this one.
 */
static __always_inline bool walk_waits(const struct scratch *sc)
{
	return cfg_defer && (sc->walk.waits || cfg_defer_all);
}

/*
 * How many bytes above sp a deferred event copies: 64 KiB (16 on other threads), but on the
 * main thread no further than the stack's start (mm->start_stack, where argc sits: every frame
 * is below it). A short-lived process's first events, deferred in a burst
 * before stkrec has read it, are mostly shallow: small records let the ring hold several times
 * as many of them. *capped: the copy stops at its size limit, not at the stack's start.
 */
static __always_inline __u32 defer_stack_bytes(__u64 sp, bool *capped)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 top = BPF_CORE_READ(task, mm, start_stack);

	*capped = false;
	/* sp at the start itself: the program's entry, the word at sp its whole stack */
	if (top >= sp && top - sp < STK_DEFER_STACK)
		return top - sp + 8;	/* and the word at the start: the walk may read it */
	*capped = true;
	/*
	 * Another thread's stack has no bound known here, so each of its copies is whole: at 32
	 * KiB a burst of a 2-thread program's first events overflowed the 16 MiB ring
	 * (debugsyms.sh). Deep main threads (cc1) are what needs more than 16 KiB.
	 */
	if ((__u32)bpf_get_current_pid_tgid() != bpf_get_current_pid_tgid() >> 32)
		return STK_DEFER_THREAD_STACK;
	return STK_DEFER_STACK;
}

/* A deferred event's stack copy in the making (defer_event(), copy_piece()) */
struct defer_copy {
	struct stk_deferred *d;
	__u64 sp;
	__u32 skew, want;
	__u32 len, span;	/* bytes copied up to the last piece read; up to the last piece */
	__u64 holes;
};

/*
 * Piece i + 1 of the copy, whole (bpf_loop()): the verifier checks this once, where a loop of
 * 64 pieces it checked path by path: 50 ms of system time at every start (0.08 s against 0.03
 * s for a 1 s recording).
 */
static long copy_piece(__u32 i, void *ctx)
{
	struct defer_copy *c = ctx;
	__u32 at = (i + 1) * STK_DEFER_PIECE - c->skew;

	/* never past the copy: for the verifier, which knows neither i nor skew */
	barrier_var(at);
	if (c->span >= c->want || at > STK_DEFER_STACK - STK_DEFER_PIECE)
		return 1;
	if (bpf_probe_read_user(c->d->stack + at, STK_DEFER_PIECE, (void *)(c->sp + at)))
		c->holes |= 1ull << ((i + 1) & 63);
	else
		c->len = at + STK_DEFER_PIECE;
	c->span = at + STK_DEFER_PIECE;
	return 0;
}

/*
 * No room in the ring for a deferred event: it is counted with the stack BPF walked, which says
 * why it ends there. Counted as a miss of mappings, such stacks looked like a bug of the walk:
 * 6,060 of a short perl run's 14,879 c:malloc events, cut to the leaf while stkrec was late.
 */
static __always_inline void defer_failed(struct scratch *sc, struct stk_key *key)
{
	sc->u.stop = STK_STOP_DEFER_FULL;
	key->ustack = stack_hash_end(sc->walk.hash, sc->u.nr,
				     STK_STOP_DEFER_FULL | sc->u.pystop << 16);
}

/* A deferred event's Python chain, as long as its frames (the ring record before the event). */
static __always_inline bool send_chain(const struct stk_pychain *py)
{
	__u32 n = py->n;

	if (n > STK_PY_FRAMES)
		n = STK_PY_FRAMES;
	return !bpf_ringbuf_output(&deferred, (void *)py, offsetof(struct stk_pychain, f) +
				   n * sizeof(struct stk_pyframe), 0);
}

/*
 * Send the event to user space to walk later (struct stk_deferred, as long as the stack copied):
 * registers and the top of the stack. False when the ring buffer is full: the event is then
 * counted with the stack cut (defer_failed()). Global, checked once (see walk_user()).
 */
__noinline bool defer_event(struct scratch *sc, struct stk_key *key, const struct uregs *r, __u32 g,
			    bool entry)
{
	__u32 cpu = bpf_get_smp_processor_id(), slot, len;
	struct stk_deferred *d;
	struct defer_copy c;
	bool capped;

	if (!sc || !key || !r)
		return false;	/* never: for the verifier */
	/* the thread's Python frames go first: stkrec's walk splices them (record/unwind/) */
	if (sc->py.stop != STK_PYSTOP_NONE) {
		if (!send_chain(&sc->py)) {
			defer_failed(sc, key);
			return false;
		}
		py_note_chain(key->tgid, &sc->py, sc->py_seen, &sc->pyw);
	}
	slot = cpu * STK_NEST_MAX + sc->level;
	d = bpf_map_lookup_elem(&defer_slots, &slot);
	if (!d)
		return false;
	c = (struct defer_copy){ .d = d, .sp = r->sp, .skew = r->sp & (STK_DEFER_PIECE - 1),
				 .want = defer_stack_bytes(r->sp, &capped) };
	d->key = *key;
	d->ts_ns = bpf_ktime_get_ns();
	d->pc = r->pc;
	d->sp = r->sp;
	d->bp = r->bp;
	d->di = r->di;
	d->bx = r->bx;
	d->cx = r->cx;
	d->gen = g;
	d->entry = entry;
	d->syscall = r->in_syscall;
	d->cpu = cpu;
	/*
	 * In pieces that end on STK_DEFER_PIECE boundaries of the address, so that each lies in one
	 * page: the first from sp, the others whole. A piece that cannot be read (a page not present: the
	 * sample came in the fault that grows the stack under a 4-8 KiB frame, or in a frame's page
	 * never touched) is a hole the walk must not read; the copy ends after the last piece read.
	 */
	if (bpf_probe_read_user(d->stack, STK_DEFER_PIECE - c.skew, (void *)r->sp))
		c.holes = 1;
	else
		c.len = STK_DEFER_PIECE - c.skew;
	c.span = STK_DEFER_PIECE - c.skew;
	bpf_loop(STK_DEFER_STACK / STK_DEFER_PIECE - 1, copy_piece, &c, 0);
	d->len = c.len;
	d->holes = c.holes;
	d->limit = capped ? c.span : 0;
	/* for the verifier, to which c.len is any number: it is STK_DEFER_STACK at most */
	len = c.len & (2 * STK_DEFER_STACK - 1);
	if (len <= STK_DEFER_STACK &&
	    !bpf_ringbuf_output(&deferred, d, offsetof(struct stk_deferred, stack) + len, 0))
		return true;
	defer_failed(sc, key);
	return false;
}

/*
 * The kernel stack into s: its hash, or 0 with *err set. kskip: frames of BPF machinery. from:
 * an event whose ctx holds user registers (uprobe, USDT), or a sample of user mode, has no
 * kernel stack, and the kernel would tell so only after zeroing the whole buffer (80 ns an
 * event) or, for the sample, after a helper call that finds nothing (0.3 us): say it here.
 */
static __always_inline __u64 kernel_stack(void *ctx, enum uregs_from from, __u32 kskip,
					  struct stk_stack *s, __s32 *err)
{
	__u64 h;

	if (!cfg_kstacks) {
		*err = STK_STACK_NOT_WANTED;
		return 0;
	}
	if (from == UREGS_CTX || sample_in_user(ctx, from)) {
		*err = STK_STACK_NONE;
		return 0;
	}
	h = copy_stack(ctx, s, kskip & BPF_F_SKIP_FIELD_MASK, err);
	if (h)
		return h;
	/*
	 * -EFAULT: the event came from user mode (uprobe, USDT, a sample of user code): there is
	 * no kernel stack, and nothing was lost (bcc profile reads it so too).
	 */
	if (*err == -EFAULT)
		*err = STK_STACK_NONE;
	else
		stat_add(STK_STAT_KSTACK_ERROR);
	return no_stack(s);
}

/*
 * Count a generation's new map entry, and wake stkrec when it makes the map over half full: it
 * drains early (run.c). Without the wake-up it had to look at the counters ten times a second,
 * each look a context switch or two, most of a long recording's CPU.
 */
static __always_inline void count_new_entry(__u64 *n, __u64 half)
{
	if (__sync_fetch_and_add(n, 1) + 1 == half)
		send_notify(0, STK_NOTIFY_FILL, 0);
}

/*
 * Store stack s under hash h in a stacks map, once per generation. stacks must be a map the
 * verifier knows statically: always inline, called with a constant map (see count_in).
 */
static __always_inline void store_stack(void *stacks, __u64 *nstored, __u64 *h, __s32 *err,
					const struct stk_stack *s, __u32 full_stat)
{
	long ret;

	if (!*h || bpf_map_lookup_elem(stacks, h))
		return;
	ret = bpf_map_update_elem(stacks, h, s, BPF_NOEXIST);
	if (!ret) {
		count_new_entry(nstored, cfg_stacks_half);
	} else if (ret != -EEXIST) {	/* -EEXIST: stored by another CPU meanwhile */
		stat_add(full_stat);
		*err = ret;
		*h = 0;
	}
}

/*
 * store_stack() unless this slot stored the same stack in the same generation last time: a
 * loop hitting one probe repeats its stacks, and the map lookup is a good part of an event's
 * cost. The generation's map is cleared only after user space has flipped away from it, so a
 * stack stored under seq is still there while the event counts under seq.
 */
static __always_inline void store_stack_again(void *stacks, __u64 *nstored, __u64 *h, __s32 *err,
					      const struct stk_stack *s, __u32 full_stat,
					      __u64 *last)
{
	if (*h && *h == *last)
		return;
	store_stack(stacks, nstored, h, err, s, full_stat);
	*last = *h;
}

/*
 * The counts maps' key: a digest of the whole struct stk_key, keyed like the stack hashes. A
 * map keyed by the struct itself hashed (jhash) and compared its 80 bytes at every event, about
 * 50 ns; two keys with one digest would be counted as one, as unlikely as two stacks with one
 * hash (docs/bpf.md 2).
 */
static __always_inline __u64 key_digest(const struct stk_key *key)
{
	const __u64 *w = (const __u64 *)key;
	__u64 h = cfg_hash_seed ^ 0x6b6579;	/* "key": not the stacks' starting value */

	for (int i = 0; i < sizeof(*key) / sizeof(__u64); i++)
		h = hash_frame(h, w[i]);
	return h;
}

/*
 * Add v to the count of key, whose digest is id, if counts holds it already: true then. counts
 * must be a map pointer the verifier knows (see count_in): always inline, called with a constant
 * map.
 */
static __always_inline bool count_known(void *counts, __u64 id, __u64 v)
{
	struct stk_count *c = bpf_map_lookup_elem(counts, &id);

	if (c)
		__sync_fetch_and_add(&c->count, v);
	return c;
}

/*
 * Count key, whose digest is id and which counts did not hold when looked up, v times. fresh:
 * room for a new entry's value (scratch, not the BPF stack: 88 bytes).
 */
static __always_inline void count_new(void *counts, __u64 *nkeys_g, __u64 id,
				      const struct stk_key *key, __u64 v, struct stk_count *fresh)
{
	struct stk_count *c;

	fresh->count = v;
	fresh->key = *key;
	if (!bpf_map_update_elem(counts, &id, fresh, BPF_NOEXIST)) {
		count_new_entry(nkeys_g, cfg_keys_half);
		return;
	}
	/* Another CPU may have inserted the same key between our lookup and update. */
	c = bpf_map_lookup_elem(counts, &id);
	if (c)
		__sync_fetch_and_add(&c->count, v);
	else
		stat_add(STK_STAT_COUNTS_FULL);
}

/* Add v to key's count: count_known(), else count_new(). */
static __always_inline void counts_add(void *counts, __u64 *nkeys_g, const struct stk_key *key,
				       __u64 v, struct stk_count *fresh)
{
	__u64 id = key_digest(key);

	if (!count_known(counts, id, v))
		count_new(counts, nkeys_g, id, key, v, fresh);
}

/*
 * Store both stacks and count the key in the maps of generation seq (g = seq & 1); false when
 * the event was deferred to user space instead (section 7 of docs/bpf.md). Always inline and
 * called with constant map pointers from each branch of `if (g)`: the map helpers need a map
 * pointer the verifier knows statically. A pointer chosen at run time (g ? &stacks1 : &stacks0)
 * merges two map pointers into one register and the verifier rejects or de-optimises the call.
 */
static __always_inline bool count_in(void *counts, void *stacks, __u32 seq, struct stk_key *key,
				     struct scratch *sc, const struct uregs *r, bool entry)
{
	__u32 g = seq & 1;

	/*
	 * A key counted in this generation already names stacks stored in it, by the event that
	 * counted it first: count it without looking the stacks up. A profile repeats a sixth to
	 * a half of its keys in an interval; a new key costs a second lookup (counts_add()), as
	 * keeping the digest or the key's hashes for it took the stack bytes that made 6.1's
	 * verifier refuse on_sample's calls (their stacks together over 512 bytes). snoop: the event
	 * goes to the ring buffer, not to a count.
	 */
	if (!cfg_snoop && !walk_waits(sc) && count_known(counts, key_digest(key), 1))
		return true;
	if (sc->stored_seq != seq) {
		sc->stored_seq = seq;
		sc->stored[0] = sc->stored[1] = 0;
	}
	store_stack_again(stacks, &nstacks[g], &key->kstack, &key->kerr, &sc->k,
			  STK_STAT_KSTACK_FULL, &sc->stored[0]);
	/* stkrec counts a deferred event itself (or records it, --snoop), once it has walked it */
	if (walk_waits(sc) && defer_event(sc, key, r, g, entry))
		return false;
	store_stack_again(stacks, &nstacks[g], &key->ustack, &key->uerr, &sc->u,
			  STK_STAT_USTACK_FULL, &sc->stored[1]);
	if (!cfg_snoop)
		counts_add(counts, &nkeys[g], key, 1, &sc->fresh);
	return true;
}

/* The -p / -- COMMAND and -L filters. */
static __always_inline bool traced(__u32 tgid, __u32 tid)
{
	__u8 *how;

	if (cfg_filter_tgid) {
		how = bpf_map_lookup_elem(&tgids, &tgid);
		if (!how || *how != STK_TGID_TRACED)
			return false;
	}
	if (cfg_filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return false;
	return true;
}

/*
 * A scratch slot for this program: the nesting depth on this CPU picks it. The counter moves
 * with atomics, which are also the full barriers the drain check in leave() needs. NULL when
 * nested too deep (counted).
 */
static __always_inline struct scratch *enter(__u32 **nest)
{
	__u32 zero = 0, level;

	*nest = bpf_map_lookup_elem(&nesting, &zero);
	if (!*nest)
		return NULL;
	level = __sync_fetch_and_add(*nest, 1);
	if (level < STK_NEST_MAX) {
		struct scratch *sc = bpf_map_lookup_elem(&scratch, &level);

		if (sc)
			sc->level = level;
		return sc;
	}
	__sync_fetch_and_add(*nest, -1);
	*nest = NULL;
	stat_add(STK_STAT_NESTED);
	return NULL;
}

/*
 * Leave the slot, then check the drain protocol: if user space has started draining the
 * generation this program counted into (seq), the count may be lost. The atomic decrement
 * orders the map updates before the load of drained_seq (user space orders its store of
 * drained_seq before reading the maps), so a late count is either seen by the drain or
 * reported here.
 */
static __always_inline void leave(__u32 *nest, __u32 seq)
{
	__sync_fetch_and_add(nest, -1);
	if ((__s32)(*(volatile __u32 *)&drained_seq - seq) > 0)
		stat_add(STK_STAT_DRAIN_RACE);
}

/*
 * Count key in the generation of seq (count_in(), with constant maps from each branch) and leave
 * the scratch slot; --snoop records the event too, unless it went to user space.
 */
static __always_inline void count_and_leave(__u32 *nest, __u32 seq, struct stk_key *key,
					    struct scratch *sc, const struct uregs *r, bool entry)
{
	__u32 g = seq & 1;
	bool counted;

	if (g)
		counted = count_in(&counts1, &stacks1, seq, key, sc, r, entry);
	else
		counted = count_in(&counts0, &stacks0, seq, key, sc, r, entry);
	if (cfg_snoop && counted)
		snoop_event(key, g);
	leave(nest, seq);
}

/*
 * ---- A walk repeated on the task's return to user space (6.18+) ----
 *
 * A user stack that cannot be read at the event may be readable a moment later: most such walks
 * in the compile loops stopped at the stack page of a copy-on-write break in progress (the
 * sample hit do_wp_page just after bash's fork, with the page's entry cleared). While the task
 * is in the kernel its user registers stay as the event saw them, so the same walk from them at
 * its return to user space, once the fault is done, gives the stack the event had. The kernel's
 * task work (bpf_task_work_schedule_resume_impl()) runs a callback there. The event is counted
 * then, by the callback; if the registers have moved meanwhile (the event hit user mode), or the
 * task never returns (it exits), it is counted with the walk it had.
 */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map,
					      int (*callback)(struct bpf_map *map, void *key,
							      void *value),
					      void *aux__prog) __weak __ksym;
extern void bpf_preempt_disable(void) __weak __ksym;
extern void bpf_preempt_enable(void) __weak __ksym;

/* Slots of events waiting for their task's return, a task's slot its tid modulo this. */
#define RETRY_SLOTS 32

struct retry {
	struct bpf_task_work tw;
	__u32 tid;		/* the task holding the slot; 0: free */
	bool entry;
	struct uregs r;		/* the registers the walk started from */
	struct stk_key key;	/* as it would have been counted then */
	struct stk_stack k, u;	/* the kernel stack; the walk that could not read on */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RETRY_SLOTS);
	__type(key, __u32);
	__type(value, struct retry);
} retries SEC(".maps");

/* Events waiting for their task's return: stkrec's last drain waits for them (run.c). */
__u64 retries_pending;

static __always_inline bool same_regs(const struct uregs *a, const struct uregs *b)
{
	return a->pc == b->pc && a->sp == b->sp && a->bp == b->bp;
}

/* Count v's event in the generation of now, with the walk repeated if its registers stand. */
static __always_inline void count_retried(struct retry *v)
{
	__u32 seq, *nest;
	struct scratch *sc = enter(&nest);
	struct stk_key key = v->key;
	struct uregs r = {};
	bool walked;

	if (!sc)
		return;
	seq = *(volatile __u32 *)&gen_seq;
	bpf_probe_read_kernel(&sc->k, sizeof(sc->k), &v->k);
	user_regs(NULL, UREGS_TASK, &r);
	sc->walk.waits = false;
	walked = same_regs(&r, &v->r) && !no_user_stack(0);
	if (walked)
		key.ustack = walk_user(sc, &r, key.tgid, v->entry);
	/* not walked, or no better than before: the event's own walk */
	if (!walked || sc->u.stop == STK_STOP_READ_FAULT) {
		bpf_probe_read_kernel(&sc->u, sizeof(sc->u), &v->u);
		sc->walk.waits = false;
		key.ustack = v->key.ustack;
	}
	count_and_leave(nest, seq, &key, sc, &r, v->entry);
}

/*
 * The task work's callback, in the task on its way back to user space: sleepable, migration
 * disabled. Preemption off makes it like any other event's program: a scratch slot is held by
 * one program at a time per CPU, and the drain's grace period (membarrier) waits for it.
 */
static int retry_walk(struct bpf_map *map, void *slot, void *value)
{
	struct retry *v = value;

	bpf_preempt_disable();
	count_retried(v);
	bpf_preempt_enable();
	__sync_fetch_and_and(&v->tid, 0);
	__sync_fetch_and_add(&retries_pending, -1);
	return 0;
}

/*
 * Leave an event whose walk stopped at memory it could not read to be counted at the task's
 * return to user space (retry_walk()); not one the walk left to user space (walk_waits()).
 * False: count it now. Global, checked once (see walk_user()).
 */
__noinline bool retry_at_return(struct scratch *sc, const struct stk_key *key,
				const struct uregs *r, bool entry)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), slot = tid % RETRY_SLOTS;
	struct retry *v;

	/* cfg_retry again: a global function is checked on its own, and must be dead without it */
	if (!cfg_retry || !sc || !key || !r || walk_waits(sc))
		return false;
	v = bpf_map_lookup_elem(&retries, &slot);
	if (!v || __sync_val_compare_and_swap(&v->tid, 0, tid) != 0)
		return false;	/* another task's event waits there */
	v->key = *key;
	v->r = *r;
	v->entry = entry;
	bpf_probe_read_kernel(&v->k, sizeof(v->k), &sc->k);
	bpf_probe_read_kernel(&v->u, sizeof(v->u), &sc->u);
	__sync_fetch_and_add(&retries_pending, 1);
	if (!bpf_task_work_schedule_resume_impl(bpf_get_current_task_btf(), &v->tw, &retries,
						retry_walk, NULL))
		return true;
	__sync_fetch_and_add(&retries_pending, -1);
	__sync_fetch_and_and(&v->tid, 0);
	return false;
}

/*
 * uret: the user return address at a uprobe's entry (fp only); kret: the kernel return address
 * at a kprobe's entry (struct stk_key). from: where the user registers are; entry: the event is
 * at a function's first instruction. kskip: kernel frames to drop from the top of the stack.
 */
static __always_inline int count_event_at(void *ctx, __u32 probe, enum uregs_from from, bool entry,
					  __u64 uret, __u64 kret, __u32 kskip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, seq, *nest;
	struct stk_image image = {};
	struct uregs r = {};
	struct scratch *sc;
	struct stk_key key;

	if (cfg_skip_idle && tgid == 0)
		return 0;
	/* probes fire on every CPU; a sampling event is opened on the -C one only anyway */
	if (cfg_cpu >= 0 && bpf_get_smp_processor_id() != (__u32)cfg_cpu)
		return 0;
	if (!traced(tgid, tid))
		return 0;
	stat_add(STK_STAT_EVENTS);
	if (tgid)
		image = note_first_seen(tgid);
	sc = enter(&nest);
	if (!sc)
		return 0;
	seq = *(volatile __u32 *)&gen_seq;	/* read once: the snoop event names this gen */

	__builtin_memset(&key, 0, sizeof(key));	/* padding included: the key is hashed as bytes */
	key.tgid = tgid;
	key.pid = tid;
	key.probe = probe;
	key.kret = kret;
	key.image_ns = image.ns;
	if (cfg_unwind == STK_UNWIND_FP)
		key.uret = uret;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	key.kstack = kernel_stack(ctx, from, kskip, &sc->k, &key.kerr);
	sc->walk.waits = false;
	if (user_stack_wanted(from, image.mm, &key.uerr)) {
		if (cfg_unwind != STK_UNWIND_FP)
			user_regs(ctx, from, &r);
		key.ustack = user_stack(ctx, &r, tgid, entry, sc, &key.uerr);
	}
	if (!key.ustack)	/* for the verifier (no_stack()): a compare an event */
		key.ustack = no_stack(&sc->u);
	/* the registers of a uprobe's trap move on before the task returns: no retry */
	if (cfg_retry && from != UREGS_CTX && key.ustack && sc->u.stop == STK_STOP_READ_FAULT &&
	    retry_at_return(sc, &key, &r, entry)) {
		leave(nest, seq);
		return 0;
	}
	count_and_leave(nest, seq, &key, sc, &r, entry);
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), UREGS_SAMPLE, false, 0, 0, 0);
}

SEC("tracepoint")
int on_tracepoint(void *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), UREGS_TASK, false, 0, 0, 0);
}

SEC("uprobe")
int on_uprobe(struct pt_regs *ctx)
{
	__u64 ret = 0;

	/* At function entry the return address is the word at the stack pointer. */
	if (cfg_unwind == STK_UNWIND_FP)
		bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx));
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), UREGS_CTX, true, ret, 0, 0);
}

SEC("usdt")
int on_usdt(struct pt_regs *ctx)
{
	/* USDT sites sit inside function bodies, after the prologue: the frame chain is whole. */
	return count_event_at(ctx, bpf_usdt_cookie(ctx), UREGS_CTX, false, 0, 0, 0);
}

/*
 * At a kprobe on a function's first instruction the return address into the caller is the word
 * at the kernel stack pointer. A frame-pointer unwinder skips that caller (the callee has not
 * pushed its frame yet); ORC does not. stkrec inserts kret as the second frame only when the
 * unwinder left it out (record/write/snapshot.c), so the caller appears exactly once either way.
 */
static __always_inline __u64 kernel_entry_ret(struct pt_regs *ctx)
{
	__u64 ret = 0;

	bpf_probe_read_kernel(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx));
	return ret;
}

SEC("kprobe")
int on_kprobe(struct pt_regs *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), UREGS_TASK, false, 0,
			      kernel_entry_ret(ctx), 0);
}

SEC("kprobe.multi")
int on_kprobe_multi(struct pt_regs *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), UREGS_TASK, false, 0,
			      kernel_entry_ret(ctx), 0);
}

/*
 * fentry (BPF trampoline), where a kernel has no kprobes. The section names no function: stkrec
 * sets the first target before load and loads one copy of the final instructions per further
 * function (record/probe/probe.c). In a tracing program bpf_get_stack() unwinds from the helper's
 * caller: the stack starts with this program and the trampoline (bpf_prog_*_on_fentry,
 * bpf_trampoline_*), then the traced function (entered, so its caller follows): skip those two
 * and the stack reads as a kprobe's. Checked on 6.1 by tests/vm/kfunc.sh.
 */
#define FENTRY_KSKIP 2

SEC("fentry")
int on_fentry(void *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), UREGS_TASK, false, 0, 0,
			      FENTRY_KSKIP);
}

/*
 * An exec replaces the mappings of a tgid. Tell user space at once: it opens the new
 * executable and the dynamic loader by descriptor before the program can delete or replace
 * them, and records the new comm. The libraries are mapped later, by ld.so in the new image:
 * forget the tgid too, so its next event sends a fresh notification when they are there.
 * A raw tracepoint: unlike a tracefs tracepoint it attaches without tracefs mounted.
 */
/* The -- COMMAND child's events count from here: the program it runs, not stkrec's fork. */
static __always_inline void start_tracing_at_exec(__u32 tgid)
{
	__u8 *how = bpf_map_lookup_elem(&tgids, &tgid);

	if (how && *how == STK_TGID_FROM_EXEC)
		*how = STK_TGID_TRACED;
}

SEC("raw_tp/sched_process_exec")
int on_exec(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u64 now = bpf_ktime_get_ns();
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct stk_image image = { .ns = now, .mm = (__u64)BPF_CORE_READ(task, mm) };

	bpf_map_delete_elem(&seen, &tgid);
	/*
	 * The stamp first: stkrec may write tables in between, which the delete then removes. It
	 * is also the new image's stamp in every key from here on (struct stk_key image_ns), and
	 * the notification carries it, so stkrec tells the two images' rows apart.
	 */
	bpf_map_update_elem(&exec_ns, &tgid, &image, BPF_ANY);
	bpf_map_delete_elem(&unwind_procs, &tgid);	/* the old image's tables */
	__sync_fetch_and_add(&seen_epoch, 1);	/* after the delete: see note_first_seen() */
	if (cfg_filter_tgid)
		start_tracing_at_exec(tgid);
	if (traced(tgid, tid))
		send_notify_at(tgid, STK_NOTIFY_EXEC, 0, now);
	return 0;
}

/*
 * A child runs in its parent's image until it execs: its walks get the parent's tables at once
 * (before it runs: the tracepoint comes before the child is woken), rather than being deferred
 * until stkrec has read a process that by then may have exec'd or exited. stkrec's own entry for
 * the child, when it reads it, replaces this copy; on_exec() and on_exit() delete it.
 */
static __always_inline void copy_parent_tables(__u32 ptgid, __u32 tgid)
{
	struct stk_uproc *v = bpf_map_lookup_elem(&unwind_procs, &ptgid);

	if (!v || bpf_map_update_elem(&unwind_procs, &tgid, v, BPF_ANY))
		return;
	v = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (v)
		v->asked = 0;	/* the parent's question, not the child's */
}

/*
 * A traced process's child is traced from its fork on, as perf's inherited events are: the
 * tracepoint comes before the child runs, so it has no event before this. A full map leaves the
 * child untraced (65,536 processes alive at once).
 */
static __always_inline void inherit_tracing(__u32 ptgid, __u32 tgid)
{
	__u8 *how = bpf_map_lookup_elem(&tgids, &ptgid), traced = STK_TGID_TRACED;

	if (how && *how == STK_TGID_TRACED)
		bpf_map_update_elem(&tgids, &tgid, &traced, BPF_ANY);
}

/*
 * A new process (not a thread): stamp its image, so that its rows are not named with the
 * process that had its pid before (pid reuse within one interval). Its parent's mappings are
 * its own until it execs; stkrec learns them from the kernel's fork record.
 */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = BPF_CORE_READ(child, tgid), ptgid;
	__u64 now = bpf_ktime_get_ns();
	/* a vfork child's mm is its parent's: the image it runs until its exec */
	struct stk_image image = { .ns = now, .mm = (__u64)BPF_CORE_READ(child, mm) };

	if (tgid != BPF_CORE_READ(child, pid))
		return 0;	/* a thread shares its process's image */
	ptgid = BPF_CORE_READ(parent, tgid);
	if (cfg_inherit)
		inherit_tracing(ptgid, tgid);
	bpf_map_update_elem(&exec_ns, &tgid, &image, BPF_ANY);
	if (cfg_unwind != STK_UNWIND_FP)
		copy_parent_tables(ptgid, tgid);
	/*
	 * on_exit() forgot the pid's last owner already; only when its last events came after
	 * that is the pid still in `seen`, maybe cached with the old stamp: forget it again. A
	 * bump on every fork would void every CPU's cache at every process a busy host starts.
	 */
	if (bpf_map_lookup_elem(&seen, &tgid)) {
		bpf_map_delete_elem(&seen, &tgid);
		__sync_fetch_and_add(&seen_epoch, 1);
	}
	return 0;
}

/* The task_struct fields on_exit() reads, as CO-RE flavors: the shared vmlinux.h lacks them. */
struct atomic___exit {
	int counter;
};

struct signal_struct___exit {
	struct atomic___exit live;	/* threads not past do_exit()'s start */
} __attribute__((preserve_access_index));

struct task_struct___exit {
	struct signal_struct___exit *signal;
} __attribute__((preserve_access_index));

/*
 * The exiting task is its process's last thread: do_exit() counts it out of signal->live
 * before this tracepoint. The leader may exit before its threads do.
 */
static __always_inline bool group_dead(void)
{
	struct task_struct___exit *task = (void *)bpf_get_current_task();

	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

/*
 * A task exits. The last thread of a process followed as a descendant (cfg_inherit) takes it off
 * the traced: the pid may be reused by any process. The group leader: the tgid may be reused by
 * a new process, which must be read anew.
 */
SEC("raw_tp/sched_process_exit")
int on_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	if (cfg_inherit && group_dead())
		bpf_map_delete_elem(&tgids, &tgid);
	if (tgid != (__u32)pid_tgid)
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&unwind_procs, &tgid);
	bpf_map_delete_elem(&exec_ns, &tgid);	/* its events are counted: no one asks any more */
	__sync_fetch_and_add(&seen_epoch, 1);
	return 0;
}

/* ---- --offcpu (bcc offcputime) ------------------------------------------------------------ */

/*
 * Kernel frames above __schedule() at sched_switch: the BPF program and bpf_trace_run4(), and
 * where the tracepoint calls its probes through __traceiter_sched_switch() (6.18; 6.1 calls them
 * from __schedule()) that one too: the first switch-out names its frame to find out, once.
 */
#define OFFCPU_KSKIP 2
__u32 offcpu_kskip_extra;	/* 1: skip __traceiter_sched_switch() too */
bool offcpu_kskip_known;

#ifndef PF_EXITING
#define PF_EXITING 0x00000004	/* include/linux/sched.h, stable since 2.6 */
#endif

#define TASK_TRACED_BIT 0x00000008	/* __TASK_TRACED, include/linux/sched.h */

#define TASK_DEAD_BIT 0x00000080	/* TASK_DEAD: the last switch-out of an exiting task */

/* task_struct fields only --offcpu reads, as a CO-RE flavor: the shared vmlinux.h lacks them. */
struct sched_entity___offcpu {
	__u64 sum_exec_runtime;		/* ns the task has run, updated before sched_switch */
} __attribute__((preserve_access_index));

struct task_struct___offcpu {
	unsigned int __state;		/* 5.14+ */
	struct sched_entity___offcpu se;
	__u64 start_time;		/* tells a task from a later one given the same tid */
} __attribute__((preserve_access_index));

const volatile __u64 cfg_min_block_us = 1;	/* --min-block */
const volatile __u32 cfg_threads = STK_THREADS_ALL;	/* -u, -k: enum stk_threads */
const volatile __s64 cfg_state = -1;		/* --state MASK, -1: any */
const volatile __u32 cfg_command_tgid = 0;	/* the -- COMMAND child, which stkrec ptraces */
const volatile __u64 cfg_max_block_us = ~0ull;	/* --max-block */

/* A task switched out: when, and the key (stacks included) its blocked time will be added to. */
struct offcpu_start {
	__u64 ts_ns;
	struct stk_key key;	/* with the user stack cut if deferred: counted so if need be */
	__u32 deferred;		/* the user stack went to stkrec: so must the time */
	__u32 pad;
	__u64 ran_ns;		/* the task's run time so far (se.sum_exec_runtime) */
	__u64 start_ns;		/* the task's start_time */
};

/*
 * Blocked tasks by thread id. LRU: a thread that exits while switched out never runs again and
 * its entry would stay forever in a plain hash. stkrec sizes it to 1 entry without --offcpu.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} offcpu_start SEC(".maps");

/* task->__state (5.14+), or -1 on a kernel without the field: read once per switch-out. */
static __always_inline __s64 task_state(struct task_struct___offcpu *t)
{
	if (!bpf_core_field_exists(t->__state))
		return -1;
	return BPF_CORE_READ(t, __state);
}

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000	/* include/linux/sched.h */
#endif

/* bcc offcputime's -u, -k and --state (0: runnable, i.e. preempted; else any bit of MASK). */
static __always_inline bool wanted_block(__u32 flags, __s64 state)
{
	bool kthread = flags & PF_KTHREAD;

	if ((cfg_threads == STK_THREADS_USER && kthread) ||
	    (cfg_threads == STK_THREADS_KERNEL && !kthread))
		return false;
	if (cfg_state < 0 || state < 0)
		return true;
	return cfg_state == 0 ? state == 0 : (state & cfg_state) != 0;
}

/* The blocked time of a task whose stack was deferred: stkrec adds it to that stack. */
static __always_inline bool defer_time(__u32 tid, __u64 us)
{
	struct stk_deferred_time *t = bpf_ringbuf_reserve(&deferred, sizeof(*t), 0);

	if (!t)
		return false;
	t->tid = tid;
	t->pad = 0;
	t->us = us;
	bpf_ringbuf_submit(t, 0);
	return true;
}

/*
 * The end of tid's block sp after blocked_ns: counted into generation g, or sent to stkrec when
 * stkrec holds its walked stack; the entry goes. Not a global function: there sc would be
 * memory of unknown kind to the verifier, and 6.1's takes no such pointer as a map value.
 */
static __always_inline void offcpu_block_end(__u32 tid, struct offcpu_start *sp, __u64 blocked_ns,
					     __u32 g, struct scratch *sc)
{
	struct stk_key *key = &sc->ended;	/* not on the BPF stack: 6.1's 512 bytes are near */
	__u64 us = blocked_ns / 1000;
	bool deferred;

	*key = sp->key;
	deferred = sp->deferred;
	bpf_map_delete_elem(&offcpu_start, &tid);
	if (us < cfg_min_block_us || us > cfg_max_block_us)
		return;
	stat_add(STK_STAT_EVENTS);
	/* sent, or else counted with the cut stack stored at switch-out */
	if (deferred && defer_time(tid, us))
		return;
	if (g)
		counts_add(&counts1, &nkeys[1], key, us, &sc->fresh);
	else
		counts_add(&counts0, &nkeys[0], key, us, &sc->fresh);
}

/*
 * tid's entry if it is the task's that started at start_ns; one an earlier task with the same
 * tid left is dropped.
 */
static __always_inline struct offcpu_start *offcpu_entry(__u32 tid, __u64 start_ns)
{
	struct offcpu_start *sp = bpf_map_lookup_elem(&offcpu_start, &tid);

	if (sp && sp->start_ns != start_ns) {
		bpf_map_delete_elem(&offcpu_start, &tid);
		return NULL;
	}
	return sp;
}

/*
 * tid switches out while its last block still waits for its end: the kernel ran the task again
 * without a sched_switch naming it as next (6.18: a sleeper woken from a hard irq, about 1 run
 * in 30 of a 50 ms sleeper beside busy loops; the kernel's own sched:sched_switch event missed
 * those switches too). That block ended when the task ran: its time is all since it switched
 * out, less what it has run since. A lookup per switch-out, not a failed BPF_NOEXIST store at
 * the end: the time must reach the ring before this switch-out's deferred stack does (stkrec
 * gives a time to the last stack of its thread), and skipped switch-outs must end it too.
 */
static __always_inline void offcpu_unended(__u32 tid, __u64 start_ns, __u64 now, __u64 ran,
					   __u32 g, struct scratch *sc)
{
	struct offcpu_start *sp = offcpu_entry(tid, start_ns);
	__u64 since, ran_since;

	if (!sp)
		return;
	since = now - sp->ts_ns;
	ran_since = ran - sp->ran_ns;
	offcpu_block_end(tid, sp, ran_since < since ? since - ran_since : 0, g, sc);
}

/* Is the frame below the two OFFCPU_KSKIP skips the tracepoint's own? Named by %ps, once. */
static __always_inline void learn_offcpu_kskip(void *ctx)
{
	static const char traceiter[] = "__traceiter_";
	char name[sizeof(traceiter)];
	__u64 ip;

	if (bpf_get_stack(ctx, &ip, sizeof(ip), OFFCPU_KSKIP) != sizeof(ip))
		return;
	bpf_snprintf(name, sizeof(name), "%ps", &ip, sizeof(ip));
	offcpu_kskip_extra = !bpf_strncmp(name, sizeof(traceiter) - 1, traceiter);
	offcpu_kskip_known = true;
}

/*
 * prev is current here: its stacks are the ones it blocks in. They go to stacks0 whatever the
 * generation: the time is known only when the task runs again, possibly intervals later, and
 * is counted into the generation of that moment. In this mode stkrec drains stacks0 at every
 * drain into a cache that lasts the whole run (stacks_fd[1] aliases stacks0), so a count can
 * name a stack stored any time before it.
 */
static __always_inline void offcpu_switch_out(void *ctx, struct task_struct *prev, __u64 now,
					      __u32 g, struct scratch *sc)
{
	struct task_struct___offcpu *t = (void *)prev;
	struct stk_image image;
	struct uregs *r = &sc->regs;
	struct offcpu_start st;
	__u32 tid = BPF_CORE_READ(prev, pid), tgid = BPF_CORE_READ(prev, tgid);
	__u64 ran, start_ns;
	__u32 flags;
	__s64 state;
	bool live, ptrace_stopped;

	if (tid == 0)
		return;		/* the idle task: its "blocked" time is busy CPU time */
	if (!traced(tgid, tid))
		return;
	ran = BPF_CORE_READ(t, se.sum_exec_runtime);
	start_ns = BPF_CORE_READ(t, start_time);
	offcpu_unended(tid, start_ns, now, ran, g, sc);
	flags = BPF_CORE_READ(prev, flags);
	state = task_state(t);
	if (state > 0 && (state & TASK_DEAD_BIT))
		return;		/* it never runs again: an entry would only wait for a reused tid */
	ptrace_stopped = state > 0 && (state & TASK_TRACED_BIT);
	/*
	 * The -- COMMAND child stops for stkrec alone (its exec, its exit, each signal): that time
	 * is stkrec's, not the program's (19 ms after exec, 9 ms at exit on a busy host).
	 */
	if ((ptrace_stopped && tgid == cfg_command_tgid) || !wanted_block(flags, state))
		return;
	/*
	 * An exiting task blocks too (exit_mmap, ptrace exit stop), after on_exit() made BPF forget
	 * its tgid: a notification then would make stkrec re-read maps that are being torn down,
	 * and the rows of the whole interval would lose their mappings. Nor are its events deferred.
	 * A task stopping for its tracer right after exec (-- COMMAND) has only the executable and
	 * ld.so mapped: its next block, in its own code, notifies instead.
	 */
	live = !(flags & PF_EXITING) && !ptrace_stopped;

	__builtin_memset(&st, 0, sizeof(st));	/* padding too: keys hash as bytes */
	image = live ? note_first_seen(tgid) : image_of(tgid);
	st.key.image_ns = image.ns;
	st.ts_ns = now;
	st.ran_ns = ran;
	st.start_ns = start_ns;
	st.key.tgid = tgid;
	st.key.pid = tid;
	bpf_get_current_comm(st.key.comm, sizeof(st.key.comm));
	/*
	 * The kernel walk starts inside the tracing machinery, above __schedule() (OFFCPU_KSKIP).
	 * Skip it, as the trampoline frames of fentry are.
	 */
	if (!offcpu_kskip_known)
		learn_offcpu_kskip(ctx);
	st.key.kstack = kernel_stack(ctx, UREGS_TASK, OFFCPU_KSKIP + offcpu_kskip_extra, &sc->k,
				     &st.key.kerr);
	sc->walk.waits = false;
	if (user_stack_wanted(UREGS_TASK, image.mm, &st.key.uerr)) {
		if (cfg_unwind != STK_UNWIND_FP)
			user_regs(ctx, UREGS_TASK, r);
		st.key.ustack = user_stack(ctx, r, tgid, false, sc, &st.key.uerr);
	}
	store_stack(&stacks0, &nstacks[0], &st.key.kstack, &st.key.kerr, &sc->k,
		    STK_STAT_KSTACK_FULL);
	/* The user stack is walked now (it is the task's, current); the time comes at switch-in. */
	st.deferred = live && walk_waits(sc) && defer_event(sc, &st.key, r, 0, false);
	store_stack(&stacks0, &nstacks[0], &st.key.ustack, &st.key.uerr, &sc->u,
		    STK_STAT_USTACK_FULL);
	bpf_map_update_elem(&offcpu_start, &tid, &st, BPF_ANY);
}

/* next runs again: its block ends, counted into generation g. */
static __always_inline void offcpu_switch_in(struct task_struct *next, __u64 now, __u32 g,
					     struct scratch *sc)
{
	struct task_struct___offcpu *t = (void *)next;
	__u32 tid = BPF_CORE_READ(next, pid);
	struct offcpu_start *sp = offcpu_entry(tid, BPF_CORE_READ(t, start_time));

	if (sp)
		offcpu_block_end(tid, sp, now - sp->ts_ns, g, sc);
}

/*
 * A raw tracepoint (not tp_btf): it needs neither BPF trampolines nor BTF-typed arguments, and
 * loads on 6.1 as on newer kernels. The arguments are (bool preempt, prev, next), prev still
 * current; every switch-out is counted, voluntary or preempted, as bcc offcputime by default.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct scratch *sc;
	__u32 seq, *nest;

	sc = enter(&nest);
	if (!sc)
		return 0;
	seq = *(volatile __u32 *)&gen_seq;
	offcpu_switch_out(ctx, prev, now, seq & 1, sc);
	offcpu_switch_in(next, now, seq & 1, sc);
	leave(nest, seq);
	return 0;
}
