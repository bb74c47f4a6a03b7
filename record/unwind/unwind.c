// SPDX-License-Identifier: MIT
/*
 * unwind.c: what the BPF user-stack walker reads (docs/bpf.md 7). One unwind table per object,
 * built from its CFI once per build-id (cfi.c) when a process mapping it is first read, copied
 * through mmap into a chunk, one of the row arrays of unwind_chunks; and per process the list
 * of its executable mappings with the table (chunk, first row, row count) and the bias that
 * turns a pc into a table offset, written to unwind_procs. libc's table serves every process
 * that maps it.
 *
 * Chunks are created as tables need room, not at load: a system-wide start fills half of the
 * first one, and a 64 MiB array zeroed at load cost 20 ms of kernel time (and the memory).
 * --unwind-memory bounds the chunks together: an object whose table does not fit gets none
 * (its mappings say STK_UMAP_F_LIMIT, and the walker counts the stacks that stop there).
 */
#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "stk/elfobj.h"
#include "unwind.h"

struct rec_utable {
	uint32_t id_len;
	uint8_t id[CAP_BUILD_ID_MAX];
	struct rec_cfi cfi;	/* rows freed once uploaded */
	uint64_t base;		/* ELF virtual address the rows' pc counts from */
	uint32_t chunk;		/* where the rows went, once uploaded: a slot of unwind_chunks */
	uint32_t first;		/* and the first row in that chunk */
	uint32_t nrows;
	bool uploaded;
	bool limit;		/* did not fit in --unwind-memory */
	uint32_t nsegs;
	struct elfobj_segment *segs;
	struct rec_pyobj py;	/* a CPython runtime in the object (python/python.c) */
};

/* What stkrec last wrote for a process: the user-space walk of deferred events reads it. */
struct proc_copy {
	uint32_t pid;
	/*
	 * When its mappings were read, not when they were written: building tables takes
	 * milliseconds, in which a starting process maps its libraries (ld.so) and runs.
	 */
	uint64_t read_ns;
	uint64_t image_ns;		/* struct rec_uread's: the image value is of */
	struct stk_uproc *value;	/* n mappings only: a short allocation */
	/*
	 * The image before it, until the next one replaces it: an event of the old image that BPF
	 * deferred may be walked after stkrec has written the new image's mappings.
	 */
	struct stk_uproc *prev;
	/*
	 * The image before the first one written, never written to BPF (rec_unwind__old_image):
	 * walked only for an event stamped before the current image whose leaf is in none of the
	 * current (or prev) mappings, so that every event the written images place is walked as
	 * before it was kept.
	 */
	struct stk_uproc *before;
};

/*
 * The first chunk's rows: 1 MiB, about twice a system-wide start's tables, so most runs create
 * one chunk. Each next one is twice the last, or one table's size when that is more (cc1's is
 * 3.7 MiB). Few chunks matter: putting one into unwind_chunks costs an RCU grace period (after
 * an update of a map of maps from user space the kernel waits for running programs), some
 * milliseconds of the reader thread's time, though no CPU.
 */
#define CHUNK_ROWS ((1u << 20) / sizeof(struct stk_urow))
#define PAGE_ROWS (4096u / sizeof(struct stk_urow))

/* One array of unwind_chunks, mmapped: whole tables, packed from its first row. */
struct chunk {
	struct stk_urow *rows;
	uint32_t cap;		/* rows */
	uint32_t used;
};

struct rec_unwind {
	const struct rec_maps *maps;	/* NULL until rec_unwind__attach() */
	uint32_t mode;			/* enum stk_unwind */
	void *procs;			/* tsearch tree of struct proc_copy, by pid */
	uint32_t max_rows;		/* --unwind-memory in rows: every chunk's together */
	struct chunk *chunks;		/* nslots of them, nchunks created (rows: stats.chunk_rows) */
	uint32_t nchunks;
	uint32_t nslots;		/* unwind_chunks' size */
	void *tables;			/* tsearch tree of struct rec_utable, by build-id */
	struct rec_unwind_stats stats;
	bool warned;
	struct rec_python *py;		/* told of each process's interpreter */
};

static int cmp_table(const void *a, const void *b)
{
	const struct rec_utable *x = a, *y = b;

	if (x->id_len != y->id_len)
		return x->id_len < y->id_len ? -1 : 1;
	return memcmp(x->id, y->id, x->id_len);
}

static uint32_t max_rows(const struct rec_opts *o)
{
	return (uint32_t)((uint64_t)o->unwind_mb * (1u << 20) / sizeof(struct stk_urow));
}

/*
 * Every chunk but the last has CHUNK_ROWS or more (the last may be what was left), so there are
 * at most as many as whole CHUNK_ROWS in --unwind-memory, rounded up.
 */
uint32_t rec_unwind_slots(const struct rec_opts *o)
{
	if (o->unwind == STK_UNWIND_FP)
		return 1;
	return (max_rows(o) + CHUNK_ROWS - 1) / CHUNK_ROWS;
}

const char *rec_unwind_mode_name(uint32_t mode)
{
	switch (mode) {
	case STK_UNWIND_FP:
		return "fp";
	case STK_UNWIND_CFI:
		return "cfi";
	}
	return "auto";
}

struct rec_unwind *rec_unwind__new(const struct rec_opts *o)
{
	struct rec_unwind *u;

	if (o->unwind == STK_UNWIND_FP)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->max_rows = max_rows(o);
	u->nslots = rec_unwind_slots(o);
	/* all slots at once: the deferred walk reads chunks while the reader adds them */
	u->chunks = calloc(u->nslots, sizeof(*u->chunks));
	if (!u->chunks) {
		free(u);
		return NULL;
	}
	u->mode = o->unwind;
	return u;
}

static int cmp_proc(const void *a, const void *b)
{
	uint32_t x = ((const struct proc_copy *)a)->pid, y = ((const struct proc_copy *)b)->pid;

	return x < y ? -1 : x > y;
}

static void free_proc(void *p)
{
	struct proc_copy *c = p;

	free(c->value);
	free(c->prev);
	free(c->before);
	free(c);
}

/* pid's copy, with an image written or not. */
static struct proc_copy *find_copy(const struct rec_unwind *u, uint32_t pid)
{
	struct proc_copy key = { .pid = pid }, **found = tfind(&key, (void **)&u->procs, cmp_proc);

	return found ? *found : NULL;
}

/* pid's copy once an image of it was written (the walker knows the process). */
static const struct proc_copy *find_proc(const struct rec_unwind *u, uint32_t pid)
{
	const struct proc_copy *c = find_copy(u, pid);

	return c && c->value ? c : NULL;
}

/* pid's copy, a new one in the tree if it has none; NULL without memory. */
static struct proc_copy *get_copy(struct rec_unwind *u, uint32_t pid)
{
	struct proc_copy *c = find_copy(u, pid);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = pid;	/* set before tsearch() compares it with the tree's entries */
	if (!tsearch(c, &u->procs, cmp_proc)) {
		free(c);
		return NULL;
	}
	return c;
}

/* v with its n mappings only: a short allocation; NULL without memory. */
static struct stk_uproc *short_copy(const struct stk_uproc *v)
{
	size_t sz = offsetof(struct stk_uproc, maps) + v->n * sizeof(v->maps[0]);
	struct stk_uproc *copy = malloc(sz);

	if (copy)
		memcpy(copy, v, sz);
	return copy;
}

/*
 * Keep v (read at read_ns, of image image_ns) as pid's copy, replacing an older one of the same
 * image; the last copy of the image before stays, as prev.
 */
static int keep_proc(struct rec_unwind *u, uint32_t pid, const struct stk_uproc *v,
		     uint64_t read_ns, uint64_t image_ns)
{
	struct stk_uproc *copy = short_copy(v);
	struct proc_copy *c = get_copy(u, pid);

	if (!copy || !c) {
		free(copy);
		return -ENOMEM;
	}
	if (c->value && c->image_ns != image_ns) {
		free(c->prev);
		c->prev = c->value;
	} else {
		free(c->value);
	}
	c->value = copy;
	c->read_ns = read_ns;
	c->image_ns = image_ns;
	return 0;
}

void rec_unwind__forget(struct rec_unwind *u, uint32_t pid)
{
	struct proc_copy key = { .pid = pid }, **found;
	struct proc_copy *c;

	if (!u || !(found = tfind(&key, &u->procs, cmp_proc)))
		return;
	c = *found;
	tdelete(c, &u->procs, cmp_proc);
	free_proc(c);
	rec_python__proc(u->py, pid, NULL, NULL);
	/* BPF's on_exit() deleted it too, unless stkrec wrote it again after the exit */
	if (u->maps)
		bpf_map_delete_elem(u->maps->unwind_procs_fd, &pid);
}

bool rec_unwind__read_since(const struct rec_unwind *u, uint32_t pid, uint64_t ns)
{
	const struct proc_copy *c = u ? find_proc(u, pid) : NULL;

	return c && c->read_ns >= ns;
}

static void free_table(void *p)
{
	struct rec_utable *t = p;

	rec_cfi__free(&t->cfi);
	free(t->segs);
	free(t);
}

void rec_unwind__free(struct rec_unwind *u)
{
	if (!u)
		return;
	tdestroy(u->tables, free_table);
	tdestroy(u->procs, free_proc);
	for (uint32_t i = 0; i < u->nchunks; i++)
		munmap(u->chunks[i].rows, (size_t)u->chunks[i].cap * sizeof(struct stk_urow));
	free(u->chunks);
	free(u);
}

/* t gets no rows (err: -E2BIG, or why no chunk could be made): its stacks stop, counted. */
static void over_limit(struct rec_unwind *u, struct rec_utable *t, int err)
{
	t->limit = true;
	u->stats.over_limit++;
	rec_cfi__free(&t->cfi);
	if (u->warned)
		return;
	u->warned = true;
	if (err == -E2BIG)
		fprintf(stderr, "stkrec: warning: --unwind-memory is full: stacks through objects "
				"without a table are cut (counted)\n");
	else
		fprintf(stderr, "stkrec: warning: cannot create an unwind table array: %s: stacks "
				"through objects without a table are cut (counted)\n", strerror(-err));
}

static struct rec_utable *build(struct rec_unwind *u, Elf *e, const uint8_t *id, uint32_t id_len)
{
	struct rec_utable *t = calloc(1, sizeof(*t));
	uint64_t start = rec_now_ns();
	int err;

	if (!t)
		return NULL;
	t->id_len = id_len;
	memcpy(t->id, id, id_len);
	err = elfobj_segments(e, &t->segs, &t->nsegs);
	if (err) {
		free_table(t);
		return NULL;
	}
	/* No CFI, or unusable CFI: a table of no rows, so the walker uses frame pointers there. */
	err = rec_cfi__build(e, u->max_rows, &t->cfi);
	if (err == -E2BIG)
		over_limit(u, t, err);	/* more rows than all of --unwind-memory (or over 4 GiB) */
	t->nrows = err ? 0 : t->cfi.nrows;
	t->base = t->cfi.base;
	rec_pyobj_find(e, &t->py);
	u->stats.objects++;
	u->stats.build_ns += rec_now_ns() - start;
	return t;
}

struct rec_utable *rec_unwind__table(struct rec_unwind *u, Elf *e, const uint8_t *id,
				     uint32_t id_len)
{
	struct rec_utable key = { .id_len = id_len }, *t, **found;

	if (!u || !e || !id_len || id_len > CAP_BUILD_ID_MAX)
		return NULL;
	memcpy(key.id, id, id_len);
	found = tfind(&key, &u->tables, cmp_table);
	if (found)
		return *found;
	t = build(u, e, id, id_len);
	if (t && !tsearch(t, &u->tables, cmp_table)) {
		free_table(t);
		t = NULL;
	}
	return t;
}

/*
 * A new chunk of cap rows in slot u->nchunks: the array is created, mapped and put in
 * unwind_chunks. The mapping keeps the array alive (and the slot refers to it): no fd is kept.
 */
static int add_chunk(struct rec_unwind *u, uint32_t cap)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	size_t len = (size_t)cap * sizeof(struct stk_urow);
	uint32_t slot = u->nchunks;
	void *rows = MAP_FAILED;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(uint32_t),
			    sizeof(struct stk_urow), cap, &opts);
	if (fd < 0)
		return -errno;
	rows = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rows == MAP_FAILED)
		err = -errno;
	if (!err && bpf_map_update_elem(u->maps->unwind_chunks_fd, &slot, &fd, BPF_ANY))
		err = -errno;
	close(fd);
	if (err) {
		if (rows != MAP_FAILED)
			munmap(rows, len);
		return err;
	}
	u->chunks[slot] = (struct chunk){ .rows = rows, .cap = cap };
	u->nchunks++;
	u->stats.chunks = u->nchunks;
	u->stats.chunk_rows += cap;
	return 0;
}

/*
 * The slot of a chunk with room for nrows: the first that has it, else a new one (CHUNK_ROWS
 * doubled per chunk before it, or nrows in whole pages when that is more), cut to what
 * --unwind-memory has left. -E2BIG: no room within --unwind-memory.
 */
static int chunk_for(struct rec_unwind *u, uint32_t nrows)
{
	uint64_t left = u->max_rows - u->stats.chunk_rows;
	uint64_t cap = (uint64_t)CHUNK_ROWS << (u->nchunks < 16 ? u->nchunks : 16);
	int err;

	for (uint32_t i = 0; i < u->nchunks; i++)
		if (u->chunks[i].cap - u->chunks[i].used >= nrows)
			return (int)i;
	if (cap < nrows)
		cap = (nrows + PAGE_ROWS - 1) / PAGE_ROWS * PAGE_ROWS;
	if (cap > left)
		cap = left;
	if (nrows > cap || u->nchunks == u->nslots)
		return -E2BIG;
	err = add_chunk(u, (uint32_t)cap);
	return err ? err : (int)u->nchunks - 1;
}

/* Copy t's rows into a chunk, once; false when they do not fit. */
static bool upload(struct rec_unwind *u, struct rec_utable *t)
{
	struct chunk *c;
	int slot;

	if (t->uploaded || t->limit || !t->nrows)
		return !t->limit;
	slot = chunk_for(u, t->nrows);
	if (slot < 0) {
		over_limit(u, t, slot);
		return false;
	}
	c = &u->chunks[slot];
	memcpy(c->rows + c->used, t->cfi.rows, t->nrows * sizeof(struct stk_urow));
	t->chunk = (uint32_t)slot;
	t->first = c->used;
	c->used += t->nrows;
	t->uploaded = true;
	u->stats.rows += t->nrows;
	rec_cfi__free(&t->cfi);	/* the BPF copy is the one that counts now */
	return true;
}

/*
 * pc - bias = the pc's offset in t's rows. A pc in the mapping is at file offset
 * pc - start + pgoff, which the segment holding it puts at ELF virtual address
 * offset - p_offset + p_vaddr; rows count from t->base.
 */
static bool mapping_bias(const struct rec_utable *t, const struct cap_mapping *m, __u64 *bias)
{
	const struct elfobj_segment *best = NULL;

	for (uint32_t i = 0; i < t->nsegs; i++) {
		const struct elfobj_segment *s = &t->segs[i];
		uint64_t lo = s->offset & ~4095ull;

		if (m->pgoff >= lo && m->pgoff < s->offset + s->filesz && (!best || (s->flags & PF_X)))
			best = s;
	}
	if (!best)
		return false;
	*bias = m->start - m->pgoff + best->offset - best->vaddr + t->base;
	return true;
}

static void fill_umap(struct rec_unwind *u, const struct cap_mapping *m, struct rec_utable *t,
		      struct stk_umap *um)
{
	memset(um, 0, sizeof(*um));
	um->start = m->start;
	um->end = m->end;
	if (!t)
		return;		/* anonymous (JIT) or unreadable: frame pointers */
	if (!upload(u, t)) {
		um->flags = STK_UMAP_F_LIMIT;
		return;
	}
	if (t->nrows && mapping_bias(t, m, &um->bias)) {
		um->chunk = t->chunk;
		um->first = t->first;
		um->nrows = t->nrows;
	}
}

/* The mapping of p that pc is in, or NULL. */
static const struct stk_umap *find_umap(const struct stk_uproc *p, uint64_t pc)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (pc >= p->maps[i].start && pc < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static int publish(struct rec_unwind *u, uint32_t pid, const struct stk_uproc *v)
{
	/* A whole value: the map is not preallocated, so the kernel swaps in a new element. */
	if (bpf_map_update_elem(u->maps->unwind_procs_fd, &pid, v, BPF_ANY))
		return -errno;
	u->stats.published++;
	return 0;
}

/* Did pid exec after ns? (bpf/unwind.bpf.h exec_ns) */
static bool exec_since(const struct rec_unwind *u, uint32_t pid, uint64_t ns)
{
	struct stk_image image;

	return !bpf_map_lookup_elem(u->maps->exec_ns_fd, &pid, &image) && image.ns > ns;
}

/*
 * The interpreter of a process whose mapping m has table t, for the walker (v->py) when it is
 * one the table of layouts knows; *py: the first interpreter object found, if any.
 */
static void find_python(const struct cap_mapping *m, const struct rec_utable *t,
			struct stk_uproc *v, const struct rec_pyobj **py)
{
	__u64 bias;

	if (!t || t->py.status == REC_PY_NONE || *py || !mapping_bias(t, m, &bias))
		return;
	*py = &t->py;
	/* bias - base is the object's load bias: its ELF virtual address 0 is there */
	rec_pyobj_proc(&t->py, bias - t->base, &v->py);
}

/*
 * The walker's value of rd's mappings, uploading their tables; NULL without memory. *py: the
 * process's interpreter object, NULL for none.
 */
static struct stk_uproc *uproc_of(struct rec_unwind *u, const struct rec_uread *rd,
				  const struct rec_pyobj **py)
{
	struct stk_uproc *v = calloc(1, sizeof(*v));

	*py = NULL;
	/* beyond STK_MAX_UMAPS mappings a pc is in none: the walk stops there, counted */
	for (uint32_t i = 0; v && i < rd->n && v->n < STK_MAX_UMAPS; i++) {
		find_python(&rd->maps[i], rd->tables[i], v, py);
		fill_umap(u, &rd->maps[i], rd->tables[i], &v->maps[v->n++]);
	}
	return v;
}

int rec_unwind__old_image(struct rec_unwind *u, uint32_t pid, const struct rec_uread *rd)
{
	const struct rec_pyobj *py;
	struct stk_uproc *v, *copy;
	struct proc_copy *c;

	if (!u || !u->maps || find_proc(u, pid))
		return 0;
	v = uproc_of(u, rd, &py);
	copy = v ? short_copy(v) : NULL;
	c = copy ? get_copy(u, pid) : NULL;
	free(v);
	if (!c) {
		free(copy);
		return -ENOMEM;
	}
	free(c->before);
	c->before = copy;
	return 0;
}

int rec_unwind__proc(struct rec_unwind *u, uint32_t pid, const struct rec_uread *rd)
{
	const struct rec_pyobj *py;
	struct stk_uproc *v;
	int err;

	if (!u || !u->maps)
		return 0;
	v = uproc_of(u, rd, &py);
	if (!v)
		return -ENOMEM;
	rec_python__proc(u->py, pid, py, &v->py);
	/* the address the walker asked about is in no mapping: not one we missed (abi.h) */
	v->settled = rd->miss.addr && !find_umap(v, rd->miss.addr);
	err = publish(u, pid, v);
	/*
	 * Unless the process exec'd since: then the read may be of the new image, where the old
	 * one's address means nothing. A stamp not seen yet is followed by on_exec()'s delete of
	 * what was just written.
	 */
	if (!err && v->settled && exec_since(u, pid, rd->miss.ts_ns)) {
		v->settled = 0;
		err = publish(u, pid, v);
	}
	if (!err)
		err = keep_proc(u, pid, v, rd->read_ns, rd->image_ns);
	free(v);
	return err;
}

void rec_unwind__set_python(struct rec_unwind *u, struct rec_python *py)
{
	if (u)
		u->py = py;
}

void rec_unwind__attach(struct rec_unwind *u, const struct rec_maps *maps)
{
	if (!u)
		return;
	u->maps = maps;
	/* fewer slots when the map was sized smaller than asked */
	if (u->nslots > maps->unwind_chunks_cap)
		u->nslots = maps->unwind_chunks_cap;
}

const struct rec_unwind_stats *rec_unwind__stats(const struct rec_unwind *u)
{
	return u ? &u->stats : NULL;
}

/* ---- the same walk in user space, for deferred events ------------------------------------ */

/*
 * The rules are bpf/unwind.bpf.h's, step for step: the two must agree, so that a deferred
 * event's stack is the one BPF would have taken had the tables been there. Reads come from the
 * stack bytes BPF copied: an address outside them stops the walk as a fault would.
 */
struct uwalk_user {
	const struct rec_unwind *u;
	const struct stk_uproc *proc;
	const struct stk_umap *m;
	const struct stk_deferred *d;
	uint64_t *last;		/* the frame last stored (a signal frame rewrites it) */
	const uint64_t *first;	/* the leaf's */
	uint64_t pc, sp, bp;
	uint64_t bx, bx_at;	/* rbx: bx, or the word at bx_at when not 0 (bpf/unwind.bpf.h) */
	bool bx_lost;
	bool exact;
	bool syscall;		/* the leaf's pc follows a syscall instruction (bpf/unwind.bpf.h) */
	bool guessed;		/* frame 1 is leaf_guess()'s */
	uint32_t stop;
};

static bool end(struct uwalk_user *w, uint32_t stop)
{
	w->stop = stop;
	return false;
}

/* n bytes of stack at addr from the copy; false (the walk ended) where BPF did not copy them */
static bool peek(struct uwalk_user *w, uint64_t addr, void *out, size_t n)
{
	const struct stk_deferred *d = w->d;
	uint64_t off = addr - d->sp, skew = d->sp & (STK_DEFER_PIECE - 1);

	/* past a copy cut at its size: the stack is deeper than BPF copies (STK_DEFER_STACK) */
	if (addr >= d->sp && d->limit && off + n > d->limit && n)
		return end(w, STK_STOP_COPY_END);
	if (addr < d->sp || off > d->len || d->len - off < n || !n)
		return end(w, STK_STOP_READ_FAULT);
	/* a piece BPF could not read (struct stk_deferred holes) */
	for (uint64_t p = (off + skew) / STK_DEFER_PIECE;
	     p <= (off + n - 1 + skew) / STK_DEFER_PIECE && p < 64; p++)
		if (d->holes & (1ull << p))
			return end(w, STK_STOP_READ_FAULT);
	memcpy(out, d->stack + off, n);
	return true;
}

/* The walk is at the event's own pc: the leaf, as the registers gave it. */
static bool at_leaf(const struct uwalk_user *w)
{
	return w->last == w->first && w->exact;
}

static bool step_to(struct uwalk_user *w, uint64_t pc, uint64_t sp, uint64_t bp)
{
	if (!pc)
		return end(w, STK_STOP_COMPLETE);
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->exact = false;
	w->syscall = false;
	return true;
}

/* A sampled leaf without CFI and frame pointer: its return address at rsp, as a guess. */
static bool leaf_guess(struct uwalk_user *w)
{
	uint64_t ra;

	if (!at_leaf(w))
		return end(w, STK_STOP_BAD_FRAME);
	if (!peek(w, w->sp, &ra, sizeof(ra)))
		return false;
	w->guessed = true;
	return step_to(w, ra, w->sp + 8, w->bp);
}

static bool fp_step(struct uwalk_user *w, uint32_t stop_if_no_fp)
{
	uint64_t rec[2];

	if (w->u->mode != STK_UNWIND_AUTO)
		return end(w, stop_if_no_fp);
	/* 0 ends the stack but in a leaf, where it may be any register's 0 (bpf/unwind.bpf.h) */
	if (!w->bp && !at_leaf(w))
		return end(w, STK_STOP_COMPLETE);
	if (!w->bp || w->bp < w->sp || (w->bp & 7))
		return leaf_guess(w);
	/* nor where nothing can be read, in a leaf: rbp may hold any number there */
	if (!peek(w, w->bp, rec, sizeof(rec)))
		return at_leaf(w) && leaf_guess(w);
	w->bx_lost = true;	/* code without CFI may have saved rbx anywhere */
	return step_to(w, rec[1], w->bp + 16, rec[0]);
}

/* The caller's rbx by the row's rule; slot is rbp's, CFA + 8 * rbp_off. */
static void restore_rbx(struct uwalk_user *w, uint32_t rule, uint64_t slot)
{
	if (rule == STK_RBX_BELOW_RBP)
		slot -= 8;
	/* a slot below the frame's rsp: the epilogue popped it, rbx holds the caller's already */
	if (rule == STK_RBX_SAME || (rule != STK_RBX_LOST && slot < w->sp))
		return;
	w->bx_lost = rule == STK_RBX_LOST;
	w->bx_at = slot;
}

static bool cfa_step(struct uwalk_user *w, const struct stk_urow *row, uint64_t cfa)
{
	uint32_t rule = STK_UROW_RBP(row->kind);
	int64_t off = (int64_t)row->rbp_off * 8;
	uint64_t ra, bp = w->bp;

	if (cfa <= w->sp)
		return end(w, STK_STOP_BAD_FRAME);
	restore_rbx(w, STK_UROW_RBX(row->kind), cfa + off);
	/*
	 * rbp's slot below the frame's rsp: the epilogue popped it, rbp holds the caller's already
	 * (and the copy starts at rsp)
	 */
	if (rule == STK_RBP_AT_CFA && cfa + off < w->sp)
		rule = STK_RBP_SAME;
	if (!peek(w, cfa - 8, &ra, sizeof(ra)))
		return false;
	if (rule == STK_RBP_AT_CFA && !peek(w, cfa + off, &bp, sizeof(bp)))
		return false;
	if (rule == STK_RBP_AT_RBP && !peek(w, w->bp + off, &bp, sizeof(bp)))
		return false;
	return step_to(w, ra, cfa, bp);
}

static bool row_step(struct uwalk_user *w, const struct stk_urow *row)
{
	uint64_t cfa, regs[7];

	switch (STK_UROW_CFA(row->kind)) {
	case STK_CFA_END:
		return end(w, STK_STOP_COMPLETE);
	case STK_CFA_RSP:
		return cfa_step(w, row, w->sp + row->cfa_off);
	case STK_CFA_RSP8:
		return cfa_step(w, row, w->sp + (uint64_t)row->cfa_off * 8);
	case STK_CFA_RBP:
		return cfa_step(w, row, w->bp + row->cfa_off);
	case STK_CFA_PLT:
		return cfa_step(w, row, w->sp + 8 + ((w->pc & 15) >= row->cfa_off ? 8 : 0));
	case STK_CFA_SIGNAL:
		/* the trampoline's frame reads as a return address, unless exact (signal_step) */
		if (!w->exact)
			*w->last = w->pc + 1;
		/* rbp, rbx, ..., rsp, rip of the ucontext at rsp + 120 .. 175 */
		if (!peek(w, w->sp + 120, regs, sizeof(regs)))
			return false;
		if (!step_to(w, regs[6], regs[5], regs[0]))
			return false;
		w->bx = regs[1];
		w->bx_at = 0;
		w->bx_lost = false;
		w->exact = true;
		return true;
	case STK_CFA_RBP_DEREF:
		if (!peek(w, w->bp + (int16_t)row->cfa_off, &cfa, sizeof(cfa)))
			return false;
		return cfa_step(w, row, cfa);
	case STK_CFA_RBX:
		if (w->bx_lost)
			break;
		cfa = w->bx;
		if (w->bx_at && !peek(w, w->bx_at, &cfa, sizeof(cfa)))
			return false;
		return cfa_step(w, row, cfa + row->cfa_off);
	case STK_CFA_GAP:
		return fp_step(w, STK_STOP_NO_CFI);
	case STK_CFA_RCX:
		/* the event's rcx is the leaf's only, and a system call clobbers it (abi.h) */
		if (!at_leaf(w) || w->syscall)
			break;
		return cfa_step(w, row, w->d->cx + row->cfa_off);
	case STK_CFA_RA_RDI:
	case STK_CFA_RA_RCX:
		/* the event's rdi and rcx are the leaf's only (bpf/unwind.bpf.h) */
		if (!at_leaf(w) || (STK_UROW_CFA(row->kind) == STK_CFA_RA_RCX && w->syscall))
			break;
		return step_to(w, STK_UROW_CFA(row->kind) == STK_CFA_RA_RDI ? w->d->di : w->d->cx,
			       w->sp + row->cfa_off, w->bp);
	}
	return end(w, STK_STOP_UNSUPPORTED);
}

static const struct stk_urow *find_urow(const struct rec_unwind *u, const struct stk_umap *m,
					uint64_t rel)
{
	const struct stk_urow *rows;
	uint32_t lo = 0, hi = m->nrows;

	if (rel >> 32 || !hi || m->chunk >= u->nchunks)
		return NULL;
	rows = u->chunks[m->chunk].rows + m->first;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return rows[lo].pc <= rel ? &rows[lo] : NULL;
}

/* Is pc (a return address unless exact) in the interpreter's frame-evaluation function? */
static bool py_in_eval(const struct stk_pyproc *py, uint64_t pc, bool exact)
{
	uint64_t at = exact ? pc : pc - 1;

	return py->eval_start && at >= py->eval_start && at < py->eval_end;
}

/*
 * The Python frames of the interpreter activation whose stack frame is [sp, cfa), appended to
 * ips as bpf/unwind.bpf.h py_match() and py_emit() do: the chain's activation whose mark lies
 * there, from *act on (marks below are skipped: activations the native walk did not meet);
 * none when the next mark is above (its prologue or epilogue: it runs no frame). False when
 * the depth limit cut them.
 */
static bool py_splice(const struct stk_pychain *chain, uint32_t *act, uint64_t sp, uint64_t cfa,
		      uint64_t *ips, uint32_t *n, uint32_t max)
{
	uint32_t nact = chain->nact < STK_PY_ACTS ? chain->nact : STK_PY_ACTS, i, end;

	while (*act < nact && chain->act[*act].at < sp)
		(*act)++;
	if (*act >= nact || chain->act[*act].at >= cfa)
		return true;
	i = *act ? chain->act[*act - 1].end : 0;
	end = chain->act[*act].end;
	(*act)++;
	for (; i < end && i < chain->n && i < STK_PY_FRAMES; i++) {
		const struct stk_pyframe *f = &chain->f[i];

		if (*n + 2 > max)
			return false;
		ips[(*n)++] = STK_PYWORD(f->check, f->lasti);
		ips[(*n)++] = f->code;
	}
	return true;
}

/* One frame: is w->pc's caller found? (false: the walk ended, w->stop says why) */
static bool walk_step(struct uwalk_user *w, uint32_t n)
{
	const struct stk_urow *row;
	struct stk_urow entry = { .kind = STK_UROW_KIND(STK_CFA_RSP, STK_RBP_SAME, STK_RBX_SAME) };

	if (!n && w->d->entry)
		return cfa_step(w, &entry, w->sp + 8);
	if (w->m->flags & STK_UMAP_F_LIMIT)
		return end(w, STK_STOP_TABLE_LIMIT);
	if (!w->m->nrows)
		return fp_step(w, STK_STOP_NO_CFI);
	/* a leaf in a system call: its row is the syscall instruction's (bpf/unwind.bpf.h) */
	row = find_urow(w->u, w->m, (w->exact && !w->syscall ? w->pc : w->pc - 1) - w->m->bias);
	if (!row)
		return fp_step(w, STK_STOP_NO_CFI);
	return row_step(w, row);
}

/* Walk d's stack in the mappings of proc (rec_unwind__walk()). */
static uint32_t walk_in(const struct rec_unwind *u, const struct stk_uproc *proc,
			const struct stk_deferred *d, const struct stk_pychain *chain,
			uint64_t *ips, uint32_t max, uint32_t *stop, uint64_t *missing)
{
	struct uwalk_user w = { .u = u, .proc = proc, .d = d, .first = ips, .pc = d->pc,
				.sp = d->sp, .bp = d->bp, .bx = d->bx, .exact = true,
				.syscall = d->syscall };
	uint32_t n = 0, nat = 0, act = 0;
	uint64_t eval_sp = 0;	/* the interpreter activation stored last: its sp */
	bool met = false, pending = false, cut;

	*missing = 0;
	for (;;) {
		/* its caller's sp is its CFA now: the Python frames it runs follow it, as in BPF */
		cut = pending && !py_splice(chain, &act, eval_sp, w.sp, ips, &n, max);
		pending = false;
		if (cut || n >= max) {
			w.stop = STK_STOP_TRUNCATED;
			break;
		}
		w.m = find_umap(w.proc, w.pc);
		/* the leaf is real wherever it is; a caller in no known mapping is unchecked */
		if (!w.m && nat) {
			w.stop = STK_MISS_STOP(nat, w.guessed, w.bp, w.pc);
			if (STK_MISS_ASKS(nat, w.guessed, w.pc))
				*missing = w.pc;
			break;
		}
		/* an interrupted pc above the leaf is stored + 1, as BPF does */
		ips[n] = w.exact && nat ? w.pc + 1 : w.pc;
		w.last = &ips[n++];
		nat++;
		if (chain && py_in_eval(&w.proc->py, w.pc, w.exact)) {
			pending = true;
			eval_sp = w.sp;
			met = true;
		}
		if (!w.m) {
			w.stop = STK_STOP_NO_MAPPING;
			*missing = w.pc;
			break;
		}
		if (!walk_step(&w, nat - 1))
			break;
	}
	*stop = w.stop | (met && chain ? chain->stop : STK_PYSTOP_NONE) << 16;
	return n;
}

uint32_t rec_unwind__walk(const struct rec_unwind *u, const struct stk_deferred *d,
			  const struct stk_pychain *chain, uint64_t *ips, uint32_t max,
			  uint32_t *stop, uint64_t *missing)
{
	const struct proc_copy *pc = find_proc(u, d->key.tgid);
	const struct stk_uproc *proc;

	if (!pc) {
		*missing = 0;
		ips[0] = d->pc;
		*stop = STK_STOP_PROC_UNKNOWN;
		return 1;
	}
	/*
	 * An event's stamp is its image's exec (or fork) as BPF saw it: older than the image
	 * written last, it ran in the one before (0: before any exec BPF saw).
	 */
	proc = pc->prev && d->key.image_ns < pc->image_ns ? pc->prev : pc->value;
	if (pc->before && d->key.image_ns < pc->image_ns && !find_umap(proc, d->pc))
		proc = pc->before;
	return walk_in(u, proc, d, chain, ips, max, stop, missing);
}

uint32_t rec_unwind__walk_read(struct rec_unwind *u, const struct rec_uread *rd,
			       const struct stk_deferred *d, const struct stk_pychain *chain,
			       uint64_t *ips, uint32_t max, uint32_t *stop)
{
	const struct rec_pyobj *py;
	struct stk_uproc *proc = uproc_of(u, rd, &py);
	uint64_t missing;
	uint32_t n;

	if (!proc) {
		ips[0] = d->pc;
		*stop = STK_STOP_NO_MAPPING;
		return 1;
	}
	n = walk_in(u, proc, d, chain, ips, max, stop, &missing);
	free(proc);
	return n;
}
