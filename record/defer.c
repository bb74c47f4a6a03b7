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
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "rec.h"

struct rec_defer {
	struct ring_buffer *rb;
	struct rec_procs *procs;
	struct rec_unwind *unwind;
	struct rec_counts *counts;	/* where walked events go, */
	struct rec_snoop *snoop;	/* or these with --snoop */
	struct rec_reader *reader;
	uint64_t *ips;
	uint32_t depth;
	int err;		/* first failure in the callback: the next consume returns it */
};

/* Walk d's stack; read its process first when the walk needs mappings stkrec lacks. */
static uint32_t walk(struct rec_defer *df, const struct stk_deferred *d, uint32_t *stop)
{
	uint32_t pid = d->key.tgid, n;
	uint64_t missing;

	n = rec_unwind__walk(df->unwind, d, df->ips, df->depth, stop, &missing);
	if (*stop != STK_STOP_PROC_UNKNOWN && *stop != STK_STOP_NO_MAPPING)
		return n;
	/* read after the event: what it ran in was mapped then, and is in what was read */
	if (rec_unwind__written_since(df->unwind, pid, d->ts_ns))
		return n;
	rec_reader__lock(df->reader);
	if (missing)
		rec_procs__recheck(df->procs, pid, missing);
	else
		rec_procs__note(df->procs, pid, REC_READ_AGAIN);
	rec_reader__unlock(df->reader);	/* gone already: the walk stays cut */
	return rec_unwind__walk(df->unwind, d, df->ips, df->depth, stop, &missing);
}

static int on_deferred(void *ctx, void *data, size_t len)
{
	struct rec_defer *df = ctx;
	const struct stk_deferred *d = data;
	uint32_t stop, n;

	if (len < sizeof(*d) || df->err)
		return 0;
	n = walk(df, d, &stop);
	df->err = df->snoop ? rec_snoop__add_walked(df->snoop, d, df->ips, n, stop) :
			      rec_counts__add_walked(df->counts, d, df->ips, n, stop);
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
	free(df->ips);
	free(df);
}

void rec_defer__wait(struct rec_defer *df, int timeout_ms)
{
	ring_buffer__poll(df->rb, timeout_ms);	/* errors: seen by the next consume */
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
