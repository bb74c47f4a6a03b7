// SPDX-License-Identifier: MIT
/*
 * snoop.c: --snoop, the per-event mode (bcc stacksnoop). BPF sends one struct stk_event per
 * event through the `events` ring buffer, with stack hashes instead of stacks; this file turns
 * each into a row (ts_ns, cpu, count 1) as it arrives, and at each interval end moves the rows
 * into one EVENTS batch whose stacks are deduplicated by content, like an INTERVAL's.
 *
 * A thread of its own reads the ring every READ_MS: BPF submits without waking anyone (a wakeup
 * per event cost more than the event, bpf/stkrec.bpf.c), and the main thread may spend a while
 * writing a large batch, during which a ring read by it alone would overflow. The lock guards
 * everything below that both threads touch: rows, stacks and the ring itself.
 *
 * Why the hashes stay valid until they are read: an event names the generation g whose stacks
 * map holds its stacks. Stacks of g are deleted only at the drain after the flip away from g,
 * and only after the grace period (rec_flip(): every program that read g has finished, so its
 * event is in the ring buffer) and after the ring buffer was read to its end (docs/bpf.md 4).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "write.h"
#include <linux/types.h>

#include "stk/abi.h"

/*
 * Events per batch before it is written early: a row encodes to about 70 bytes, so this stays
 * well under CAP_MAX_CHUNK_RAW (64 MiB) and bounds the memory rows take (64 bytes each).
 */
#define SNOOP_MAX_ROWS 500000u

/* Reading period: at 300,000 events/s the default 16 MiB ring holds 0.7 s, a 1 MiB one 40 ms. */
#define READ_MS 5

struct rec_snoop {
	const struct rec_maps *maps;
	struct ring_buffer *rb;
	pthread_t reader;
	bool reader_started;
	int stop;		/* atomic: tells the reader to end */
	pthread_mutex_t lock;
	struct cap_row *rows;
	uint32_t nrows, cap;
	struct rec_stacks *stacks;	/* the batch's stacks, each map value read once */
	int ncpus;
	uint64_t *drops;	/* per-CPU values read from snoop_drops */
	uint64_t *drops_prev;
	uint64_t *drops_delta;
	int err;		/* first failure inside the ring-buffer callback */
};

/* A new row (zeroed) at the end of the batch, not counted until commit_row(). */
static struct cap_row *next_row(struct rec_snoop *s)
{
	struct cap_row *row;

	if (s->nrows == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 4096;
		struct cap_row *v = realloc(s->rows, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		s->rows = v;
		s->cap = cap;
	}
	row = &s->rows[s->nrows];
	memset(row, 0, sizeof(*row));
	return row;
}

static void commit_row(struct rec_snoop *s)
{
	__atomic_store_n(&s->nrows, s->nrows + 1, __ATOMIC_RELAXED);	/* rec_snoop__full() */
}

static int add_event(struct rec_snoop *s, const struct stk_event *e)
{
	unsigned int g = e->gen & 1;
	struct cap_row *row = next_row(s);
	int err;

	if (!row)
		return -ENOMEM;
	row->probe = e->probe;
	row->pid = e->tgid;
	row->tid = e->pid;
	row->count = 1;
	row->ts_ns = e->ts_ns;
	row->cpu = e->cpu;
	memcpy(row->comm, e->comm, sizeof(row->comm) - 1);
	err = rec_stacks__fill(s->stacks, g, false, e->kstack, e->kerr, e->kret, row);
	if (!err)
		err = rec_stacks__fill(s->stacks, g, true, e->ustack, e->uerr, e->uret, row);
	if (!err)
		commit_row(s);
	return err;
}

void rec_snoop__set_python(struct rec_snoop *s, struct rec_python *py)
{
	pthread_mutex_lock(&s->lock);
	rec_stacks__set_python(s->stacks, py);
	pthread_mutex_unlock(&s->lock);
}

int rec_snoop__add_walked(struct rec_snoop *s, const struct stk_deferred *d, const uint64_t *ips,
			  uint32_t n, uint32_t stop)
{
	const struct stk_key *k = &d->key;
	struct cap_row *row;
	int err = -ENOMEM;

	pthread_mutex_lock(&s->lock);
	row = next_row(s);
	if (row) {
		rec_row_from_key(row, k, 1);
		row->ts_ns = d->ts_ns;
		row->cpu = d->cpu;
		err = rec_stacks__fill(s->stacks, d->gen & 1, false, k->kstack, k->kerr, k->kret,
				       row);
		if (!err)
			err = rec_stacks__fill_walked(s->stacks, ips, n, stop, row);
		if (!err)
			commit_row(s);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Called by ring_buffer__consume(), with the lock held. */
static int on_event(void *ctx, void *data, size_t len)
{
	struct rec_snoop *s = ctx;
	int err;

	if (len < sizeof(struct stk_event) || s->err)
		return 0;
	err = add_event(s, data);
	if (err)
		s->err = err;	/* reported by the next drain, which fails the run */
	return 0;
}

static void *read_events(void *arg)
{
	struct rec_snoop *s = arg;
	struct timespec period = { 0, READ_MS * 1000000L };

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&s->lock);
		ring_buffer__consume(s->rb);	/* errors: s->err, or retried next time */
		pthread_mutex_unlock(&s->lock);
		nanosleep(&period, NULL);
	}
	return NULL;
}

struct rec_snoop *rec_snoop__new(struct rec_probe *p)
{
	struct rec_snoop *s = calloc(1, sizeof(*s));
	const struct rec_maps *m = rec_probe__maps(p);
	bool ok;
	int err;

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->maps = m;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus < 0 || (uint32_t)s->ncpus > CAP_MAX_CPUS)
		s->ncpus = 0;
	s->stacks = rec_stacks__new(m);
	s->drops = calloc(s->ncpus + 1, sizeof(*s->drops));
	s->drops_prev = calloc(s->ncpus + 1, sizeof(*s->drops_prev));
	s->drops_delta = calloc(s->ncpus + 1, sizeof(*s->drops_delta));
	ok = s->stacks && s->drops && s->drops_prev && s->drops_delta;
	if (!ok) {
		rec_snoop__free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->rb = ring_buffer__new(m->events_fd, on_event, s, NULL);
	if (!s->rb) {
		err = errno;
		rec_snoop__free(s);
		errno = err;
		return NULL;
	}
	err = rec_thread_start(&s->reader, read_events, s);
	if (err) {
		rec_snoop__free(s);
		errno = err;
		return NULL;
	}
	s->reader_started = true;
	return s;
}

void rec_snoop__free(struct rec_snoop *s)
{
	if (!s)
		return;
	if (s->reader_started) {
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		pthread_join(s->reader, NULL);
	}
	ring_buffer__free(s->rb);
	pthread_mutex_destroy(&s->lock);
	free(s->rows);
	rec_stacks__free(s->stacks);
	free(s->drops);
	free(s->drops_prev);
	free(s->drops_delta);
	free(s);
}

bool rec_snoop__full(const struct rec_snoop *s)
{
	return __atomic_load_n(&s->nrows, __ATOMIC_RELAXED) >= SNOOP_MAX_ROWS;
}

/* Rows sorted by time; equal times keep arrival order (the sort key includes it). */
struct order {
	uint64_t ts;
	uint32_t i;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * One ring buffer serves every CPU in reservation order, and a timestamp is taken before the
 * reservation: two CPUs may interleave. Sorting by time gives time order overall, hence per CPU.
 */
static int sort_rows(struct cap_row *rows, uint32_t n)
{
	struct order *o;
	struct cap_row *sorted;

	if (!n)
		return 0;	/* rows is NULL then */
	o = malloc(n * sizeof(*o));
	sorted = malloc(n * sizeof(*sorted));
	if (!o || !sorted) {
		free(o);
		free(sorted);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		o[i] = (struct order){ rows[i].ts_ns, i };
	qsort(o, n, sizeof(*o), cmp_order);
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = rows[o[i].i];
	memcpy(rows, sorted, n * sizeof(*rows));
	free(o);
	free(sorted);
	return 0;
}

/* Drops since the last drain, per CPU; the per-CPU array has one slot. */
static int read_drops(struct rec_snoop *s, struct rec_drain_stats *st)
{
	uint32_t key = 0;
	uint64_t sum = 0;

	if (!s->ncpus)
		return 0;
	if (bpf_map_lookup_elem(s->maps->snoop_drops_fd, &key, s->drops))
		return -errno;
	for (int c = 0; c < s->ncpus; c++) {
		s->drops_delta[c] = s->drops[c] - s->drops_prev[c];
		s->drops_prev[c] = s->drops[c];
		sum += s->drops_delta[c];
	}
	st->losses[CAP_LOSS_EVENTS_DROPPED] += sum;
	if (sum) {
		st->ncpus = s->ncpus;
		st->cpu_dropped = s->drops_delta;
	}
	return 0;
}

/*
 * Under the lock: read the ring to its end (everything of generation g is there now: rec_flip's
 * grace period), then move g's stacks out of BPF. The reader resolves events meanwhile through
 * the same rec_stacks, hence the lock.
 */
int rec_snoop__drain(struct rec_snoop *s, unsigned int g)
{
	int n, err;

	pthread_mutex_lock(&s->lock);
	n = ring_buffer__consume(s->rb);
	err = n < 0 && n != -EINTR ? n : s->err;
	if (!err)
		err = rec_stacks__collect(s->stacks, g);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int rec_snoop__take(struct rec_snoop *s, struct cap_interval *iv, struct rec_drain_stats *st)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = read_drops(s, st);
	if (!err) {
		iv->rows = s->rows;
		iv->nrows = s->nrows;
		s->rows = NULL;
		__atomic_store_n(&s->nrows, 0, __ATOMIC_RELAXED);
		s->cap = 0;
		rec_stacks__take(s->stacks, iv, st);
		st->events += iv->nrows;
	}
	pthread_mutex_unlock(&s->lock);
	/* The sort runs unlocked, while the reader goes on. */
	if (!err)
		err = sort_rows(iv->rows, iv->nrows);
	if (err)
		return err;
	/* events that came between the interval's end and the flip belong to it */
	if (iv->nrows && iv->rows[iv->nrows - 1].ts_ns > iv->end_ns)
		iv->end_ns = iv->rows[iv->nrows - 1].ts_ns;
	return 0;
}
