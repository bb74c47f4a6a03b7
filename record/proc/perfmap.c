// SPDX-License-Identifier: MIT
/*
 * perfmap.c: JIT symbols. A JIT writes /tmp/perf-PID.map ("START SIZE name", hex, one line per
 * generated function; the perf convention) and appends to it as it compiles. stkrec opens the
 * file of every process with rows, keeps the descriptor (the file is read to its end even after
 * the process exited or the file was removed) and copies the lines added since the last interval
 * into a PERFMAP record before the interval that may need them.
 *
 * A process in another mount namespace writes the file in its own /tmp, named with the pid it
 * sees (the last NSpid of /proc/PID/status): it is opened under /proc/PID/root.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "proc.h"

/* A perf map line longer than this is malformed (or a name no report would print). */
#define LINE_MAX_LEN 4096
/*
 * What stkrec reads of the perf maps over a recording (stkrec.8 FILES): the process writes the
 * file, and a sparse 10 GB file, one of tiny lines or one that grows without end must neither
 * keep stkrec reading nor fill the capture. A 256 MiB map of 6-byte lines, read whole, took
 * `stkrec -D 5` to 14.3 s with 12.7 s of CPU. A large JIT's map is some 100,000 lines, tens of
 * MiB. Per process: bytes read, lines parsed (a symbol each at most); per capture file (each
 * --rotate starts reads every map again) the same, and the CPU time spent reading and parsing,
 * which the others bound already but for a host much slower than expected.
 */
#define PROC_BYTES (64ull << 20)
#define PROC_LINES 1000000u
#define CAPTURE_BYTES (256ull << 20)
#define CAPTURE_LINES 4000000u
#define CAPTURE_CPU_NS 1000000000ull
/* Symbols held before they go to the capture: a file of tiny lines stays small in memory. */
#define BATCH_SYMS 65536

struct perfmap {
	uint32_t pid;
	uint64_t start_time;
	int fd;			/* -1: not found (yet) */
	uint64_t looked;	/* the rec_perfmaps__put() call that last looked at it */
	uint64_t seen;		/* the rec_perfmaps__put() call that last had rows of it */
	char *partial;		/* a line not complete yet */
	size_t npartial;
	uint64_t nread;		/* bytes read so far, up to PROC_BYTES */
	uint64_t done;		/* bytes of lines parsed (or skipped as malformed) */
	uint32_t lines;		/* lines parsed, up to PROC_LINES */
	bool full;		/* a bound is reached: the rest of the file is left out */
	bool warned;		/* stkrec said so */
	uint64_t left;		/* bytes of it counted as left out so far */
};

struct rec_perfmaps {
	void *maps;		/* tsearch tree of struct perfmap, by pid */
	struct cap_symbol *syms;
	uint32_t nsyms, cap;
	struct cap_writer *w;	/* during a walk */
	uint64_t puts;		/* rec_perfmaps__put() calls so far */
	struct perfmap **gone;	/* entries to drop, gathered by a walk of the tree */
	uint32_t ngone, gone_cap;
	uint64_t bytes, lines, cpu_ns;	/* read for the capture file: CAPTURE_* */
	const char *run_full;	/* the capture file's bound reached, or NULL */
	bool run_warned;
	uint64_t left_out;	/* bytes left out since rec_perfmaps__left_out() */
	int err;
};

static int cmp_perfmap(const void *a, const void *b)
{
	uint32_t x = ((const struct perfmap *)a)->pid, y = ((const struct perfmap *)b)->pid;

	return x < y ? -1 : x > y;
}

struct rec_perfmaps *rec_perfmaps__new(void)
{
	return calloc(1, sizeof(struct rec_perfmaps));
}

static void free_perfmap(void *p)
{
	struct perfmap *m = p;

	if (m->fd >= 0)
		close(m->fd);
	free(m->partial);
	free(m);
}

static void clear_syms(struct rec_perfmaps *pm)
{
	for (uint32_t i = 0; i < pm->nsyms; i++)
		free(pm->syms[i].name);
	pm->nsyms = 0;
}

void rec_perfmaps__free(struct rec_perfmaps *pm)
{
	if (!pm)
		return;
	tdestroy(pm->maps, free_perfmap);
	clear_syms(pm);
	free(pm->syms);
	free(pm->gone);
	free(pm);
}

/* Hex digits at *p (an optional 0x first) into *v; false if none, or more than 16. */
static bool hex_field(const char **p, uint64_t *v)
{
	const char *s = *p;
	int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (*v = 0; n < 17; n++, s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : (*s | 0x20) >= 'a' && (*s | 0x20) <= 'f' ?
			(*s | 0x20) - 'a' + 10 : -1;

		if (d < 0)
			break;
		*v = *v << 4 | d;
	}
	*p = s;
	return n > 0 && n <= 16;
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/*
 * By hand rather than sscanf(), which took most of the time of a map of tiny lines: a
 * million lines a recording is a bound (PROC_LINES), not a rarity.
 */
int rec_perfmap_line(const char *line, uint64_t *start, uint64_t *size, char *name, size_t nsz)
{
	const char *p = skip_blanks(line), *q;
	size_t n;

	if (!hex_field(&p, start) || (*p != ' ' && *p != '\t'))
		return 0;
	p = skip_blanks(p);
	if (!hex_field(&p, size) || (*p != ' ' && *p != '\t'))
		return 0;
	q = skip_blanks(p);
	n = strcspn(q, "\r\n");
	if (!n || n >= nsz)
		return 0;
	memcpy(name, q, n);
	name[n] = 0;
	return 1;
}

/* The pid the process sees itself as: the last field of "NSpid:" in /proc/PID/status. */
static uint32_t ns_pid(uint32_t pid)
{
	char path[64], line[256];
	uint32_t last = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			last = v;
			p = end;
		}
		break;
	}
	fclose(f);
	return last;
}

/*
 * The process's map file, if it is one: a regular file (a FIFO would block, /dev/zero never
 * end), reached without symlinks out of the process's root, owned by the user the process
 * writes files as (its fsuid when stkrec read it, so also after it exited). /tmp is
 * world-writable: anyone can put a perf-PID.map there for someone else's process, or a link to
 * a file only root may read. perf also takes files of root; stkrec does not, unless the process
 * is root's: a process in its own user and mount namespace can bind-mount a root-only file onto
 * its map's path, and that file must not reach a capture.
 */
static int open_map_file(uint32_t pid, const struct rec_proc_info *info)
{
	char root[64], path[64];
	struct stat st;
	int fd;

	if (info->other_ns) {
		snprintf(root, sizeof(root), "/proc/%u/root", pid);
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", ns_pid(pid));
		fd = cap_open_in_root(root, path);
	} else {
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
		fd = cap_open_regular(path, false);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_uid != info->uid) {
		close(fd);
		return -1;
	}
	return fd;
}

static int push_sym(struct rec_perfmaps *pm, uint64_t start, uint64_t size, const char *name)
{
	if (rec_grow(&pm->syms, pm->nsyms, &pm->cap, sizeof(*pm->syms), 256))
		return -ENOMEM;
	pm->syms[pm->nsyms].name = strdup(name);
	if (!pm->syms[pm->nsyms].name)
		return -ENOMEM;
	pm->syms[pm->nsyms].addr = start;
	pm->syms[pm->nsyms].size = size;
	pm->nsyms++;
	return 0;
}

/* The bound m has reached, or NULL: its own, then the capture file's. */
static const char *bound_reached(struct rec_perfmaps *pm, const struct perfmap *m)
{
	if (m->nread >= PROC_BYTES)
		return "its 64 MiB";
	if (m->lines >= PROC_LINES)
		return "its 1000000 lines";
	if (!pm->run_full && pm->bytes >= CAPTURE_BYTES)
		pm->run_full = "the capture's 256 MiB of perf maps";
	if (!pm->run_full && pm->lines >= CAPTURE_LINES)
		pm->run_full = "the capture's 4000000 lines of perf maps";
	if (!pm->run_full && pm->cpu_ns >= CAPTURE_CPU_NS)
		pm->run_full = "the capture's 1 s of CPU for perf maps";
	return pm->run_full;
}

static int parse_lines(struct rec_perfmaps *pm, struct perfmap *m, char *buf, size_t len)
{
	char name[LINE_MAX_LEN];
	uint64_t start, size;
	char *p = buf, *nl;
	int err = 0;

	while (!err && !m->full && (nl = memchr(p, '\n', buf + len - p))) {
		*nl = 0;
		if (rec_perfmap_line(p, &start, &size, name, sizeof(name)) == 1)
			err = push_sym(pm, start, size, name);
		m->done += nl + 1 - p;
		m->lines++;
		pm->lines++;
		p = nl + 1;
		m->full = bound_reached(pm, m) != NULL;
	}
	/* Keep an incomplete last line for the next read (the JIT is writing it). */
	m->npartial = m->full ? 0 : buf + len - p;
	if (m->npartial > LINE_MAX_LEN) {
		m->done += m->npartial;	/* malformed: too long to be a line */
		m->npartial = 0;
	}
	memmove(m->partial, p, m->npartial);
	return err;
}

static int flush(struct rec_perfmaps *pm, const struct perfmap *m, struct cap_writer *w)
{
	struct cap_record rec = { .type = CAP_CHUNK_PERFMAP };
	int err;

	if (!pm->nsyms)
		return 0;
	rec.perfmap.pid = m->pid;
	rec.perfmap.start_time = m->start_time;
	rec.perfmap.count = pm->nsyms;
	rec.perfmap.syms = pm->syms;
	err = cap_writer__put(w, &rec);
	clear_syms(pm);
	return err == -ENOTSUP ? 0 : err;	/* a format/ without PERFMAP yet */
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * m is full: what the file holds past the bytes parsed is left out. Counted as the file grows
 * (or first seen full), once per byte.
 */
static void count_left_out(struct rec_perfmaps *pm, struct perfmap *m)
{
	struct stat st;
	uint64_t left;

	if (fstat(m->fd, &st) || (uint64_t)st.st_size <= m->done)
		return;
	left = st.st_size - m->done;
	if (left > m->left) {
		pm->left_out += left - m->left;
		m->left = left;
	}
}

/* m has reached a bound: say which, once per map (once per capture file for its bounds). */
static void warn_full(struct rec_perfmaps *pm, struct perfmap *m, const char *bound)
{
	if (m->warned)
		return;
	m->warned = true;
	if (bound != pm->run_full)
		rec_err(0, "warning: /tmp/perf-%u.map: over %s (stkrec(8) FILES), the rest is left "
			"out", m->pid, bound);
	else if (!pm->run_warned)
		rec_err(0, "warning: /tmp/perf-%u.map: over %s (stkrec(8) FILES), the rest of every "
			"perf map is left out", m->pid, bound);
	pm->run_warned |= bound == pm->run_full;
}

static int read_new(struct rec_perfmaps *pm, struct perfmap *m, struct cap_writer *w)
{
	uint64_t t0 = thread_cpu_ns(), now;
	char chunk[65536];
	int err = 0;

	m->full = m->full || bound_reached(pm, m);
	while (!err && !m->full) {
		/* never past a byte bound: those bytes are left out unread */
		size_t want = min_u64(sizeof(chunk), min_u64(PROC_BYTES - m->nread,
							   CAPTURE_BYTES - pm->bytes));
		ssize_t n = read(m->fd, chunk, want);
		char *buf;

		if (n <= 0)
			break;
		buf = realloc(m->partial, m->npartial + n + 1);
		if (!buf)
			return -ENOMEM;
		m->nread += n;
		pm->bytes += n;
		m->partial = buf;
		memcpy(buf + m->npartial, chunk, n);
		err = parse_lines(pm, m, buf, m->npartial + n);
		if (!err && pm->nsyms >= BATCH_SYMS)
			err = flush(pm, m, w);
		now = thread_cpu_ns();
		pm->cpu_ns += now - t0;
		t0 = now;
		m->full = bound_reached(pm, m) != NULL;
	}
	if (m->full) {
		count_left_out(pm, m);
		if (m->left)
			warn_full(pm, m, bound_reached(pm, m));
	}
	return err ? err : flush(pm, m, w);
}

uint64_t rec_perfmaps__left_out(struct rec_perfmaps *pm)
{
	uint64_t n = pm->left_out;

	pm->left_out = 0;
	return n;
}

/* m's file is read from its start again: nothing read, nothing left out yet. */
static void restart(struct perfmap *m)
{
	m->npartial = 0;
	m->nread = m->done = m->left = 0;
	m->lines = 0;
	m->full = m->warned = false;
}

/* The pid names another process now: its file is another, read from its start. */
static void forget_file(struct perfmap *m)
{
	close(m->fd);
	m->fd = -1;
	restart(m);
}

static struct perfmap *track(struct rec_perfmaps *pm, uint32_t pid)
{
	struct perfmap key = { .pid = pid }, *m, **found = tfind(&key, &pm->maps, cmp_perfmap);

	if (found)
		return *found;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->pid = pid;
	m->fd = -1;
	if (!tsearch(m, &pm->maps, cmp_perfmap)) {
		free(m);
		return NULL;
	}
	return m;
}

/* Every process with rows: find its map file (pid reuse starts over). */
static int look_for_files(struct rec_perfmaps *pm, struct rec_procs *ps,
			  const struct cap_interval *iv)
{
	for (uint32_t i = 0; i < iv->nrows; i++) {
		uint32_t pid = iv->rows[i].pid;
		struct rec_proc_info info = { 0 };
		struct perfmap *m;

		if (!pid || !iv->rows[i].ustack)
			continue;
		m = track(pm, pid);
		if (!m)
			return -ENOMEM;
		/* once per process and interval: an event capture has a row per event */
		if (m->looked == pm->puts)
			continue;
		m->looked = m->seen = pm->puts;
		rec_procs__info(ps, pid, &info);
		if (m->fd >= 0 && info.start_time && m->start_time &&
		    info.start_time != m->start_time)
			forget_file(m);
		if (info.start_time)
			m->start_time = info.start_time;
		if (m->fd < 0)
			m->fd = open_map_file(pid, &info);
	}
	return 0;
}

/*
 * Entries that hold nothing: no map file found (every process with rows gets an entry, and is
 * looked for again at its next interval with rows), or the file of a process gone without rows
 * for two intervals, its last rows and the lines they needed written. Without this, a
 * recording with processes coming and going would keep an entry, and maybe a descriptor, for
 * every process it ever saw.
 */
static void gather_gone(const void *node, VISIT which, void *ctx)
{
	struct perfmap *m = *(struct perfmap *const *)node;
	struct rec_perfmaps *pm = ctx;

	if (which != postorder && which != leaf)
		return;		/* each node once */
	if (m->fd >= 0 && (m->seen + 2 > pm->puts || !(kill(m->pid, 0) && errno == ESRCH)))
		return;
	if (!rec_grow(&pm->gone, pm->ngone, &pm->gone_cap, sizeof(*pm->gone), 64))
		pm->gone[pm->ngone++] = m;	/* or kept until the next call */
}

static void drop_gone(struct rec_perfmaps *pm)
{
	pm->ngone = 0;
	twalk_r(pm->maps, gather_gone, pm);
	for (uint32_t i = 0; i < pm->ngone; i++) {
		tdelete(pm->gone[i], &pm->maps, cmp_perfmap);
		free_perfmap(pm->gone[i]);
	}
	pm->ngone = 0;
}

static void reread(const void *node, VISIT which, void *ctx)
{
	struct perfmap *m = *(struct perfmap *const *)node;

	if ((which != postorder && which != leaf) || m->fd < 0)
		return;
	/* a file that cannot seek back keeps its place: its earlier lines stay out of the file */
	if (lseek(m->fd, 0, SEEK_SET) == 0)
		restart(m);
}

void rec_perfmaps__new_file(struct rec_perfmaps *pm)
{
	twalk_r(pm->maps, reread, NULL);
	/* the bounds are per capture file: each holds what it needs */
	pm->bytes = pm->lines = pm->cpu_ns = 0;
	pm->run_full = NULL;
	pm->run_warned = false;
}

int rec_perfmaps__put(struct rec_perfmaps *pm, struct rec_procs *ps, const struct cap_interval *iv,
		      struct cap_writer *w)
{
	struct perfmap **all = NULL;
	uint32_t n = 0, cap = 0;
	int err;

	pm->puts++;
	err = look_for_files(pm, ps, iv);

	/*
	 * Only the files of this interval's processes: lines a JIT adds while it has no rows are
	 * read before the first interval whose rows need them.
	 */
	for (uint32_t i = 0; !err && i < iv->nrows; i++) {
		struct perfmap key = { .pid = iv->rows[i].pid }, **found;

		found = tfind(&key, &pm->maps, cmp_perfmap);
		if (!found || (*found)->fd < 0 || (*found)->looked == ~0ull)
			continue;
		(*found)->looked = ~0ull;	/* listed: once per call */
		err = rec_grow(&all, n, &cap, sizeof(*all), 16);
		if (!err)
			all[n++] = *found;
	}
	for (uint32_t i = 0; !err && i < n; i++)
		err = read_new(pm, all[i], w);
	clear_syms(pm);
	free(all);
	drop_gone(pm);
	return err;
}
