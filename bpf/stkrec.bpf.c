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
 * Count one event into one generation. Always inline and called with constant map pointers
 * from each branch of `if (gen)`: bpf_get_stackid() and the hash helpers need a map pointer the
 * verifier knows statically. A pointer chosen at run time (gen ? &stacks1 : &stacks0) merges
 * two map pointers into one register and the verifier rejects or de-optimises the call.
 */
static __always_inline void count_in(void *ctx, void *counts, void *stacks, struct stk_key *key)
{
	__u64 one = 1, *count;
	long id;

	if (cfg_kstacks) {
		id = bpf_get_stackid(ctx, stacks, 0);
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
	if (cfg_ustacks) {
		id = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
		if (id < 0) {
			if (current_is_kthread())
				id = STK_STACK_NONE;
			else
				stat_add(is_collision(id) ? STK_STAT_USTACK_COLLISION :
							    STK_STAT_USTACK_MISSING);
		}
		key->ustack = id;
	} else {
		key->ustack = STK_STACK_NOT_WANTED;
	}

	count = bpf_map_lookup_elem(counts, key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return;
	}
	if (!bpf_map_update_elem(counts, key, &one, BPF_NOEXIST))
		return;
	/* Another CPU may have inserted the same key between our lookup and update. */
	count = bpf_map_lookup_elem(counts, key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		stat_add(STK_STAT_COUNTS_FULL);
}

static __always_inline int count_event(void *ctx, __u32 probe, __u64 uret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct stk_key key;

	if (cfg_skip_idle && tgid == 0)
		return 0;
	if (cfg_filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return 0;
	if (cfg_filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	stat_add(STK_STAT_EVENTS);
	if (tgid)
		note_first_seen(tgid);

	__builtin_memset(&key, 0, sizeof(key));	/* padding included: the key is hashed as bytes */
	key.tgid = tgid;
	key.pid = tid;
	key.probe = probe;
	key.uret = uret;
	bpf_get_current_comm(key.comm, sizeof(key.comm));

	if (*(volatile __u32 *)&gen)
		count_in(ctx, &counts1, &stacks1, &key);
	else
		count_in(ctx, &counts0, &stacks0, &key);
	return 0;
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

SEC("kprobe")
int on_kprobe(struct pt_regs *ctx)
{
	return count_event(ctx, bpf_get_attach_cookie(ctx), 0);
}

SEC("kprobe.multi")
int on_kprobe_multi(struct pt_regs *ctx)
{
	return count_event(ctx, bpf_get_attach_cookie(ctx), 0);
}

/*
 * An exec replaces the mappings of a tgid. Reading them now would find only the executable and
 * the dynamic loader (libraries are mapped later, by ld.so in the new image). Forget the tgid
 * instead: its next event sends a fresh FIRST_SEEN, when the libraries it runs are mapped.
 */
SEC("tracepoint/sched/sched_process_exec")
int on_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&seen, &tgid);
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
