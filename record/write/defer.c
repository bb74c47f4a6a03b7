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
 * Two threads: a thread of its own takes the records out of the BPF ring as they come, into a
 * queue in memory that grows as it must (up to defer_limit()), and the main thread walks them
 * from there, between its other work and at each drain. Walking needs the process read and its
 * tables built, under the reader's lock (beside busy compilers, the tables of a compile took
 * 1.4-3 s); a ring read by the walker itself filled meanwhile, and BPF counted the events that
 * found no room with their stacks cut: 162 of 3,787 user stacks of a 99 Hz profile while
 * compilers started, 35,000-177,000 of 6 x 500,000 USDT events of new processes with stkrec
 * beside 16 CPU hogs (tests/e2e/starved.sh). Copying a record out costs a fraction of what BPF
 * spent making it; the thread runs at a raised priority (rec_thread_urgent), so hogs beside it
 * do not keep it from the ring. At each drain the main thread empties the ring into the queue
 * and walks the queue to its end before the counts, when every deferred event of the drained
 * generation is there (rec_flip's grace period) and the kernel stacks they name are still in BPF.
 *
 * --offcpu sends a task's stack when it blocks and its time when it runs again (struct
 * stk_deferred_time): the walked stack waits here, one per thread, for its time.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <sys/eventfd.h>

#include "write.h"

/*
 * Records taken out of the ring, in blocks of BLOCK_BYTES (a record of 64 KiB gets one of its
 * own size), each record a struct held and its bytes, 8-byte aligned.
 */
#define BLOCK_BYTES (1u << 20)
/* While the queue is at its limit, the thread looks again for room this often. */
#define ROOM_WAIT_MS 5
/* Bytes taken out of the ring under one hold of the lock, and the callback's way to stop there */
#define TAKE_BYTES (4u << 20)
#define TAKE_PAUSE (-EAGAIN)

struct block {
	struct block *next;
	size_t used, size;
	unsigned char data[];
};

/*
 * Python chains waiting for their event. BPF sends a chain and its event back to back, but the
 * ring orders records by when they were reserved, and another CPU's may come between: with one
 * chain kept, an event of any other thread between them took it off (1 or 2 of 300 short
 * python3 processes' events lost their Python frames beside a busy stkrec).
 */
#define CHAIN_SLOTS 16

struct chain_slot {
	bool used;
	struct stk_pychain chain;
};

struct held {
	uint32_t len;
	uint32_t pad;
	unsigned char data[];
};

struct queue {
	struct block *head, *tail;
};

struct rec_defer {
	struct ring_buffer *rb;
	struct rec_worker worker;	/* ring_main() */
	int ready_fd;		/* eventfd: readable when records wait in the queue */
	/* the ring's consumption and the queue: the thread fills it, the main thread takes it */
	pthread_mutex_t lock;
	struct queue q;
	int qerr;		/* a failure to queue a record: the next consume returns it */
	size_t taken;		/* bytes of the ring taken by the current consume */
	size_t queued;		/* bytes in blocks not walked yet (atomic) */
	size_t limit;		/* the thread leaves records in the ring past this many */
	struct rec_procs *procs;
	struct rec_unwind *unwind;
	struct rec_counts *counts;	/* where walked events go, */
	struct rec_snoop *snoop;	/* or these with --snoop */
	struct rec_reader *reader;
	uint64_t *ips;
	uint32_t depth;
	bool offcpu;
	void *blocked;		/* --offcpu: tid -> struct blocked, walked stacks awaiting their time */
	/*
	 * The Python frames BPF sent just before the event of their thread (struct stk_pychain),
	 * by thread: another CPU's records may come between the two.
	 */
	struct chain_slot chains[CHAIN_SLOTS];
	uint32_t next_chain;	/* the slot a thread without one takes next */
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

	/* the chain BPF sent before this event of its thread, taken (valid until the next record) */
	for (uint32_t i = 0; i < CHAIN_SLOTS && !chain; i++)
		if (df->chains[i].used && df->chains[i].chain.tid == d->key.pid) {
			df->chains[i].used = false;
			chain = &df->chains[i].chain;
		}
	/* an event of an image that has ended: walked in it, as its row is named with it */
	if (rec_procs__walk_old(df->procs, d, chain, df->ips, df->depth, stop, &n))
		return n;
	n = rec_unwind__walk(df->unwind, d, chain, df->ips, df->depth, stop, &miss.addr);
	if (!needs_maps(*stop, miss.addr))
		return n;
	/* the kernel's records of what the process mapped may be waiting in their rings */
	rec_reader__catch_up(df->reader);
	/* among them the exec that ended the event's image */
	if (rec_procs__walk_old(df->procs, d, chain, df->ips, df->depth, stop, &n))
		return n;
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

/* A chain of len bytes, for its thread's event: in its thread's slot, else the next one. */
static void keep_chain(struct rec_defer *df, const void *data, size_t len)
{
	struct chain_slot *slot = NULL;
	struct stk_pychain *c;
	uint32_t tid;

	memcpy(&tid, (const uint8_t *)data + offsetof(struct stk_pychain, tid), sizeof(tid));
	for (uint32_t i = 0; i < CHAIN_SLOTS && !slot; i++)
		if (df->chains[i].used && df->chains[i].chain.tid == tid)
			slot = &df->chains[i];
	if (!slot)
		slot = &df->chains[df->next_chain++ % CHAIN_SLOTS];
	c = &slot->chain;
	memset(c, 0, sizeof(*c));
	memcpy(c, data, len < sizeof(*c) ? len : sizeof(*c));
	if (c->n > STK_PY_FRAMES || c->nact > STK_PY_ACTS ||
	    c->n > (len - offsetof(struct stk_pychain, f)) / sizeof(c->f[0]))
		c->n = c->nact = 0;
	slot->used = true;
}

/* Walk one record of the ring and count it (or keep it, --offcpu). 0 or -ENOMEM. */
static int handle(struct rec_defer *df, const void *data, size_t len)
{
	const struct stk_deferred *d = data;
	uint32_t stop, n;

	if (len == sizeof(struct stk_deferred_time))
		return count_blocked(df, data);
	/* an event's Python frames (bpf/stkrec.bpf.c send_chain()): its thread's event comes next */
	if (len >= offsetof(struct stk_pychain, f) && *(const uint32_t *)data == STK_PYCHAIN_MAGIC) {
		keep_chain(df, data, len);
		return 0;
	}
	/* BPF sends the stack as far as it copied it (d->len) */
	if (len < STACK_AT || d->len > len - STACK_AT)
		return 0;
	n = walk(df, d, &stop);
	if (df->snoop)
		return rec_snoop__add_walked(df->snoop, d, df->ips, n, stop);
	if (df->offcpu)
		return keep_blocked(df, d, n, stop);
	return rec_counts__add_walked(df->counts, &d->key, d->gen, 1, df->ips, n, stop);
}

/* ---- the queue between the ring and the walk ---------------------------------------------- */

static size_t held_size(size_t len)
{
	return (sizeof(struct held) + len + 7) & ~(size_t)7;
}

/* Append a record to the queue (under df->lock). 0 or -ENOMEM. */
static int enqueue(struct rec_defer *df, const void *data, size_t len)
{
	struct block *b = df->q.tail;
	size_t need = held_size(len);
	struct held *h;

	if (!b || b->size - b->used < need) {
		size_t size = need > BLOCK_BYTES ? need : BLOCK_BYTES;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return -ENOMEM;
		b->next = NULL;
		b->used = 0;
		b->size = size;
		if (df->q.tail)
			df->q.tail->next = b;
		else
			df->q.head = b;
		df->q.tail = b;
		__atomic_add_fetch(&df->queued, sizeof(*b) + size, __ATOMIC_RELAXED);
	}
	h = (struct held *)(b->data + b->used);
	h->len = len;
	memcpy(h->data, data, len);
	b->used += need;
	return 0;
}

/*
 * Called by ring_buffer__consume(), under df->lock. After TAKE_BYTES it stops the consume
 * (libbpf has then consumed this record too): the lock is not held long when a burst keeps the
 * ring full.
 */
static int on_record(void *ctx, void *data, size_t len)
{
	struct rec_defer *df = ctx;

	if (!df->qerr)
		df->qerr = enqueue(df, data, len);
	df->taken += len;
	return df->taken < TAKE_BYTES ? 0 : TAKE_PAUSE;
}

/*
 * Move up to TAKE_BYTES of the ring into the queue (under df->lock). Returns whether records
 * may be left in it.
 */
static bool take_some(struct rec_defer *df)
{
	int n;

	df->taken = 0;
	n = ring_buffer__consume(df->rb);
	if (n < 0 && n != TAKE_PAUSE && n != -EINTR && !df->qerr)
		df->qerr = n;
	return n == TAKE_PAUSE;
}

/* A part of the ring into the queue; wake the main thread if the queue was empty. */
static void take_ring(struct rec_defer *df)
{
	bool was_empty;

	pthread_mutex_lock(&df->lock);
	was_empty = !df->q.head;
	take_some(df);
	if (was_empty && df->q.head)
		rec_eventfd_signal(df->ready_fd);
	pthread_mutex_unlock(&df->lock);
}

static bool has_room(struct rec_defer *df)
{
	return __atomic_load_n(&df->queued, __ATOMIC_RELAXED) < df->limit;
}

/*
 * The ring's reader. BPF wakes it for the first record after it has caught up, so a burst is
 * taken out as it comes. At the queue's limit it leaves the records in the ring, which then
 * fills, and BPF counts what finds no room with its stack cut (STK_STOP_DEFER_FULL).
 */
static void *ring_main(void *arg)
{
	struct rec_defer *df = arg;
	struct pollfd pfd[2] = {
		{ .fd = df->worker.stop_fd, .events = POLLIN },
		{ .fd = ring_buffer__epoll_fd(df->rb), .events = POLLIN },
	};

	rec_thread_urgent();
	while (!(pfd[0].revents & POLLIN)) {
		bool room = has_room(df);

		pfd[1].revents = 0;
		if (poll(pfd, room ? 2 : 1, room ? -1 : ROOM_WAIT_MS) < 0)
			continue;
		if (pfd[1].revents & POLLIN)
			take_ring(df);
	}
	return NULL;
}

/*
 * The most memory the queue may take: 1 GiB, or an eighth of the host's memory if less. That is
 * some 16,000 events of deep stacks (64 KiB), or 800,000 of the shallow ones a process's first
 * events mostly are.
 */
static size_t defer_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	size_t limit = 1ul << 30;

	if (pages > 0 && page > 0 && (size_t)pages / 8 * page < limit)
		limit = (size_t)pages / 8 * page;
	return limit;
}

/* ---- the consumer ------------------------------------------------------------------------ */

struct rec_defer *rec_defer__new(const struct rec_maps *maps, struct rec_procs *procs,
				 struct rec_unwind *unwind, struct rec_counts *counts,
				 struct rec_snoop *snoop, struct rec_reader *reader)
{
	struct rec_defer *df;
	int err;

	if (maps->deferred_fd < 0 || (!counts && !snoop))
		return NULL;
	df = calloc(1, sizeof(*df));
	if (!df)
		return NULL;
	pthread_mutex_init(&df->lock, NULL);
	df->procs = procs;
	df->unwind = unwind;
	df->counts = counts;
	df->snoop = snoop;
	df->reader = reader;
	df->depth = maps->depth;
	df->offcpu = maps->offcpu;
	df->limit = defer_limit();
	df->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	df->ips = calloc(maps->depth, sizeof(*df->ips));
	df->rb = ring_buffer__new(maps->deferred_fd, on_record, df, NULL);
	if (df->ready_fd < 0 || !df->ips || !df->rb) {
		rec_defer__free(df);
		return NULL;
	}
	err = rec_worker_start(&df->worker, ring_main, df);
	if (err) {
		rec_defer__free(df);
		errno = -err;
		return NULL;
	}
	return df;
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *next = b->next;

		free(b);
		b = next;
	}
}

void rec_defer__free(struct rec_defer *df)
{
	if (!df)
		return;
	rec_worker_stop(&df->worker);
	ring_buffer__free(df->rb);
	free_blocks(df->q.head);
	tdestroy(df->blocked, free);
	if (df->ready_fd >= 0)
		close(df->ready_fd);
	pthread_mutex_destroy(&df->lock);
	free(df->ips);
	free(df);
}

int rec_defer__fd(const struct rec_defer *df)
{
	return df ? df->ready_fd : -1;
}

/*
 * Walk every record of blocks b, freeing each block once walked (all of them unwalked after an
 * error, err's or the first one's). 0 or that error.
 */
static int walk_blocks(struct rec_defer *df, struct block *b, int err)
{
	while (b) {
		struct block *next = b->next;

		for (size_t at = 0; !err && at < b->used;) {
			const struct held *h = (const struct held *)(b->data + at);

			err = handle(df, h->data, h->len);
			at += held_size(h->len);
		}
		__atomic_sub_fetch(&df->queued, sizeof(*b) + b->size, __ATOMIC_RELAXED);
		free(b);
		b = next;
	}
	return err;
}

int rec_defer__consume(struct rec_defer *df)
{
	struct block *taken;
	uint64_t ignored;
	bool more;
	int err;

	if (!df)
		return 0;
	/* cleared first: a record queued after the take below wakes the main loop again */
	if (read(df->ready_fd, &ignored, sizeof(ignored)) < 0)
		ignored = 0;	/* nothing queued since the last take */
	/* what the thread has not taken yet: at a drain, the rest of the drained generation */
	do {
		pthread_mutex_lock(&df->lock);
		more = !df->qerr && take_some(df);
		pthread_mutex_unlock(&df->lock);
	} while (more);
	pthread_mutex_lock(&df->lock);
	taken = df->q.head;
	df->q.head = df->q.tail = NULL;
	err = df->qerr;
	pthread_mutex_unlock(&df->lock);
	return walk_blocks(df, taken, err);
}
