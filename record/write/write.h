/* SPDX-License-Identifier: MIT */
/*
 * write.h: write/, from BPF's maps to capture records: the drain and snapshot (snapshot.c), the
 * deferred events walked in user space (defer.c), per-event records (snoop.c), the run's
 * metadata (meta.c) and the files the captures go to (output.c).
 */
#ifndef STK_REC_WRITE_H
#define STK_REC_WRITE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "stk/abi.h"
#include "stk/capture.h"

#include "../base/base.h"
#include "../probe/probe.h"
#include "../proc/proc.h"
#include "../python/python.h"
#include "../unwind/unwind.h"

/* ---- snapshot (snapshot.c) ------------------------------------------------------------------ */

struct rec_drain_stats {
	uint64_t losses[CAP_LOSS__COUNT];
	uint64_t events;
	/* --snoop: CAP_LOSS_EVENTS_DROPPED per CPU, lent by the rec_snoop until its next drain */
	uint32_t ncpus;
	uint64_t *cpu_dropped;
};

/*
 * Flip the generation, wait until no program still writes the old one, mark it as being
 * drained (programs that still count into it report themselves); returns it.
 */
unsigned int rec_flip(const struct rec_maps *maps);
/* Is the counting generation's stacks or counts map over half full? */
bool rec_maps__filling(const struct rec_maps *maps);
/* Read and sum the per-CPU stats, returning deltas since the previous call in prev. */
int rec_read_stats(const struct rec_maps *maps, uint64_t *prev, uint64_t *delta, int nstats);
void rec_interval_free(struct cap_interval *iv);

/* Dedupe helper, exposed for tests: index (1-based) of ips in the table, added if new. */
struct rec_stack_table;
struct rec_stack_table *rec_stack_table__new(void);
void rec_stack_table__free(struct rec_stack_table *t);
int rec_stack_table__add(struct rec_stack_table *t, const uint64_t *ips, uint32_t nips,
			 uint32_t flags);
/* Move the stacks out into an array (the table is left empty). */
uint32_t rec_stack_table__take(struct rec_stack_table *t, struct cap_stack **out);

/*
 * Stack hashes -> a batch's stack tables, deduplicated by content: the counts of rec_counts and
 * the --snoop events (snoop.c) share it. A stack's content is read from BPF once per batch
 * (with --offcpu, once per run).
 */
struct rec_stacks;
/* Lends maps, which must outlive it. NULL with errno set. */
struct rec_stacks *rec_stacks__new(const struct rec_maps *maps);
void rec_stacks__free(struct rec_stacks *r);
/* Read and delete every stack of generation g's map (idle) into the cache. 0 or -errno. */
int rec_stacks__collect(struct rec_stacks *r, unsigned int g);
/*
 * One side of row (user: ustack, else kstack) from the stack with hash id of generation g, or
 * the reason there is none (err: 0, STK_STACK_* or -errno, from the key). ret, when not 0, is
 * the return address at a probed function's entry (stk_key uret/kret), inserted as the second
 * frame unless the unwinder put it there. A lost stack sets CAP_ROW_F_*STACK_LOST; a truncated
 * or cut one counts row->count losses of its kind. Returns 0, or -errno of the map lookup.
 */
int rec_stacks__fill(struct rec_stacks *r, unsigned int g, bool user, uint64_t id, int32_t err,
		     uint64_t ret, struct cap_row *row);
/*
 * row's user stack from a walk stkrec did itself (a deferred event): ips[0..n), ended for
 * reason stop (enum stk_stop), counted as a loss of that kind when it is one. 0 or -ENOMEM.
 */
int rec_stacks__fill_walked(struct rec_stacks *r, const uint64_t *ips, uint32_t n,
			    uint32_t stop, struct cap_row *row);
/* End the batch: its stacks move into iv (owned by iv), its losses into st. */
void rec_stacks__take(struct rec_stacks *r, struct cap_interval *iv, struct rec_drain_stats *st);

/* Python frames become capture ids through py (borrowed; NULL: left out). */
void rec_stacks__set_python(struct rec_stacks *r, struct rec_python *py);

/* row's fields from BPF's key (no stacks yet), the row counting count events. */
void rec_row_from_key(struct cap_row *row, const struct stk_key *k, uint64_t count);

/* The counts of one interval, gathered over one or more drains (snapshot.c). */
struct rec_counts;
struct rec_counts *rec_counts__new(const struct rec_maps *maps);
void rec_counts__free(struct rec_counts *c);
/* After rec_flip() returned g: move g's counts and stacks out of BPF (both maps end empty). */
int rec_counts__drain(struct rec_counts *c, unsigned int g);
/* The stacks' Python frames become ids through py (rec_stacks__set_python()). */
void rec_counts__set_python(struct rec_counts *c, struct rec_python *py);
/*
 * Count key count times (--offcpu: microseconds), for a deferred event (bpf stkrec.bpf.c
 * defer_event()) whose user stack stkrec walked: ips[0..n), ended for reason stop (enum
 * stk_stop). Its kernel stack is still in generation g's stacks map, or cached. 0 or -errno.
 */
int rec_counts__add_walked(struct rec_counts *c, const struct stk_key *key, unsigned int g,
			   uint64_t count, const uint64_t *ips, uint32_t n, uint32_t stop);
/*
 * The interval so far into iv (rows merged by key, owned by iv), each row's image stamp (struct
 * stk_key image_ns) into *images (malloc'ed, iv->nrows entries, the caller frees it); its losses
 * into st. 0 or -ENOMEM (nothing taken).
 */
int rec_counts__take(struct rec_counts *c, struct cap_interval *iv, uint64_t **images,
		     struct rec_drain_stats *st);

int rec_meta_build(const struct rec_opts *opts, const struct rec_spec *specs, int nspecs,
		   uint32_t nperf, uint32_t depth, uint64_t mono_ns, const char *pid_filter,
		   struct cap_meta *meta);
void rec_meta_free(struct cap_meta *meta);

/* ---- deferred events (defer.c) ------------------------------------------------------------- */

/*
 * The consumer of BPF's deferred events (struct stk_deferred): a thread of its own takes them out
 * of the ring into memory as they come, and rec_defer__consume() walks their user stacks and
 * counts them into counts. NULL (errno unchanged) when the run defers nothing
 * (maps->deferred_fd < 0: --unwind fp), or with errno set.
 */
struct rec_defer;
struct rec_snoop;
/* Walked events go to counts, or with --snoop to snoop (the other NULL). */
struct rec_defer *rec_defer__new(const struct rec_maps *maps, struct rec_procs *procs,
				 struct rec_unwind *unwind, struct rec_counts *counts,
				 struct rec_snoop *snoop, struct rec_reader *reader);
void rec_defer__free(struct rec_defer *df);
/*
 * Count every deferred event submitted so far, those still in the ring included (main thread
 * only). Takes NULL. 0 or -errno.
 */
int rec_defer__consume(struct rec_defer *df);
/* Readable when deferred events wait (an eventfd); -1 for NULL. */
int rec_defer__fd(const struct rec_defer *df);

/* ---- per-event mode, --snoop (snoop.c) ------------------------------------------------------ */

struct rec_snoop;

/*
 * Start reading the events ring of p's maps in a thread of its own, so that writing a large
 * interval never stalls the reading. NULL with errno set.
 */
struct rec_snoop *rec_snoop__new(struct rec_probe *p);
void rec_snoop__free(struct rec_snoop *s);
/*
 * After rec_flip() returned g: read what is left in the ring buffer (every event of g), then
 * move g's stacks out of BPF. 0 or -errno.
 */
int rec_snoop__drain(struct rec_snoop *s, unsigned int g);
/*
 * At an interval end, after rec_snoop__drain(): move the events received since the last take
 * into iv (an EVENTS batch: rows sorted by time, stacks deduplicated), and count ring-buffer
 * drops per CPU into st.
 */
int rec_snoop__take(struct rec_snoop *s, struct cap_interval *iv, struct rec_drain_stats *st);
/* Record a deferred event (defer.c) whose user stack stkrec walked: ips[0..n), stop. */
int rec_snoop__add_walked(struct rec_snoop *s, const struct stk_deferred *d, const uint64_t *ips,
			  uint32_t n, uint32_t stop);
/* So many events wait that the batch should be written now (bounded chunk size and memory). */
bool rec_snoop__full(const struct rec_snoop *s);
/* The stacks' Python frames become ids through py (rec_stacks__set_python()). */
void rec_snoop__set_python(struct rec_snoop *s, struct rec_python *py);

/* ---- the capture files (output.c) ----------------------------------------------------------- */

/*
 * Where a recording's captures go: the -o file; with --rotate a file per rotation, named with its
 * start time, the oldest removed past --max-files and --max-disk; with --flight segments in
 * memory, dumped on demand. The caller writes each capture (header, intervals, END) and resets
 * what it has written at each new one; the writer keeps its stacks (format.md 4.4).
 */
struct rec_output;
/* Lends o, which must outlive it. Finds an earlier run's rotated files. NULL with errno set. */
struct rec_output *rec_output__new(const struct rec_opts *o);
void rec_output__free(struct rec_output *out);
/*
 * A new capture starting at start_ns (CLOCK_MONOTONIC): the -o file, the next rotated file (the
 * oldest ones removed as the bounds say) or flight segment. Its writer has the file header
 * written, nothing else. NULL with errno set.
 */
struct cap_writer *rec_output__create(struct rec_output *out, uint64_t start_ns);
/*
 * Give the capture w (from __create) its name, which a rotated file gets only once the one before
 * it is closed: a recorder killed in between leaves every named file whole but the newest. 0 or
 * -errno (the capture would be lost on close: __close tries once more).
 */
int rec_output__name(struct rec_output *out, const struct cap_writer *w);
/*
 * The capture w (from __create, with END written, or not) is done at now_ns: w is closed. Two may
 * be open at once: the next is created before the last is closed.
 */
void rec_output__close(struct rec_output *out, struct cap_writer *w, uint64_t now_ns);
/* The capture w (the last __create) is not wanted (a setup failed): closed and removed. */
void rec_output__discard(struct rec_output *out, struct cap_writer *w);
/* Should the capture being written (w) end at this interval boundary (--rotate, --flight)? */
bool rec_output__due(struct rec_output *out, const struct cap_writer *w, uint64_t now_ns);
/* --flight: an interval w wrote; the dump's window is made of these. */
void rec_output__interval(struct rec_output *out, const struct cap_writer *w, uint64_t start_ns,
			  uint64_t end_ns);
/* The file last created or dumped (for messages); lent. */
const char *rec_output__path(const struct rec_output *out);
/*
 * Under sudo, the -o file is made as the user who ran sudo, where they may (stkrec(8), FILES);
 * the user's name when it had to be root's instead, else NULL. Rotated files and dumps are
 * root's.
 */
const char *rec_output__sudo_user(const struct rec_output *out);
/* Files rotated (closed) or dumped so far. */
uint32_t rec_output__files(const struct rec_output *out);

/* What a dump wrote. */
struct rec_dump {
	uint32_t nintervals;
	uint64_t events, bytes;
	uint64_t start_ns, end_ns;	/* its first interval's start, last one's end */
	uint64_t lost_ns;	/* of the window, dropped for --flight-memory */
};
/*
 * --flight: write the intervals of the closed segments that ended in the last --flight seconds
 * before now_ns into one file (named with its first interval's start, as a rotated one; the
 * bounds apply). 0 (info->nintervals 0: nothing to write, no file), or -errno: a file cut by the
 * error is kept, readable up to it.
 */
int rec_output__dump(struct rec_output *out, uint64_t now_ns, struct rec_dump *info);

#endif /* STK_REC_WRITE_H */
