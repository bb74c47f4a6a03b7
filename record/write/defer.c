// SPDX-License-Identifier: MIT
/*
 * defer.c: events whose user stack BPF could not finish because stkrec had not read the process,
 * or a mapping of it, yet (docs/bpf.md 7): their first events, those in a library mapped since.
 * BPF sends registers and the top of the stack instead of counting them (struct stk_deferred);
 * here stkrec reads the process if it has to, walks the stack by the BPF walker's rules
 * (rec_unwind__walk) and counts the event into the interval being gathered (with --snoop, adds
 * it to the events). So a process that lives a millisecond keeps whole stacks, and every event
 * is still counted exactly once.
 *
 * The main thread consumes the ring: it waits on it between its other work (BPF wakes it for
 * each deferred event: a burst at a process's start must not fill the ring), and at each drain
 * it reads the ring to its end before the counts, when every deferred event of the drained
 * generation is there (rec_flip's grace period) and the kernel stacks they name are still in BPF.
 *
 * --offcpu sends a task's stack when it blocks and its time when it runs again (struct
 * stk_deferred_time): the walked stack waits here, one per thread, for its time.
 */
#include <errno.h>
#include <stddef.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "write.h"

struct rec_defer {
	struct ring_buffer *rb;
	struct rec_procs *procs;
	struct rec_unwind *unwind;
	struct rec_counts *counts;	/* where walked events go, */
	struct rec_snoop *snoop;	/* or these with --snoop */
	struct rec_reader *reader;
	uint64_t *ips;
	uint32_t depth;
	bool offcpu;
	void *blocked;		/* --offcpu: tid -> struct blocked, walked stacks awaiting their time */
	/* the Python frames BPF sent just before the event of their thread (struct stk_pychain) */
	struct stk_pychain chain;
	bool has_chain;
	int err;		/* first failure in the callback: the next consume returns it */
};

/* --offcpu: a blocked task's walked stack. */
struct blocked {
	uint32_t tid;
	uint32_t n, stop;
	struct stk_key key;
	uint64_t ips[];
};

static int cmp_blocked(const void *a, const void *b)
{
	const struct blocked *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The task blocked: keep its stack until its time comes, replacing one whose time never did. */
static int keep_blocked(struct rec_defer *df, const struct stk_deferred *d, uint32_t n,
			uint32_t stop)
{
	struct blocked *b = malloc(sizeof(*b) + n * sizeof(b->ips[0])), **found;

	if (!b)
		return -ENOMEM;
	b->tid = d->key.pid;
	b->n = n;
	b->stop = stop;
	b->key = d->key;
	memcpy(b->ips, df->ips, n * sizeof(b->ips[0]));
	found = tsearch(b, &df->blocked, cmp_blocked);
	if (!found) {
		free(b);
		return -ENOMEM;
	}
	if (*found != b) {
		free(*found);
		*found = b;
	}
	return 0;
}

/* The task ran again after t->us of blocking: count them with its stack. */
static int count_blocked(struct rec_defer *df, const struct stk_deferred_time *t)
{
	struct blocked key = { .tid = t->tid }, **found = tfind(&key, &df->blocked, cmp_blocked), *b;
	int err;

	if (!found)
		return 0;	/* its stack found the ring full: BPF counted the time itself */
	b = *found;
	tdelete(b, &df->blocked, cmp_blocked);
	/* --offcpu keeps its stacks in stacks0 whatever the generation */
	err = rec_counts__add_walked(df->counts, &b->key, 0, t->us, b->ips, b->n, b->stop);
	free(b);
	return err;
}

/*
 * The walk stopped for want of mappings stkrec may still learn: the process's, or one holding
 * the address it missed (rec_unwind__walk(): STK_MISS_ASKS()).
 */
static bool needs_maps(uint32_t stop, uint64_t missing)
{
	stop = REC_WALK_STOP(stop);
	return stop == STK_STOP_PROC_UNKNOWN || stop == STK_STOP_NO_MAPPING || missing;
}

/*
 * Walk d's stack; read its process first when the walk needs mappings stkrec lacks. Under the
 * reader's lock: the reader thread writes the mappings the walk reads (rec_unwind__proc).
 */
static uint32_t walk_locked(struct rec_defer *df, const struct stk_deferred *d, uint32_t *stop)
{
	struct rec_miss miss = { .ts_ns = d->ts_ns };
	const struct stk_pychain *chain = NULL;
	uint32_t pid = d->key.tgid, n;

	/* the chain BPF sent before this event, if it is this thread's */
	if (df->has_chain && df->chain.tid == d->key.pid)
		chain = &df->chain;
	df->has_chain = false;
	n = rec_unwind__walk(df->unwind, d, chain, df->ips, df->depth, stop, &miss.addr);
	if (!needs_maps(*stop, miss.addr))
		return n;
	/* the kernel's records of what the process mapped may be waiting in their rings */
	rec_reader__catch_up(df->reader);
	n = rec_unwind__walk(df->unwind, d, chain, df->ips, df->depth, stop, &miss.addr);
	if (!needs_maps(*stop, miss.addr))
		return n;
	if (REC_WALK_STOP(*stop) == STK_STOP_PROC_UNKNOWN) {
		/*
		 * Its first event, come before BPF's notification of it was handled: noted as that
		 * notification will be, so that what the kernel's records tell of it (a child's fork
		 * image) goes first. A /proc read would, just after the child's exec, be of the next
		 * program: gcc's children sampled between vfork and exec were cut so.
		 */
		rec_procs__note(df->procs, pid, REC_READ_AGAIN);
	} else if (rec_unwind__read_since(df->unwind, pid, d->ts_ns)) {
		return n;	/* read after the event: what it ran in was mapped then, and is in that read */
	} else {
		rec_procs__recheck(df->procs, pid, &miss);
	}
	/* gone already: the walk stays cut */
	return rec_unwind__walk(df->unwind, d, chain, df->ips, df->depth, stop, &miss.addr);
}

static uint32_t walk(struct rec_defer *df, const struct stk_deferred *d, uint32_t *stop)
{
	uint32_t n;

	rec_reader__lock(df->reader);
	n = walk_locked(df, d, stop);
	rec_reader__unlock(df->reader);
	return n;
}

#define STACK_AT offsetof(struct stk_deferred, stack)

static int on_deferred(void *ctx, void *data, size_t len)
{
	struct rec_defer *df = ctx;
	const struct stk_deferred *d = data;
	uint32_t stop, n;

	if (df->err)
		return 0;
	if (len == sizeof(struct stk_deferred_time)) {
		df->err = count_blocked(df, data);
		return 0;
	}
	/* an event's Python frames (bpf/stkrec.bpf.c send_chain()): the next record is the event */
	if (len >= offsetof(struct stk_pychain, f) && *(const uint32_t *)data == STK_PYCHAIN_MAGIC) {
		memset(&df->chain, 0, sizeof(df->chain));
		memcpy(&df->chain, data, len < sizeof(df->chain) ? len : sizeof(df->chain));
		if (df->chain.n > STK_PY_FRAMES || df->chain.nact > STK_PY_ACTS ||
		    df->chain.n > (len - offsetof(struct stk_pychain, f)) / sizeof(df->chain.f[0]))
			df->chain.n = df->chain.nact = 0;
		df->has_chain = true;
		return 0;
	}
	/* BPF sends the stack as far as it copied it (d->len) */
	if (len < STACK_AT || d->len > len - STACK_AT)
		return 0;
	n = walk(df, d, &stop);
	if (df->snoop)
		df->err = rec_snoop__add_walked(df->snoop, d, df->ips, n, stop);
	else if (df->offcpu)
		df->err = keep_blocked(df, d, n, stop);
	else
		df->err = rec_counts__add_walked(df->counts, &d->key, d->gen, 1, df->ips, n, stop);
	return 0;
}

struct rec_defer *rec_defer__new(const struct rec_maps *maps, struct rec_procs *procs,
				 struct rec_unwind *unwind, struct rec_counts *counts,
				 struct rec_snoop *snoop, struct rec_reader *reader)
{
	struct rec_defer *df;

	if (maps->deferred_fd < 0 || (!counts && !snoop))
		return NULL;
	df = calloc(1, sizeof(*df));
	if (!df)
		return NULL;
	df->procs = procs;
	df->unwind = unwind;
	df->counts = counts;
	df->snoop = snoop;
	df->reader = reader;
	df->depth = maps->depth;
	df->offcpu = maps->offcpu;
	df->ips = calloc(maps->depth, sizeof(*df->ips));
	df->rb = ring_buffer__new(maps->deferred_fd, on_deferred, df, NULL);
	if (!df->ips || !df->rb) {
		rec_defer__free(df);
		return NULL;
	}
	return df;
}

void rec_defer__free(struct rec_defer *df)
{
	if (!df)
		return;
	ring_buffer__free(df->rb);
	tdestroy(df->blocked, free);
	free(df->ips);
	free(df);
}

int rec_defer__fd(const struct rec_defer *df)
{
	return df ? ring_buffer__epoll_fd(df->rb) : -1;
}

int rec_defer__consume(struct rec_defer *df)
{
	int n;

	if (!df)
		return 0;
	n = ring_buffer__consume(df->rb);
	if (n < 0 && n != -EINTR)
		return n;
	return df->err;
}
