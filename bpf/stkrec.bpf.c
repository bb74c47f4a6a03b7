// SPDX-License-Identifier: GPL-2.0
/*
 * stkrec.bpf.c: count (process, thread, probe, kernel stack, user stack, comm) in the kernel.
 *
 * Every trigger (perf timer, tracepoint, uprobe, USDT, kprobe) calls count_event() with the probe
 * id, which user space put in the BPF cookie of the attachment. Two generations of maps
 * (counts0/stacks0, counts1/stacks1) let user space drain one generation while the programs
 * fill the other: see docs/bpf.md, "drain protocol".
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
const volatile bool cfg_filter_tid = false;	/* only threads in the tids map (-L) */
const volatile bool cfg_kstacks = true;		/* false with -U */
const volatile bool cfg_ustacks = true;		/* false with -K */
const volatile bool cfg_skip_idle = false;	/* sampling without -I: drop pid 0 */
const volatile bool cfg_snoop = false;		/* --snoop: every event to the events ring */

/*
 * Generation selector, in .bss so the skeleton mmaps it: user space flips it at each interval
 * boundary and the programs read it once per event.
 */
__u32 gen;

#define COUNTS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, 40960);				\
		__type(key, struct stk_key);				\
		__type(value, __u64);					\
	} name SEC(".maps")

/* value_size is resized by stkrec to kernel.perf_event_max_stack * 8 before load. */
#define STACKS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);			\
		__uint(max_entries, 16384);				\
		__uint(key_size, sizeof(__u32));			\
		__uint(value_size, STK_DEFAULT_DEPTH * sizeof(__u64));	\
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} notify SEC(".maps");

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

/*
 * The event carries stack ids, not stacks: bpf_get_stackid() already stored them in generation
 * g's map, which user space reads only after flipping away from g and waiting out the grace
 * period; a 72-byte record keeps the ring buffer's cost per event low.
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
	e->tgid = key->tgid;
	e->pid = key->pid;
	e->probe = key->probe;
	e->cpu = bpf_get_smp_processor_id();
	e->kstack = key->kstack;
	e->ustack = key->ustack;
	e->gen = g;
	e->pad = 0;
	__builtin_memcpy(e->comm, key->comm, sizeof(e->comm));
	/*
	 * Never wake the reader: a wakeup is an irq_work whose self-IPI is a VM exit under
	 * virtualisation, and it cost more than the rest of the event. stkrec's reader never waits
	 * for one: it reads the ring every 5 ms (record/snoop.c), and the default 16 MiB ring holds
	 * 20 ms of 10 million events per second.
	 * (Forcing a wakeup above a fill level was tried: while the reader catches up every event
	 * forces one again.)
	 */
	bpf_ringbuf_submit(e, STK_RB_NO_WAKEUP);
}

static __always_inline void stat_add(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		*v += 1;	/* per-CPU slot: no atomic needed */
}

static __always_inline bool send_notify(__u32 tgid)
{
	struct stk_notify *n = bpf_ringbuf_reserve(&notify, sizeof(*n), 0);

	if (!n) {
		stat_add(STK_STAT_NOTIFY_DROPPED);
		return false;
	}
	n->tgid = tgid;
	bpf_ringbuf_submit(n, 0);
	return true;
}

static __always_inline void note_first_seen(__u32 tgid)
{
	__u8 one = 1;

	/*
	 * Nearly every event is of a known tgid: a lookup is lock-free, while an update takes the
	 * bucket lock even when BPF_NOEXIST makes it fail.
	 */
	if (bpf_map_lookup_elem(&seen, &tgid))
		return;
	if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST))
		return;		/* inserted by another CPU meanwhile (or the LRU is busy: retried) */
	/* Forget it when the message was dropped, so a later event of the tgid tries again. */
	if (!send_notify(tgid))
		bpf_map_delete_elem(&seen, &tgid);
}

/* A kernel thread has no user stack; -EFAULT for it is not a loss. */
static __always_inline bool current_is_kthread(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return !BPF_CORE_READ(task, mm) || (BPF_CORE_READ(task, flags) & PF_KTHREAD);
}

static __always_inline bool is_collision(long err)
{
	/* -EEXIST: the bucket holds another stack; -ENOMEM: the stack map is full. */
	return err == -EEXIST || err == -ENOMEM;
}

/*
 * Add v to key's count. counts must be a map pointer the verifier knows (see count_in): always
 * inline, called with a constant map.
 */
static __always_inline void counts_add(void *counts, const struct stk_key *key, __u64 v)
{
	__u64 *count = bpf_map_lookup_elem(counts, key);

	if (count) {
		__sync_fetch_and_add(count, v);
		return;
	}
	if (!bpf_map_update_elem(counts, key, &v, BPF_NOEXIST))
		return;
	/* Another CPU may have inserted the same key between our lookup and update. */
	count = bpf_map_lookup_elem(counts, key);
	if (count)
		__sync_fetch_and_add(count, v);
	else
		stat_add(STK_STAT_COUNTS_FULL);
}

/* The -p / -- COMMAND and -L filters. */
static __always_inline bool traced(__u32 tgid, __u32 tid)
{
	if (cfg_filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	if (cfg_filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return false;
	return true;
}

/*
 * The user stack's id in stacks, or STK_STACK_NOT_WANTED (-U off) / STK_STACK_NONE (a kernel
 * thread). Always inline: stacks must stay a map pointer the verifier knows (see count_in).
 */
static __always_inline __s32 user_stack_id(void *ctx, void *stacks)
{
	long id;

	if (!cfg_ustacks)
		return STK_STACK_NOT_WANTED;
	id = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
	if (id >= 0)
		return id;
	if (current_is_kthread())
		return STK_STACK_NONE;
	stat_add(is_collision(id) ? STK_STAT_USTACK_COLLISION : STK_STAT_USTACK_MISSING);
	return id;
}

/*
 * Count one event into one generation. Always inline and called with constant map pointers
 * from each branch of `if (gen)`: bpf_get_stackid() and the hash helpers need a map pointer the
 * verifier knows statically. A pointer chosen at run time (gen ? &stacks1 : &stacks0) merges
 * two map pointers into one register and the verifier rejects or de-optimises the call.
 */
static __always_inline void count_in(void *ctx, void *counts, void *stacks, struct stk_key *key,
				     __u64 kskip)
{
	long id;

	if (cfg_kstacks) {
		/* kskip: frames of BPF machinery on top of the stack (fentry), dropped. */
		id = bpf_get_stackid(ctx, stacks, kskip & BPF_F_SKIP_FIELD_MASK);
		/*
		 * -EFAULT: the event came from user mode (uprobe, USDT, a sample of user code):
		 * there is no kernel stack, and nothing was lost (bcc profile reads it so too).
		 */
		if (id == -EFAULT)
			id = STK_STACK_NONE;
		else if (id < 0)
			stat_add(is_collision(id) ? STK_STAT_KSTACK_COLLISION : STK_STAT_KSTACK_ERROR);
		key->kstack = id;
	} else {
		key->kstack = STK_STACK_NOT_WANTED;
	}
	key->ustack = user_stack_id(ctx, stacks);
	if (!cfg_snoop)		/* snoop: the event goes to the ring buffer, not to a count */
		counts_add(counts, key, 1);
}

/*
 * uret: the user return address at a uprobe's entry; kret: the kernel return address at a
 * kprobe's entry (struct stk_key). Both 0 for every other trigger. kskip: kernel frames to drop
 * from the top of the stack (fentry's program and trampoline).
 */
static __always_inline int count_event_at(void *ctx, __u32 probe, __u64 uret, __u64 kret,
					  __u32 kskip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct stk_key key;
	__u32 g;

	if (cfg_skip_idle && tgid == 0)
		return 0;
	if (!traced(tgid, tid))
		return 0;
	stat_add(STK_STAT_EVENTS);
	if (tgid)
		note_first_seen(tgid);

	__builtin_memset(&key, 0, sizeof(key));	/* padding included: the key is hashed as bytes */
	key.tgid = tgid;
	key.pid = tid;
	key.probe = probe;
	key.uret = uret;
	key.kret = kret;
	bpf_get_current_comm(key.comm, sizeof(key.comm));

	g = *(volatile __u32 *)&gen;	/* read once: the snoop event names this generation */
	if (g)
		count_in(ctx, &counts1, &stacks1, &key, kskip);
	else
		count_in(ctx, &counts0, &stacks0, &key, kskip);
	if (cfg_snoop)
		snoop_event(&key, g);
	return 0;
}

static __always_inline int count_event(void *ctx, __u32 probe, __u64 uret)
{
	return count_event_at(ctx, probe, uret, 0, 0);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	return count_event(ctx, bpf_get_attach_cookie(ctx), 0);
}

SEC("tracepoint")
int on_tracepoint(void *ctx)
{
	return count_event(ctx, bpf_get_attach_cookie(ctx), 0);
}

SEC("uprobe")
int on_uprobe(struct pt_regs *ctx)
{
	__u64 ret = 0;

	/* At function entry the return address is the word at the stack pointer. */
	bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx));
	return count_event(ctx, bpf_get_attach_cookie(ctx), ret);
}

SEC("usdt")
int on_usdt(struct pt_regs *ctx)
{
	/* USDT sites sit inside function bodies, after the prologue: the frame chain is whole. */
	return count_event(ctx, bpf_usdt_cookie(ctx), 0);
}

/*
 * At a kprobe on a function's first instruction the return address into the caller is the word
 * at the kernel stack pointer. A frame-pointer unwinder skips that caller (the callee has not
 * pushed its frame yet); ORC does not. stkrec inserts kret as the second frame only when the
 * unwinder left it out (record/snapshot.c), so the caller appears exactly once either way.
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
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), 0, kernel_entry_ret(ctx), 0);
}

SEC("kprobe.multi")
int on_kprobe_multi(struct pt_regs *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), 0, kernel_entry_ret(ctx), 0);
}

/*
 * fentry (BPF trampoline), where a kernel has no kprobes. The section names no function: stkrec
 * sets the first target before load and loads one copy of the final instructions per further
 * function (record/probe.c). In a tracing program bpf_get_stackid() unwinds from the helper's
 * caller: the stack starts with this program and the trampoline (bpf_prog_*_on_fentry,
 * bpf_trampoline_*), then the traced function (entered, so its caller follows): skip those two
 * and the stack reads as a kprobe's. Checked on 6.1 by tests/vm/kfunc.sh.
 */
#define FENTRY_KSKIP 2

SEC("fentry")
int on_fentry(void *ctx)
{
	return count_event_at(ctx, bpf_get_attach_cookie(ctx), 0, 0, FENTRY_KSKIP);
}

/*
 * An exec replaces the mappings of a tgid. Tell user space at once: it opens the new
 * executable and the dynamic loader by descriptor before the program can delete or replace
 * them, and records the new comm. The libraries are mapped later, by ld.so in the new image:
 * forget the tgid too, so its next event sends a fresh notification when they are there.
 */
SEC("tracepoint/sched/sched_process_exec")
int on_exec(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;

	bpf_map_delete_elem(&seen, &tgid);
	if (traced(tgid, tid))
		send_notify(tgid);
	return 0;
}

/* The group leader exits: the tgid may be reused by a new process, which must be read anew. */
SEC("tracepoint/sched/sched_process_exit")
int on_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	if (tgid == (__u32)pid_tgid)
		bpf_map_delete_elem(&seen, &tgid);
	return 0;
}

/* ---- --offcpu (bcc offcputime) ------------------------------------------------------------ */

/* Kernel frames above __schedule() at sched_switch: the BPF program and bpf_trace_run4(). */
#define OFFCPU_KSKIP 2

#ifndef PF_EXITING
#define PF_EXITING 0x00000004	/* include/linux/sched.h, stable since 2.6 */
#endif

#define TASK_TRACED_BIT 0x00000008	/* __TASK_TRACED, include/linux/sched.h */

/* task_struct.__state (5.14+), as a CO-RE flavor: the shared vmlinux.h does not declare it. */
struct task_struct___offcpu {
	unsigned int __state;
} __attribute__((preserve_access_index));

const volatile __u64 cfg_min_block_us = 1;	/* --min-block */
const volatile __u64 cfg_max_block_us = ~0ull;	/* --max-block */

/* A task switched out: when, and the key (stacks included) its blocked time will be added to. */
struct offcpu_start {
	__u64 ts_ns;
	struct stk_key key;
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

/*
 * A task stopping for its tracer right after exec (-- COMMAND: stkrec is that tracer) has only
 * the executable and ld.so mapped: reading its maps then would miss every library. Its next
 * block, in its own code, notifies instead (and the interval end reads it if none comes).
 */
static __always_inline bool in_ptrace_stop(struct task_struct *task)
{
	struct task_struct___offcpu *t = (void *)task;

	if (!bpf_core_field_exists(t->__state))
		return false;
	return BPF_CORE_READ(t, __state) & TASK_TRACED_BIT;
}

/*
 * prev is current here: its stacks are the ones it blocks in. They go to stacks0 whatever the
 * generation, since the time is known only when the task runs again, possibly intervals later,
 * after both generations were drained: in this mode stkrec never clears the stack map
 * (rec_maps.keep_stacks) and drains both generations' counts against stacks0.
 */
static __always_inline void offcpu_switch_out(void *ctx, struct task_struct *prev, __u64 now)
{
	struct offcpu_start st;
	__u32 tid = BPF_CORE_READ(prev, pid), tgid = BPF_CORE_READ(prev, tgid);
	long id;

	if (tid == 0)
		return;		/* the idle task: its "blocked" time is busy CPU time */
	if (!traced(tgid, tid))
		return;
	/*
	 * An exiting task blocks too (exit_mmap, ptrace exit stop), after on_exit() made BPF forget
	 * its tgid: a notification then would make stkrec re-read maps that are being torn down,
	 * and the rows of the whole interval would lose their mappings.
	 */
	if (!(BPF_CORE_READ(prev, flags) & PF_EXITING) && !in_ptrace_stop(prev))
		note_first_seen(tgid);

	__builtin_memset(&st, 0, sizeof(st));	/* padding too: keys hash as bytes */
	st.ts_ns = now;
	st.key.tgid = tgid;
	st.key.pid = tid;
	bpf_get_current_comm(st.key.comm, sizeof(st.key.comm));
	if (cfg_kstacks) {
		/*
		 * The walk starts inside the tracing machinery: this program and bpf_trace_run4()
		 * sit above __schedule(). Skip them, as the trampoline frames of fentry are.
		 */
		id = bpf_get_stackid(ctx, &stacks0, OFFCPU_KSKIP & BPF_F_SKIP_FIELD_MASK);
		if (id < 0)
			stat_add(is_collision(id) ? STK_STAT_KSTACK_COLLISION :
						    STK_STAT_KSTACK_ERROR);
		st.key.kstack = id;
	} else {
		st.key.kstack = STK_STACK_NOT_WANTED;
	}
	st.key.ustack = user_stack_id(ctx, &stacks0);
	bpf_map_update_elem(&offcpu_start, &tid, &st, BPF_ANY);
}

/* next runs again: its blocked time, in microseconds, goes to the generation counting now. */
static __always_inline void offcpu_switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct offcpu_start *sp = bpf_map_lookup_elem(&offcpu_start, &tid);
	struct stk_key key;
	__u64 us;

	if (!sp)
		return;
	us = (now - sp->ts_ns) / 1000;
	key = sp->key;
	bpf_map_delete_elem(&offcpu_start, &tid);
	if (us < cfg_min_block_us || us > cfg_max_block_us)
		return;
	stat_add(STK_STAT_EVENTS);
	if (*(volatile __u32 *)&gen)
		counts_add(&counts1, &key, us);
	else
		counts_add(&counts0, &key, us);
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

	offcpu_switch_out(ctx, prev, now);
	offcpu_switch_in(next, now);
	return 0;
}
