// SPDX-License-Identifier: MIT
/*
 * mmaps.c: every executable mapping of every process, from the kernel as it happens, the way
 * perf learns them: a dummy software event per CPU with mmap2, comm (exec) and task (fork,
 * exit) records. /proc/PID/maps, read when BPF first sees a process, is often read before ld.so
 * has mapped libc, and never sees a process that is gone by then or a library it dlopen()s
 * later; these records see all of them, whether or not the process is still alive when stkrec
 * gets to them.
 *
 * The per-CPU rings are read through libbpf's raw perf buffer. Records of one process may sit
 * in two CPUs' rings (it migrated between its exec and its mmaps), so each batch is sorted by
 * time before it is applied, and procmaps.c orders what it learns by each record's time.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/sysmacros.h>

#include "proc.h"

/* Pages of each CPU's ring: 512 KiB holds about 3000 mappings (perf's default size). */
#define RING_PAGES 128
/* Wake the reader once a ring holds this much (every record would cost a wakeup each). */
#define WAKEUP_BYTES 4096

/* sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: the tail of every record. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct comm_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

struct task_record {	/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
	struct perf_event_header header;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct lost_record {
	struct perf_event_header header;
	uint64_t id, lost;
};

/* A record copied out of its ring, to be applied in time order. */
struct held {
	uint64_t time;
	uint32_t seq;		/* arrival order: a stable sort for equal times */
	struct perf_event_header *rec;
};

struct rec_mmaps {
	struct perf_buffer *pb;
	int array_fd;		/* the BPF_MAP_TYPE_PERF_EVENT_ARRAY libbpf's perf buffer wants */
	struct held *batch;
	uint32_t n, cap;
	int err;		/* of copying a record out (-ENOMEM) */
	uint64_t lost;
};

static int held_cmp(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool has_sample_id(const struct perf_event_header *h)
{
	return h->size >= sizeof(*h) + sizeof(struct sample_id);
}

static uint64_t record_time(const struct perf_event_header *h)
{
	const struct sample_id *id = (const void *)((const char *)h + h->size - sizeof(*id));

	return id->time;
}

static int hold(struct rec_mmaps *mm, const struct perf_event_header *h)
{
	struct perf_event_header *copy;

	if (rec_grow(&mm->batch, mm->n, &mm->cap, sizeof(*mm->batch), 256))
		return -ENOMEM;
	copy = malloc(h->size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, h, h->size);
	mm->batch[mm->n] = (struct held){ record_time(h), mm->n, copy };
	mm->n++;
	return 0;
}

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct rec_mmaps *mm = ctx;

	(void)cpu;
	if (h->type == PERF_RECORD_LOST) {
		if (h->size >= sizeof(struct lost_record))
			mm->lost += ((const struct lost_record *)h)->lost;
		return LIBBPF_PERF_EVENT_CONT;
	}
	if ((h->type == PERF_RECORD_MMAP2 || h->type == PERF_RECORD_COMM ||
	     h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) && has_sample_id(h) &&
	    !mm->err)
		mm->err = hold(mm, h);
	return LIBBPF_PERF_EVENT_CONT;
}

struct rec_mmaps *rec_mmaps__new(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,		/* executable mappings only (no mmap_data) */
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,	/* the clock of rec_now_ns() and bpf_ktime_get_ns() */
		.watermark = 1,
		.wakeup_watermark = WAKEUP_BYTES,
	};
	int ncpus = libbpf_num_possible_cpus(), err;
	struct rec_mmaps *mm = calloc(1, sizeof(*mm));

	if (!mm)
		return NULL;
	mm->array_fd = ncpus > 0 ? bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "stk_mmaps",
						  sizeof(int), sizeof(int), ncpus, NULL) : -1;
	if (mm->array_fd >= 0)
		mm->pb = perf_buffer__new_raw(mm->array_fd, RING_PAGES, &attr, on_record, mm, NULL);
	if (mm->pb)
		return mm;
	err = ncpus > 0 ? errno : -ncpus;
	rec_mmaps__free(mm);
	errno = err;
	return NULL;
}

void rec_mmaps__free(struct rec_mmaps *mm)
{
	if (!mm)
		return;
	perf_buffer__free(mm->pb);
	if (mm->array_fd >= 0)
		close(mm->array_fd);
	for (uint32_t i = 0; i < mm->n; i++)
		free(mm->batch[i].rec);
	free(mm->batch);
	free(mm);
}

int rec_mmaps__fd(const struct rec_mmaps *mm)
{
	return mm ? perf_buffer__epoll_fd(mm->pb) : -1;
}

uint64_t rec_mmaps__lost(const struct rec_mmaps *mm)
{
	return mm ? mm->lost : 0;
}

/* The filename of an mmap2 record, bounded by the record (the kernel pads it with NULs). */
static int mapping_of(const struct mmap2_record *r, struct cap_mapping *m, char *path,
		      size_t psz)
{
	size_t room = r->header.size - sizeof(struct sample_id) - sizeof(*r);
	size_t len = strnlen(r->filename, room < psz ? room : psz);

	if (len == room || len == psz)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->start = r->addr;
	m->end = r->addr + r->len;
	m->pgoff = r->pgoff;
	/* PERF_RECORD_MISC_MMAP_BUILD_ID is never set: attr.build_id is not asked for */
	m->dev = makedev(r->maj, r->min);
	m->inode = r->ino;
	memcpy(path, r->filename, len);
	path[len] = 0;
	rec_mapping_path(m, path);
	m->path = path;
	return 0;
}

static void apply(struct rec_procs *ps, const struct perf_event_header *h, uint64_t time)
{
	char path[4096], comm[CAP_COMM_LEN];
	struct cap_mapping m;

	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const struct mmap2_record *r = (const void *)h;

		if (h->size >= sizeof(*r) + sizeof(struct sample_id) &&
		    !mapping_of(r, &m, path, sizeof(path)))
			rec_procs__mapped(ps, r->pid, &m, time);
		break;
	}
	case PERF_RECORD_COMM: {
		const struct comm_record *r = (const void *)h;
		size_t room = h->size - sizeof(*r) - sizeof(struct sample_id);

		if (h->size < sizeof(*r) + sizeof(struct sample_id) ||
		    !(h->misc & PERF_RECORD_MISC_COMM_EXEC) || r->pid != r->tid)
			break;
		snprintf(comm, sizeof(comm), "%.*s", (int)strnlen(r->comm, room), r->comm);
		rec_procs__exec(ps, r->pid, comm, time);
		break;
	}
	case PERF_RECORD_FORK: {
		const struct task_record *r = (const void *)h;

		if (h->size >= sizeof(*r) && r->pid != r->ppid && r->pid == r->tid)
			rec_procs__forked(ps, r->pid, r->ppid, time);
		break;
	}
	case PERF_RECORD_EXIT: {
		const struct task_record *r = (const void *)h;

		if (h->size >= sizeof(*r) && r->pid == r->tid)
			rec_procs__exited(ps, r->pid);
		break;
	}
	}
}

/*
 * The records made after `now` stay for the next call, renumbered in their order. The rings are
 * read one CPU after another, so a ring read later may hold records newer than some still to
 * come in a ring read earlier: an exec's mmap records without the COMM record before them
 * (another CPU's), applied to the image the exec ended. Up to `now` the batch is whole.
 */
static void keep_after(struct rec_mmaps *mm, uint32_t from)
{
	uint32_t n = 0;

	for (uint32_t i = from; i < mm->n; i++, n++) {
		mm->batch[n] = mm->batch[i];
		mm->batch[n].seq = n;
	}
	mm->n = n;
}

int rec_mmaps__consume(struct rec_mmaps *mm, struct rec_procs *ps)
{
	uint64_t now = rec_now_ns();	/* every record made before is in a ring now */
	uint32_t i;
	int err;

	if (!mm)
		return 0;
	err = perf_buffer__consume(mm->pb);
	if (err < 0 && err != -EINTR)
		return err;
	/* a record lost: a process's mappings may be incomplete, /proc says what they are */
	if (mm->lost)
		rec_procs__follow(ps, false);
	qsort(mm->batch, mm->n, sizeof(*mm->batch), held_cmp);
	for (i = 0; i < mm->n && mm->batch[i].time <= now; i++) {
		apply(ps, mm->batch[i].rec, mm->batch[i].time);
		free(mm->batch[i].rec);
	}
	keep_after(mm, i);
	rec_procs__publish(ps, now);
	err = mm->err;
	mm->err = 0;
	return err;
}
