// SPDX-License-Identifier: MIT
/*
 * sym_jit.c: names for frames in anonymous executable memory, from the perf map records
 * (/tmp/perf-PID.map copies) of the capture. A process generation may have several records, each
 * with the entries added since the previous one; a JIT that recompiles a function writes a new
 * entry over the old range, so where entries overlap the one written last wins.
 */
#include <errno.h>
#include <stdlib.h>

#include "sym_internal.h"

struct jit_sym {
	const struct cap_symbol *sym;
	uint64_t seq;		/* position in the perf map across records: later wins */
};

struct sym_jit_proc {
	uint32_t pid;
	uint64_t start_time;
	uint32_t n;
	struct jit_sym *syms;	/* sorted by addr, then seq */
	uint64_t max_size;	/* largest entry: how far back an entry can reach */
};

struct sym_jit {
	uint32_t nprocs;
	struct sym_jit_proc *procs;	/* sorted by (pid, start_time) */
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

static int jit_sym_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->sym->addr != y->sym->addr)
		return x->sym->addr < y->sym->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct sym_jit_proc *proc_slot(struct sym_jit *j, uint32_t pid, uint64_t start_time)
{
	uint32_t i;

	/* records are few (one per process and interval at most): a linear search is enough */
	for (i = 0; i < j->nprocs; i++)
		if (j->procs[i].pid == pid && j->procs[i].start_time == start_time)
			return &j->procs[i];
	return NULL;
}

struct sym_jit *sym_jit__new(const struct cap_perfmap *const *maps, uint32_t n)
{
	struct sym_jit *j = calloc(1, sizeof(*j));
	uint64_t seq = 0;
	uint32_t i, k;

	if (!j)
		return NULL;
	j->procs = calloc(n ? n : 1, sizeof(*j->procs));
	if (!j->procs)
		goto fail;
	for (i = 0; i < n; i++) {
		struct sym_jit_proc *p = proc_slot(j, maps[i]->pid, maps[i]->start_time);
		struct jit_sym *v;

		if (!p) {
			p = &j->procs[j->nprocs++];
			p->pid = maps[i]->pid;
			p->start_time = maps[i]->start_time;
		}
		v = realloc(p->syms, ((size_t)p->n + maps[i]->count + 1) * sizeof(*v));
		if (!v)
			goto fail;
		p->syms = v;
		for (k = 0; k < maps[i]->count; k++) {
			const struct cap_symbol *s = &maps[i]->syms[k];

			if (!s->size || !s->name)
				continue;
			p->syms[p->n].sym = s;
			p->syms[p->n].seq = seq++;
			p->n++;
			if (s->size > p->max_size)
				p->max_size = s->size;
		}
	}
	for (i = 0; i < j->nprocs; i++)
		qsort(j->procs[i].syms, j->procs[i].n, sizeof(struct jit_sym), jit_sym_cmp);
	qsort(j->procs, j->nprocs, sizeof(*j->procs), proc_cmp);
	return j;
fail:
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
		free(j->procs[i].syms);
	free(j->procs);
	free(j);
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
	const struct jit_sym *best = NULL;
	uint32_t lo = 0, hi, i;

	if (!p || !p->n || addr < p->syms[0].sym->addr)
		return NULL;
	hi = p->n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->syms[mid].sym->addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* every entry starting at most max_size below addr may hold it; take the latest */
	for (i = lo + 1; i-- > 0;) {
		const struct jit_sym *s = &p->syms[i];

		if (addr - s->sym->addr >= p->max_size)
			break;
		if (addr - s->sym->addr < s->sym->size && (!best || s->seq > best->seq))
			best = s;
	}
	return best ? best->sym : NULL;
}
