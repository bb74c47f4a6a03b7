// SPDX-License-Identifier: MIT
/*
 * run.c: one recording. Resolve the specs, attach, and only then create the capture (a failed
 * setup leaves no file). A reader thread (proc/reader.c) reads processes as BPF reports them. Per
 * interval: flip and drain at the deadline (counts, or --snoop's events), then write PROCS,
 * what naming the rows needs (OBJECTS, PERFMAP, KSYMS_ADD), INTERVAL or EVENTS, and LOSSES.
 * With --rotate (or --flight, into memory) a capture ends at an interval boundary and the next
 * one starts with nothing written (write/output.c): every event is in exactly one file.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec.h"
#include <linux/types.h>

#include "stk/abi.h"

volatile int rec_stop;
volatile int rec_rotate_now;
volatile int rec_dump_now;

/* Capture bytes waiting for the writer's thread at most: a few intervals' worth. */
#define WRITE_QUEUE_BYTES (64u << 20)

/*
 * The main loop's looks between deadlines: every POLL_MS with a -- COMMAND child (its end ends
 * the recording) or --snoop batches to watch, otherwise every LOOK_MS. BPF wakes it when a map
 * is over half full (STK_NOTIFY_FILL), so that look is only a safety net for a wake-up the full
 * notification ring dropped, and the status line's pace. Each wake-up costs a context switch or
 * two: at 25 a second they were most of a long recording's CPU.
 */
#define POLL_MS 20
#define LOOK_MS 1000
/* How long the last drain waits for events counted on their task's return (wait_retries()) */
#define RETRY_WAIT_MS 200
#define NS_PER_SEC 1000000000ull

struct run {
	const struct rec_opts *o;
	struct rec_spec *specs;
	int nspecs;
	struct rec_probe *probe;
	struct rec_procs *procs;
	struct rec_child *child;
	struct rec_snoop *snoop;	/* --snoop: events batched per interval (write/snoop.c) */
	struct rec_counts *counts;	/* otherwise: the interval's counts, over its drains */
	struct rec_defer *defer;	/* events BPF left for a user-space walk (NULL: none) */
	struct rec_drain_stats st;	/* the interval's losses so far */
	struct rec_reader *reader;	/* notification thread; NULL: polled here */
	struct rec_mmaps *mmaps;	/* the kernel's mmap records; NULL: /proc reads only */
	struct rec_perfmaps *perfmaps;
	struct rec_unwind *unwind;	/* CFI tables for BPF; NULL with --unwind fp */
	struct rec_python *python;	/* Python code objects; NULL: no Python frames */
	struct rec_kallsyms *ksyms;	/* what KSYMS_ADD records write (ksyms/kallsyms.c) */
	struct rec_output *out;	/* the files (write/output.c) */
	struct cap_writer *w;	/* the capture being written */
	char path[PATH_MAX + 32];	/* its name, for messages */
	uint64_t stats_prev[STK_STAT__COUNT];
	uint32_t seq;		/* intervals in the capture being written */
	uint64_t file_events;	/* its events */
	uint64_t iv_start;
	uint32_t intervals;	/* of the whole run */
	uint64_t events, stacks, lost, bytes;	/* bytes: of the captures closed */
	int rotate_err;		/* the last failure to start a new file, as said on stderr */
	uint64_t last_status;
	bool status_shown;
	bool ending;		/* the last interval: its drain is the last */
	int disk_full;		/* the writer's wait for room, as last said on stderr */
};

static int on_notify(void *ctx, void *data, size_t len)
{
	struct run *r = ctx;
	const struct stk_notify *n = data;

	if (len < sizeof(*n))
		return 0;
	/*
	 * The kernel's records up to now first, as the read below may be of a process that forked
	 * and exec'd since the reader last looked: the fork record holds the image its first
	 * events ran in (its parent's mappings), and an exec record applied after the read, being
	 * older, is dropped, and that image with it. Cheap when there are none: a ring's head.
	 */
	rec_mmaps__consume(r->mmaps, r->procs);
	/*
	 * BPF notifies a tgid again only after an exec (it forgets the tgid then), a pid reuse, or
	 * an LRU eviction: each time the mappings may have changed, so read them again. A process
	 * may be gone already; the interval end records it without maps.
	 */
	if (n->kind == STK_NOTIFY_MAPS) {
		rec_procs__recheck(r->procs, n->tgid,
				   &(struct rec_miss){ .addr = n->addr, .ts_ns = n->ts_ns });
		return 0;
	}
	/* the old image is kept for its rows drained after: the read replaces it */
	if (n->kind == STK_NOTIFY_EXEC)
		rec_procs__exec_seen(r->procs, n->tgid, n->ts_ns);
	rec_procs__note(r->procs, n->tgid, REC_READ_AGAIN);
	return 0;
}

/* ---- messages ---------------------------------------------------------------------------- */

static void print_banner(const struct run *r)
{
	const struct rec_opts *o = r->o;
	const char *stacks = o->kernel_only ? "kernel" : o->user_only ? "user" : "user + kernel";
	char who[64];

	for (int i = 0; i < r->nspecs; i++)
		fprintf(stderr, "Tracing %u functions for \"%s\"... Hit Ctrl-C to end.\n",
			r->specs[i].nattached, r->specs[i].text);
	if (r->nspecs)
		return;
	/* bcc profile's wording. */
	if (o->npids)
		snprintf(who, sizeof(who), "PID %u%s", o->pids[0], o->npids > 1 ? ",..." : "");
	else if (o->ntids)
		snprintf(who, sizeof(who), "TID %u%s", o->tids[0], o->ntids > 1 ? ",..." : "");
	else if (r->child)
		snprintf(who, sizeof(who), "PID %d", rec_child__pid(r->child));	/* -- COMMAND */
	else
		snprintf(who, sizeof(who), "all threads");
	if (o->offcpu)	/* bcc offcputime's wording */
		fprintf(stderr, "Tracing off-CPU time (us) of %s by %s stack", who, stacks);
	else if (o->period)
		fprintf(stderr, "Sampling at every %llu events of %s by %s stack",
			(unsigned long long)o->period, who, stacks);
	else
		fprintf(stderr, "Sampling at %u Hertz of %s by %s stack", o->freq_hz, who, stacks);
	if (!o->offcpu && o->event && strcmp(o->event, "cpu-clock"))
		fprintf(stderr, " on %s", o->event);	/* -e */
	if (o->cpu >= 0)
		fprintf(stderr, " on CPU#%d", o->cpu);
	if (o->duration_s)
		fprintf(stderr, " for %u secs.\n", o->duration_s);
	else
		fprintf(stderr, "... Hit Ctrl-C to end.\n");
}

static void human_size(uint64_t b, char *buf, size_t sz)
{
	if (b < 10240)
		snprintf(buf, sz, "%llu B", (unsigned long long)b);
	else if (b < 10ull << 20)
		snprintf(buf, sz, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, sz, "%.1f MiB", b / 1048576.0);
}

static bool status_wanted(const struct run *r)
{
	return !r->o->quiet && isatty(STDERR_FILENO);
}

static void show_status(struct run *r, uint64_t now)
{
	char size[32];

	if (!status_wanted(r) || now - r->last_status < NS_PER_SEC)
		return;
	r->last_status = now;
	human_size(cap_writer__size(r->w), size, sizeof(size));
	fprintf(stderr, "\r%lu events, %u stacks, %lu lost, %s\033[K", (unsigned long)r->events,
		(unsigned int)r->stacks, (unsigned long)r->lost, size);
	r->status_shown = true;
}

/*
 * What the CFI tables took (docs/bpf.md 7): a table per object, shared by every process, in
 * BPF arrays created as they filled.
 */
static void print_unwind_stats(const struct rec_unwind_stats *us, const struct rec_opts *o)
{
	if (!us)
		return;
	fprintf(stderr, "stkrec: unwind tables: %u objects, %u rows, %.1f of %.1f MiB in %u array%s "
		"(--unwind-memory %u MiB), built in %.0f ms", us->objects, us->rows,
		us->rows * sizeof(struct stk_urow) / 1048576.0,
		us->chunk_rows * sizeof(struct stk_urow) / 1048576.0, us->chunks,
		us->chunks == 1 ? "" : "s", o->unwind_mb, us->build_ns / 1e6);
	if (us->over_limit)
		fprintf(stderr, "; %u objects over --unwind-memory", us->over_limit);
	fputc('\n', stderr);
}

/* Python's code objects (docs/bpf.md 10), when any was met. */
static void print_python_stats(struct rec_python *py)
{
	struct rec_python_stats st;

	rec_python__stats(py, &st);
	if (st.read)
		fprintf(stderr, "stkrec: python: %llu code objects read, %llu unnamed, %llu "
			"written, %llu with their first line only\n", (unsigned long long)st.read,
			(unsigned long long)st.unnamed, (unsigned long long)st.written,
			(unsigned long long)st.lines_cut);
}

/*
 * Entries are dropped one interval after their process's exit: those held at the end are the
 * processes still alive, or gone in the last interval. Many more hint at exits never seen.
 */
static void print_procs_stats(const struct rec_procs *ps)
{
	struct rec_procs_stats st;

	rec_procs__stats(ps, &st);
	fprintf(stderr, "stkrec: process table: %llu processes followed, %llu dropped after their "
		"exit, %u held at the end\n", (unsigned long long)st.entries,
		(unsigned long long)st.retired, st.held);
}

static void clear_status(struct run *r)
{
	if (r->status_shown)
		fprintf(stderr, "\r\033[K");
}

/* ---- one interval --------------------------------------------------------------------------- */

/* Map the BPF stats to the capture's loss kinds (abi.h enum stk_stat -> capture.h cap_loss). */
static void add_bpf_losses(const uint64_t *delta, uint64_t *losses)
{
	losses[CAP_LOSS_KSTACK_COLLISION] += delta[STK_STAT_KSTACK_FULL];
	losses[CAP_LOSS_USTACK_COLLISION] += delta[STK_STAT_USTACK_FULL];
	losses[CAP_LOSS_KSTACK_ERROR] += delta[STK_STAT_KSTACK_ERROR];
	losses[CAP_LOSS_USTACK_MISSING] += delta[STK_STAT_USTACK_MISSING];
	losses[CAP_LOSS_COUNTS_FULL] += delta[STK_STAT_COUNTS_FULL];
	losses[CAP_LOSS_NOTIFY_DROPPED] += delta[STK_STAT_NOTIFY_DROPPED];
	losses[CAP_LOSS_DRAIN_RACE] += delta[STK_STAT_DRAIN_RACE];
	losses[CAP_LOSS_NESTED] += delta[STK_STAT_NESTED];
}

/* Every row's process must be in the file before the row: read the ones not seen yet. */
static void ensure_processes(struct run *r, const struct cap_interval *iv, uint64_t *losses)
{
	for (uint32_t i = 0; i < iv->nrows; i++) {
		const struct cap_row *row = &iv->rows[i];

		if (!rec_procs__ensure(r->procs, row->pid, row->comm) && row->ustack)
			losses[CAP_LOSS_MAPS_UNREAD] += row->count;
	}
}

/*
 * Wait up to timeout_ms for what needs the main loop: a map over half full, deferred events to
 * walk, or a signal. Notifications: with the reader thread they are handled there (and
 * rec_reader__sync() catches up); without it here, where BPF's wake-up comes too.
 */
static void poll_notify(struct run *r, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = rec_probe__fill_fd(r->probe), .events = POLLIN },
		{ .fd = rec_defer__fd(r->defer), .events = POLLIN },	/* -1: ignored */
	};

	if (!r->reader) {
		rec_notifications__handle(r->probe, r->mmaps, r->procs, timeout_ms);
	} else if (timeout_ms > 0) {
		if (poll(pfd, 2, timeout_ms) > 0 && (pfd[0].revents & POLLIN))
			rec_probe__fill_seen(r->probe);
	} else {
		rec_reader__sync(r->reader);
	}
}

/*
 * What symbolizing the interval's rows needs, before the rows (format.md: every record a
 * row needs precedes it): OBJECTS of the objects its user stacks hit, new perf-map lines, and
 * the kernel symbols its kernel stacks hit (KSYMS_ADD).
 */
static int put_symbols(struct run *r, const struct cap_interval *iv, const uint64_t *when)
{
	struct rec_object **objs;
	uint32_t n = 0;
	int err;

	rec_reader__lock(r->reader);
	err = rec_procs__hit_objects(r->procs, iv, when, &objs, &n);
	if (!err)
		err = rec_perfmaps__put(r->perfmaps, r->procs, iv, r->w);
	rec_reader__unlock(r->reader);
	/* objs stay valid: objects live as long as r->procs; only this thread writes them. */
	if (!err)
		err = rec_objects__put(rec_procs__objects(r->procs), objs, n, r->o, r->w);
	if (!err)
		err = rec_kallsyms__put(r->ksyms, iv, r->w);
	/* the code objects the rows' Python frames name (format.md 4.11) */
	if (!err)
		err = rec_python__put(r->python, r->w);
	return err;
}

/* The process records part p of the interval needs (rec_procs__split). */
static int put_procs(struct run *r, uint32_t p)
{
	struct cap_record rec = { .type = CAP_CHUNK_PROCS };
	int err = 0;

	rec_reader__lock(r->reader);
	rec_procs__pending(r->procs, p, &rec.procs);
	if (rec.procs.count)
		err = cap_writer__put(r->w, &rec);
	if (!err)
		rec_procs__written(r->procs, p);
	rec_reader__unlock(r->reader);
	return err;
}

/*
 * The interval's rows, in nparts chunks when a process ran two images in it (rec_procs__split):
 * each part after the process records that name its rows, since a reader names a row with the
 * latest record of its pid (format.md 3.2). The parts share the seq and the stack tables.
 */
static int put_parts(struct run *r, const struct cap_record *iv, const uint32_t *part,
		     uint32_t nparts)
{
	struct cap_record one = *iv;
	int err = 0;

	if (nparts == 1)
		return cap_writer__put(r->w, iv);
	one.interval.rows = malloc((iv->interval.nrows ? iv->interval.nrows : 1) *
				   sizeof(*one.interval.rows));
	if (!one.interval.rows)
		return -ENOMEM;
	for (uint32_t p = 0; p < nparts && !err; p++) {
		one.interval.nrows = 0;
		for (uint32_t i = 0; i < iv->interval.nrows; i++)
			if (part[i] == p)
				one.interval.rows[one.interval.nrows++] = iv->interval.rows[i];
		if (p)
			err = put_procs(r, p);
		if (!err)
			err = cap_writer__put(r->w, &one);
	}
	free(one.interval.rows);
	return err;
}

/* What names each row's process image (rec_procs__split): its stamp, or its event's time. */
static int row_times(const struct cap_interval *iv, uint64_t **when)
{
	*when = malloc((iv->nrows ? iv->nrows : 1) * sizeof(**when));
	if (!*when)
		return -ENOMEM;
	for (uint32_t i = 0; i < iv->nrows; i++)
		(*when)[i] = iv->rows[i].ts_ns;
	return 0;
}

/* Flip, and move the idle generation out of BPF into the interval being gathered. */
static int drain(struct run *r)
{
	const struct rec_maps *maps = rec_probe__maps(r->probe);
	uint64_t delta[STK_STAT__COUNT] = { 0 };
	unsigned int g = rec_flip(maps);
	int err = rec_read_stats(maps, r->stats_prev, delta, STK_STAT__COUNT);

	add_bpf_losses(delta, r->st.losses);
	/* past the last flip, an event still waiting for its task would count where none looks */
	if (r->ending)
		r->st.losses[CAP_LOSS_RETRY_PENDING] += *maps->retries_pending;
	/* deferred events of g name kernel stacks that the drain is about to take out of BPF */
	if (!err)
		err = rec_defer__consume(r->defer);
	if (!err)
		err = r->snoop ? rec_snoop__drain(r->snoop, g) : rec_counts__drain(r->counts, g);
	if (err)
		rec_err(err, "cannot read the BPF maps: %s", strerror(-err));
	return err;
}

static int write_interval(struct run *r)
{
	struct cap_record iv = { .type = CAP_CHUNK_INTERVAL }, lo = { .type = CAP_CHUNK_LOSSES };
	struct rec_drain_stats *st = &r->st;
	uint64_t *when = NULL;
	uint32_t *part = NULL;
	int err, nparts = 1;

	if (r->snoop)
		iv.type = CAP_CHUNK_EVENTS;
	poll_notify(r, 0);
	iv.interval.end_ns = rec_now_ns();
	err = drain(r);
	if (!err && r->snoop)
		err = rec_snoop__take(r->snoop, &iv.interval, st);
	else if (!err)
		err = rec_counts__take(r->counts, &iv.interval, &when, st);
	if (!err && r->snoop)
		err = row_times(&iv.interval, &when);
	if (!err) {
		part = malloc((iv.interval.nrows ? iv.interval.nrows : 1) * sizeof(*part));
		err = part ? 0 : -ENOMEM;
	}
	if (err) {
		rec_interval_free(&iv.interval);
		free(when);
		free(part);
		return err;
	}
	iv.interval.seq = r->seq;
	iv.interval.start_ns = r->iv_start;
	r->iv_start = iv.interval.end_ns;
	poll_notify(r, 0);	/* notifications of the rows just drained */
	rec_reader__lock(r->reader);
	ensure_processes(r, &iv.interval, st->losses);
	nparts = rec_procs__split(r->procs, &iv.interval, when, part);
	rec_reader__unlock(r->reader);
	/* objects first: queueing one asks whether it was deleted, which its mappings then say */
	err = nparts < 0 ? nparts : put_symbols(r, &iv.interval, when);
	st->losses[CAP_LOSS_PERFMAP_LEFT_OUT] += rec_perfmaps__left_out(r->perfmaps);
	if (!err)
		err = put_procs(r, 0);
	if (!err)
		err = put_parts(r, &iv, part, nparts);
	rec_reader__lock(r->reader);
	rec_procs__split_done(r->procs);
	rec_procs__retire(r->procs);
	rec_reader__unlock(r->reader);
	free(when);
	free(part);
	rec_python__losses(r->python, st->losses);	/* counted as its rows' ids were given */
	lo.losses.interval_seq = r->seq;
	lo.losses.ncpus = st->ncpus;
	lo.losses.cpu_dropped = st->cpu_dropped;
	memcpy(lo.losses.counts, st->losses, sizeof(st->losses));
	if (!err)
		err = cap_writer__put(r->w, &lo);
	cap_writer__flush(r->w);	/* the interval's records, in one wake-up of the writer */
	r->events += st->events;
	r->file_events += st->events;
	r->stacks += iv.interval.nkstacks + iv.interval.nustacks;
	for (int i = 0; i < CAP_LOSS__COUNT; i++)
		r->lost += i == CAP_LOSS_PERFMAP_LEFT_OUT ? 0 : st->losses[i];	/* bytes */
	memset(st, 0, sizeof(*st));
	rec_output__interval(r->out, r->w, iv.interval.start_ns, iv.interval.end_ns);
	rec_interval_free(&iv.interval);
	if (err)
		return rec_err(err, "cannot write to %s: %s", r->path, strerror(-err));
	r->seq++;
	r->intervals++;
	return 0;
}

/*
 * BPF leaves an event whose user stack it could not read to be counted on its task's return to
 * user space (bpf/stkrec.bpf.c, retry_at_return()), microseconds later as a rule. The last drain
 * waits a little for them; any still waiting are lost (drain()).
 */
static void wait_retries(const struct run *r)
{
	volatile uint64_t *pending = rec_probe__maps(r->probe)->retries_pending;

	for (int ms = 0; ms < RETRY_WAIT_MS && *pending; ms++)
		usleep(1000);
}

static int next_look_ms(const struct run *r)
{
	return r->child || r->snoop ? POLL_MS : LOOK_MS;
}

/* A full disk holds the capture in memory for a while (writer.c): say when, and when it ends. */
static void say_disk_full(struct run *r)
{
	int full = cap_writer__waiting(r->w);

	if (full && !r->disk_full)
		rec_err(0, "warning: cannot write to %s: %s; the capture waits in memory (up to %u "
			"MiB) until there is room", r->path, strerror(-full),
			WRITE_QUEUE_BYTES >> 20);
	else if (!full && r->disk_full)
		rec_err(0, "%s: room again, the capture is written", r->path);
	r->disk_full = full;
}

/* ---- the captures: one file, rotated files, flight segments ------------------------------- */

/*
 * META (starting at start) and, with --all-kallsyms, the whole kallsyms, into w. 0 or -errno,
 * with why it failed in why.
 */
static int write_header(struct run *r, struct cap_writer *w, uint64_t start, char *why,
			size_t len)
{
	const struct rec_maps *maps = rec_probe__maps(r->probe);
	struct cap_record meta = { .type = CAP_CHUNK_META };
	const char *path = rec_output__path(r->out);
	char pid[16];
	int err;

	snprintf(pid, sizeof(pid), "%d", rec_child__pid(r->child));
	err = rec_meta_build(r->o, r->specs, r->nspecs, rec_probe__nperf(r->probe), maps->depth,
			     start, r->child ? pid : NULL, &meta.meta);
	if (err) {
		snprintf(why, len, "cannot build the metadata: %s", strerror(-err));
		return err;
	}
	err = cap_writer__put(w, &meta);
	rec_meta_free(&meta.meta);
	if (err) {
		snprintf(why, len, "cannot write to %s: %s", path, strerror(-err));
		return err;
	}
	/* All of kallsyms, now, when asked; else only what the drains need (name_kernel()). */
	err = r->o->all_kallsyms ? rec_kallsyms__put_all(r->ksyms, w) : 0;
	if (err)
		snprintf(why, len, "cannot copy /proc/kallsyms to %s: %s", path, strerror(-err));
	return err;
}

/*
 * A new capture starting at start, its header written: the writer, or NULL with errno set and
 * why it failed in why (nothing is left of it). From the first interval on, chunks are
 * compressed and written on the writer's thread: a large record (an object's symbol table, a
 * batch of events) never delays a drain. The header is written here: a disk too small for it
 * leaves no file.
 */
static struct cap_writer *open_capture(struct run *r, uint64_t start, char *why, size_t len)
{
	struct cap_writer *w = rec_output__create(r->out, start);
	int err;

	if (!w) {
		err = -errno;
		snprintf(why, len, "cannot create %s: %s", rec_output__path(r->out),
			 cap_output_strerror(err));
		errno = -err;
		return NULL;
	}
	err = write_header(r, w, start, why, len);
	if (err) {
		rec_output__discard(r->out, w);
		errno = -err;
		return NULL;
	}
	cap_writer__background(w, WRITE_QUEUE_BYTES);
	return w;
}

/* w becomes the capture written from now on: nothing is written in it yet. */
static void switch_to(struct run *r, struct cap_writer *w)
{
	r->w = w;
	r->seq = 0;
	r->file_events = 0;
	if (r->o->flight_s)
		snprintf(r->path, sizeof(r->path), "the flight recorder's memory");
	else
		snprintf(r->path, sizeof(r->path), "%s", rec_output__path(r->out));
}

/* The capture being written ends at now: END, then flushed to disk. 0 or a write error. */
static int close_capture(struct run *r, uint64_t now)
{
	struct cap_record end = { .type = CAP_CHUNK_END };
	int err;

	end.end.nintervals = r->seq;
	end.end.end_ns = now;
	end.end.events = r->file_events;
	err = cap_writer__put(r->w, &end);
	if (!err)
		err = cap_writer__finish(r->w);
	if (err)
		rec_err(err, "cannot write to %s: %s", r->path, strerror(-err));
	r->bytes += cap_writer__size(r->w);
	rec_output__close(r->out, r->w, now);
	r->w = NULL;
	return err;
}

/*
 * At an interval boundary: end the capture and start the next (--rotate, --flight, SIGHUP,
 * SIGUSR2). The next one is made first: while it cannot be (a full disk, a directory gone), the
 * capture goes on and the rotation is tried again at the next boundary; nor does one start while
 * the writer waits for room for the one being written, whose queued chunks would be lost.
 */
static int rotate(struct run *r, uint64_t now)
{
	struct cap_writer *next;
	char why[PATH_MAX + 128];
	int err;

	if (cap_writer__waiting(r->w))
		return 0;
	next = open_capture(r, now, why, sizeof(why));
	if (!next) {
		if (r->rotate_err != errno)
			rec_err(-errno, "warning: %s; %s goes on, the next file is tried at the next "
				"interval", why, r->path);
		r->rotate_err = errno;
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	r->rotate_err = 0;
	/* the one closed is complete whatever happens: a write error only ends it early */
	close_capture(r, now);
	err = rec_output__name(r->out, next);
	if (err)
		rec_err(err, "cannot name the next file %s: %s", rec_output__path(r->out),
			strerror(-err));
	switch_to(r, next);
	/* what the rooms wrote was written to the file just closed */
	rec_reader__lock(r->reader);
	rec_procs__new_file(r->procs);
	rec_reader__unlock(r->reader);
	rec_perfmaps__new_file(r->perfmaps);
	rec_kallsyms__new_file(r->ksyms);
	rec_python__new_file(r->python);
	return err;
}

/* --flight: the last SECS into one file (write/output.c), said on stderr. */
static int dump(struct run *r, uint64_t now)
{
	struct rec_dump d;
	int err = rec_output__dump(r->out, now, &d);

	if (err == -ENOMEM)
		return rec_err(err, "out of memory");
	if (err)
		rec_err(err, "warning: cannot write the flight recorder's dump %s: %s",
			rec_output__path(r->out), strerror(-err));
	else if (!d.nintervals)
		rec_err(0, "flight recorder: no interval to write yet");
	else
		rec_err(0, "flight recorder: wrote %u intervals (%.3f s), %llu events, %llu bytes "
			"to %s", d.nintervals, (d.end_ns - d.start_ns) / 1e9,
			(unsigned long long)d.events, (unsigned long long)d.bytes,
			rec_output__path(r->out));
	if (d.lost_ns)
		rec_err(0, "warning: flight recorder: the first %.3f s of the window were dropped "
			"for --flight-memory %u", d.lost_ns / 1e9, r->o->flight_mb);
	return 0;
}

/*
 * After an interval: a new capture when one is due, and a dump when asked for. The boundary is
 * the end of the interval just written, the start of the next: one file ends where the next
 * begins.
 */
static int next_capture(struct run *r)
{
	bool dump_now = rec_dump_now && r->o->flight_s;
	uint64_t now = r->iv_start;
	int err = 0;

	if (rec_rotate_now || dump_now || rec_output__due(r->out, r->w, now))
		err = rotate(r, now);
	rec_rotate_now = 0;
	rec_dump_now = 0;
	return !err && dump_now ? dump(r, now) : err;
}

static int loop(struct run *r)
{
	const struct rec_opts *o = r->o;
	uint64_t start = r->iv_start, interval = o->interval_s * NS_PER_SEC;
	uint64_t deadline = start + interval, end = o->duration_s ? start + o->duration_s * NS_PER_SEC : 0;
	bool stop = false;
	int err;

	while (!stop) {
		uint64_t now = rec_now_ns(), until = end && end < deadline ? end : deadline;
		/* rounded up: under a millisecond before the deadline, a 0 ms wait would spin */
		int timeout = until > now ? (until - now + 999999) / 1000000 : 0;
		int look = next_look_ms(r);
		bool asked;

		poll_notify(r, timeout < look ? timeout : look);
		now = rec_now_ns();
		rec_reader__lock(r->reader);
		if (r->child && rec_child__poll(r->child, r->procs))
			stop = true;
		rec_reader__unlock(r->reader);
		if (rec_stop || (end && now >= end))
			stop = true;
		show_status(r, now);
		err = rec_defer__consume(r->defer);
		if (err)
			return rec_err(err, "cannot count the deferred events: %s", strerror(-err));
		/* SIGHUP, SIGUSR2 (rotate) or SIGUSR1 (dump): the interval ends now */
		asked = rec_rotate_now || (rec_dump_now && o->flight_s);
		if (!stop && now < deadline && !asked && !(r->snoop && rec_snoop__full(r->snoop))) {
			/* A generation half full: drain it now, the interval goes on. */
			if (rec_maps__filling(rec_probe__maps(r->probe)) && (err = drain(r)))
				return err;
			continue;
		}
		if (stop) {
			r->ending = true;
			wait_retries(r);
		}
		err = write_interval(r);
		if (!err && !stop)
			err = next_capture(r);
		if (err)
			return err;
		say_disk_full(r);
		if (asked && now < deadline)
			continue;	/* the next interval ends at the deadline */
		deadline += interval;
		if (deadline <= now)
			deadline = now + interval;	/* a drain that took longer than an interval */
	}
	return 0;
}

/* ---- setup ------------------------------------------------------------------------------------- */

/*
 * The kernel names the addresses each drain needs (record/ksyms/ksymname.c); where that program
 * does not load, kallsyms is read at the first drain that needs it. Loaded after the banner, as the
 * first drain is the first to need it: on a busy machine it took up to 20 ms of the time to
 * the first sample.
 */
static void name_kernel(struct run *r)
{
	struct rec_ksymname *kn;

	if (!r->o->all_kallsyms && (kn = rec_ksymname__open()))
		rec_kallsyms__use_names(r->ksyms, kn);
}

/* A -p or -L id that names no task would make a silent, empty capture: refuse it up front. */
static int check_ids_exist(const uint32_t *ids, uint32_t n, const char *what)
{
	for (uint32_t i = 0; i < n; i++)
		if (kill((pid_t)ids[i], 0) && errno == ESRCH)
			return rec_err(-ESRCH, "no such %s: %u", what, ids[i]);
	return 0;
}

/*
 * -p --children: the processes -p's have started already. BPF follows the forks from its attach
 * on, of a parent it traces: a pass of /proc per generation that forked while the last pass ran
 * (those of a parent found and added only then), three at most.
 */
static int trace_descendants(struct run *r)
{
	const struct rec_opts *o = r->o;
	uint32_t *ids = NULL, n = 0, before = ~0u;
	int err = 0;

	for (int pass = 0; !err && pass < 3 && n != before; pass++) {
		before = n;
		free(ids);
		ids = NULL;
		err = rec_descendants(o->pids, o->npids, &ids, &n);
		if (!err)
			err = rec_probe__trace(r->probe, ids, n);
	}
	free(ids);
	return err ? rec_err(err, "cannot follow the children of -p: %s", strerror(-err)) : 0;
}

static int setup(struct run *r)
{
	const struct rec_opts *o = r->o;
	int err;

	err = check_ids_exist(o->pids, o->npids, "process");
	if (!err)
		err = check_ids_exist(o->tids, o->ntids, "thread");
	if (err)
		return err;
	err = rec_specs__resolve(o, &r->specs, &r->nspecs);
	if (err)
		return err;
	r->unwind = rec_unwind__new(o);
	if (o->unwind != STK_UNWIND_FP && !r->unwind)
		return rec_err(-ENOMEM, "out of memory");
	if (r->unwind && o->python_frames != REC_PYFRAMES_NATIVE) {
		r->python = rec_python__new(o->python_names);
		if (!r->python)
			return rec_err(-ENOMEM, "out of memory");
		rec_unwind__set_python(r->unwind, r->python);
	}
	r->procs = rec_procs__new(r->unwind);
	if (!r->procs)
		return rec_err(-ENOMEM, "out of memory");
	if (o->command) {
		r->child = rec_child__start(o->command);
		if (!r->child)
			return rec_err(-errno, "cannot start '%s': %s", o->command[0],
				       strerror(errno));
	}
	r->probe = rec_probe__open(o, r->specs, r->nspecs, rec_child__pid(r->child));
	if (!r->probe)
		return -errno;
	rec_unwind__attach(r->unwind, rec_probe__maps(r->probe));
	/* before any read of /proc: every mapping made after that read is in a record */
	r->mmaps = rec_mmaps__new();
	if (!r->mmaps)
		rec_err(0, "warning: cannot follow mappings as they are made (%s): reading /proc only",
			strerror(errno));
	rec_procs__follow(r->procs, r->mmaps != NULL);
	/*
	 * -p and -L name processes and threads that exist now: read their maps (and give the
	 * walker their tables) before the first event, since a process may finish and exit before
	 * stkrec runs again after its first-seen notification (pid.sh: all 3,000 events of a -L
	 * thread cut so, once in 3 runs). A failure is not an error here (it exited meanwhile);
	 * the interval records it.
	 */
	for (uint32_t i = 0; i < o->npids; i++)
		rec_procs__note(r->procs, o->pids[i], REC_READ_IF_NEW);
	for (uint32_t i = 0; i < o->ntids; i++)
		rec_procs__note(r->procs, rec_tgid_of(o->tids[i]), REC_READ_IF_NEW);
	err = rec_probe__attach(r->probe, o, r->specs, r->nspecs);
	if (!err && o->children)
		err = trace_descendants(r);
	if (err)
		return err;
	rec_probe__set_notify_handler(r->probe, on_notify, r);
	r->reader = rec_reader__start(r->probe, r->mmaps, r->procs);	/* NULL: loop() polls */
	err = rec_python__watch(r->python, rec_probe__pycode_fd(r->probe));
	if (err)
		return rec_err(err, "cannot read Python's notifications: %s", strerror(-err));
	err = rec_python__exes(r->python, rec_probe__pyexes_fd(r->probe));
	if (err)
		return rec_err(err, "out of memory");
	r->perfmaps = rec_perfmaps__new();
	r->ksyms = rec_kallsyms__new("/proc/kallsyms", rec_kallsyms_signature);
	if (!r->perfmaps || !r->ksyms)
		return rec_err(-ENOMEM, "out of memory");
	/* each file of a rotation gets the objects it needs: their descriptors stay open */
	if (o->rotate || o->flight_s)
		rec_objects__keep_open(rec_procs__objects(r->procs));
	if (o->snoop)
		r->snoop = rec_snoop__new(r->probe);
	else
		r->counts = rec_counts__new(rec_probe__maps(r->probe));
	if (!r->snoop && !r->counts)
		return rec_err(-errno, "out of memory");
	if (r->snoop)
		rec_snoop__set_python(r->snoop, r->python);
	else
		rec_counts__set_python(r->counts, r->python);
	errno = 0;
	r->defer = rec_defer__new(rec_probe__maps(r->probe), r->procs, r->unwind, r->counts,
				  r->snoop, r->reader);
	if (!r->defer && errno)
		return rec_err(-errno, "cannot read the deferred events: %s", strerror(errno));
	return 0;
}

/* What the run wrote, on stderr (--offcpu counts microseconds blocked, not events). */
static void print_written(const struct run *r)
{
	const struct rec_opts *o = r->o;
	const char *what = o->offcpu ? "us off-CPU" : "events";

	if (o->flight_s)
		fprintf(stderr, "stkrec: recorded %u intervals, %llu %s; the flight recorder wrote "
			"%u files\n", r->intervals, (unsigned long long)r->events, what,
			rec_output__files(r->out));
	else if (o->rotate)
		fprintf(stderr, "stkrec: wrote %u intervals, %llu %s, %llu bytes to %u files (the "
			"last: %s)\n", r->intervals, (unsigned long long)r->events, what,
			(unsigned long long)r->bytes, rec_output__files(r->out), r->path);
	else
		fprintf(stderr, "stkrec: wrote %u intervals, %llu %s, %llu bytes to %s\n",
			r->intervals, (unsigned long long)r->events, what,
			(unsigned long long)r->bytes, r->path);
}

/* The end of the recording: the last capture closed; --flight --dump-on-exit dumps first. */
static int finish(struct run *r)
{
	uint64_t now = r->iv_start;	/* the end of the last interval */
	int err = close_capture(r, now);

	if (r->o->flight_s) {
		err = 0;	/* memory: nothing of it stays */
		if (r->o->dump_on_exit)
			err = dump(r, now);
	}
	return err;
}

int rec_run(const struct rec_opts *o)
{
	struct run r = { .o = o };
	char why[PATH_MAX + 128];
	bool created = false;
	int err;

	err = setup(&r);
	if (err)
		goto out;
	r.out = rec_output__new(o);
	if (!r.out) {
		err = rec_err(-errno, "cannot use %s: %s", o->output, strerror(errno));
		goto out;
	}
	r.iv_start = rec_now_ns();
	r.w = open_capture(&r, r.iv_start, why, sizeof(why));
	if (!r.w) {
		err = rec_err(-errno, "%s", why);
		goto out;
	}
	err = rec_output__name(r.out, r.w);
	if (err) {
		rec_err(err, "cannot create %s: %s", rec_output__path(r.out), strerror(-err));
		rec_output__discard(r.out, r.w);
		r.w = NULL;
		goto out;
	}
	switch_to(&r, r.w);
	created = true;
	print_banner(&r);
	name_kernel(&r);
	if (r.child) {
		err = rec_child__go(r.child);
		if (err) {
			rec_err(err, "cannot start '%s': %s", o->command[0], strerror(-err));
			goto out;
		}
	}
	created = false;	/* from here on a partial capture is worth keeping */
	err = loop(&r);
	clear_status(&r);
	if (!err)
		err = finish(&r);
	if (!err) {
		print_written(&r);
		if (rec_output__sudo_user(r.out))
			fprintf(stderr, "stkrec: %s is root's, not %s's, who could not create it there; "
				"'sudo chown %s %s' gives it to them\n", o->output,
				rec_output__sudo_user(r.out), rec_output__sudo_user(r.out), o->output);
		print_unwind_stats(rec_unwind__stats(r.unwind), o);
		print_python_stats(r.python);
		rec_reader__lock(r.reader);	/* its thread still applies the kernel's records */
		print_procs_stats(r.procs);
		rec_reader__unlock(r.reader);
		if (rec_mmaps__lost(r.mmaps))
			fprintf(stderr, "stkrec: warning: the kernel dropped %llu mapping records "
				"(processes alive were read from /proc instead)\n",
				(unsigned long long)rec_mmaps__lost(r.mmaps));
	}
out:
	rec_child__close(r.child);
	if (r.w && created)
		rec_output__discard(r.out, r.w);
	else if (r.w)
		rec_output__close(r.out, r.w, rec_now_ns());
	rec_output__free(r.out);
	rec_snoop__free(r.snoop);
	rec_defer__free(r.defer);
	rec_counts__free(r.counts);
	rec_reader__stop(r.reader);	/* before the ring buffers and procs go */
	rec_python__unwatch(r.python);
	rec_mmaps__free(r.mmaps);
	rec_perfmaps__free(r.perfmaps);
	rec_kallsyms__free(r.ksyms);
	rec_probe__close(r.probe);
	rec_procs__free(r.procs);
	rec_unwind__free(r.unwind);	/* after the objects that point at its tables */
	rec_python__free(r.python);
	rec_specs__free(r.specs, r.nspecs);
	return err;
}
