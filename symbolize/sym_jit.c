// SPDX-License-Identifier: MIT
/*
 * sym_jit.c: names for frames in anonymous executable memory, from the perf map records
 * (/tmp/perf-PID.map copies) of the capture. A process generation may have several records, each
 * with the entries added since the previous one; a JIT that recompiles a function writes a new
 * entry over the old range, so where entries overlap the one written last wins.
 *
 * Each process's entries become, once, the segments of its address space where one entry wins
 * (a sweep over the entries by address, a heap of those that hold the point by file order), so
 * that a lookup is a binary search whatever the entries are: looking back from an address over
 * every entry that might reach it made 44M entries at one address cost 44M steps a frame. The
 * tables take their bytes from the run's memory budget; over it, no JIT frame is named.
 */
#include <errno.h>
#include <stdlib.h>

#include "sym_internal.h"

/* [start, end) of a process's JIT code where sym is the entry written last. */
struct jit_seg {
	uint64_t start, end;
	const struct cap_symbol *sym;
};

struct sym_jit_proc {
	uint32_t pid;
	uint64_t start_time;
	uint32_t n;
	struct jit_seg *segs;	/* sorted, disjoint */
};

struct sym_jit {
	uint32_t nprocs;
	struct sym_jit_proc *procs;	/* sorted by (pid, start_time) */
	bool refused;			/* over the memory budget: no process has its table */
	struct cap_budget *budget;
	uint64_t charged;
};

/* An entry of one process: later in the file (seq) wins. */
struct jit_ent {
	const struct cap_symbol *sym;
	uint64_t end;		/* addr + size, held at UINT64_MAX */
	uint64_t seq;
};

static int proc_cmp(const void *a, const void *b)
{
	const struct sym_jit_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_time != y->start_time)
		return x->start_time < y->start_time ? -1 : 1;
	return 0;
}

/* Records by process generation, then file order. */
static int rec_cmp(const void *a, const void *b, void *ctx)
{
	const struct cap_perfmap *const *maps = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	struct sym_jit_proc x = { maps[i]->pid, maps[i]->start_time };
	struct sym_jit_proc y = { maps[j]->pid, maps[j]->start_time };
	int d = proc_cmp(&x, &y);

	return d ? d : i < j ? -1 : i > j;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct jit_ent *x = a, *y = b;

	if (x->sym->addr != y->sym->addr)
		return x->sym->addr < y->sym->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The heap of the entries holding the sweep's point: the highest seq on top. */
static void heap_push(struct jit_ent **h, uint32_t *n, struct jit_ent *e)
{
	uint32_t i = (*n)++;

	while (i && h[(i - 1) / 2]->seq < e->seq) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = e;
}

static void heap_pop(struct jit_ent **h, uint32_t *n)
{
	struct jit_ent *last = h[--*n];
	uint32_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1]->seq > h[c]->seq)
			c++;
		if (h[c]->seq <= last->seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
}

/* Room for one more segment in p: 0 or -EFBIG/-ENOMEM. */
static int seg_room(struct sym_jit *j, struct sym_jit_proc *p, uint32_t *cap)
{
	uint32_t ncap = *cap ? *cap * 2 : 16;
	struct jit_seg *v;

	if (p->n < *cap)
		return 0;
	if (ncap <= *cap || cap_budget__take(j->budget, (uint64_t)(ncap - *cap) * sizeof(*v)))
		return -EFBIG;
	v = realloc(p->segs, (size_t)ncap * sizeof(*v));
	if (!v) {
		cap_budget__give(j->budget, (uint64_t)(ncap - *cap) * sizeof(*v));
		return -ENOMEM;
	}
	j->charged += (uint64_t)(ncap - *cap) * sizeof(*v);
	p->segs = v;
	*cap = ncap;
	return 0;
}

/*
 * The segments of ents[0..n) (sorted by ent_cmp) into p: at each point the entry holding it
 * written last. 0, -EFBIG or -ENOMEM.
 */
static int sweep(struct sym_jit *j, struct sym_jit_proc *p, struct jit_ent *ents, uint32_t n,
		 struct jit_ent **heap)
{
	uint32_t i = 0, nh = 0, cap = 0;
	uint64_t pos = 0, next;
	int err;

	while (i < n || nh) {
		if (!nh)
			pos = ents[i].sym->addr;
		while (i < n && ents[i].sym->addr <= pos)
			heap_push(heap, &nh, &ents[i++]);
		/* entries that ended are dropped when they come to the top */
		while (nh && heap[0]->end <= pos)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		/* the winner holds until it ends or a later entry starts */
		next = heap[0]->end;
		if (i < n && ents[i].sym->addr < next)
			next = ents[i].sym->addr;
		if (p->n && p->segs[p->n - 1].sym == heap[0]->sym && p->segs[p->n - 1].end == pos) {
			p->segs[p->n - 1].end = next;
		} else {
			err = seg_room(j, p, &cap);
			if (err)
				return err;
			p->segs[p->n++] = (struct jit_seg){ pos, next, heap[0]->sym };
		}
		pos = next;
	}
	return 0;
}

/*
 * The segments of the process whose records are maps[order[0..nrec)] into p. 0, -EFBIG or
 * -ENOMEM.
 */
static int build_proc(struct sym_jit *j, struct sym_jit_proc *p,
		      const struct cap_perfmap *const *maps, const uint32_t *order, uint32_t nrec)
{
	struct jit_ent *ents = NULL, **heap = NULL;
	uint64_t total = 0, n = 0, scratch;
	uint32_t r, k;
	int err;

	for (r = 0; r < nrec; r++)
		total += maps[order[r]]->count;
	/* the sweep's entries and heap, given back once the segments are made */
	scratch = total * (sizeof(*ents) + sizeof(*heap));
	if (total > UINT32_MAX || cap_budget__take(j->budget, scratch))
		return -EFBIG;
	ents = malloc((total ? total : 1) * sizeof(*ents));
	heap = malloc((total ? total : 1) * sizeof(*heap));
	err = ents && heap ? 0 : -ENOMEM;
	/* the records are in file order: so are their entries' numbers */
	for (r = 0; r < nrec && !err; r++) {
		const struct cap_perfmap *m = maps[order[r]];

		for (k = 0; k < m->count; k++) {
			const struct cap_symbol *s = &m->syms[k];

			if (!s->size || !s->name)
				continue;
			ents[n] = (struct jit_ent){ s, s->size > UINT64_MAX - s->addr ?
							       UINT64_MAX : s->addr + s->size, n };
			n++;
		}
	}
	if (!err) {
		qsort(ents, n, sizeof(*ents), ent_cmp);
		err = sweep(j, p, ents, (uint32_t)n, heap);
	}
	free(ents);
	free(heap);
	cap_budget__give(j->budget, scratch);
	return err;
}

struct sym_jit *sym_jit__new(const struct cap_perfmap *const *maps, uint32_t n,
			     struct cap_budget *budget)
{
	struct sym_jit *j = calloc(1, sizeof(*j));
	uint32_t *order = NULL, i, first;
	int err = 0;

	if (!j)
		return NULL;
	j->budget = budget;
	if (!n)
		return j;
	order = malloc(n * sizeof(*order));
	j->procs = calloc(n, sizeof(*j->procs));
	if (!order || !j->procs)
		goto fail;
	for (i = 0; i < n; i++)
		order[i] = i;
	/* the records of each process together, in file order: sorted once, not searched */
	qsort_r(order, n, sizeof(*order), rec_cmp, (void *)maps);
	for (first = 0; first < n && !err; first = i) {
		struct sym_jit_proc *p = &j->procs[j->nprocs++];

		p->pid = maps[order[first]]->pid;
		p->start_time = maps[order[first]]->start_time;
		for (i = first; i < n && maps[order[i]]->pid == p->pid &&
				maps[order[i]]->start_time == p->start_time; i++)
			;
		err = build_proc(j, p, maps, order + first, i - first);
	}
	free(order);
	order = NULL;
	if (err == -EFBIG) {
		/* within the budget or not at all: the frames say why they are unnamed */
		for (i = 0; i < j->nprocs; i++)
			free(j->procs[i].segs);
		cap_budget__give(j->budget, j->charged);
		j->charged = 0;
		j->nprocs = 0;
		j->refused = true;
		return j;
	}
	if (err)
		goto fail;
	return j;
fail:
	free(order);
	sym_jit__free(j);
	errno = ENOMEM;
	return NULL;
}

void sym_jit__free(struct sym_jit *j)
{
	uint32_t i;

	if (!j)
		return;
	for (i = 0; i < j->nprocs; i++)
		free(j->procs[i].segs);
	free(j->procs);
	cap_budget__give(j->budget, j->charged);
	free(j);
}

bool sym_jit__refused(const struct sym_jit *j)
{
	return j && j->refused;
}

const struct sym_jit_proc *sym_jit__proc(const struct sym_jit *j, uint32_t pid,
					 uint64_t start_time)
{
	struct sym_jit_proc key = { .pid = pid, .start_time = start_time };

	if (!j || !j->nprocs)
		return NULL;
	return bsearch(&key, j->procs, j->nprocs, sizeof(key), proc_cmp);
}

const struct cap_symbol *sym_jit_proc__find(const struct sym_jit_proc *p, uint64_t addr)
{
	uint32_t lo = 0, hi;

	if (!p || !p->n || addr < p->segs[0].start)
		return NULL;
	hi = p->n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->segs[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return addr < p->segs[lo].end ? p->segs[lo].sym : NULL;
}
