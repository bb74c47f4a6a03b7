// SPDX-License-Identifier: MIT
/*
 * emit_tree.c: --tree, the stacks merged from the roots down into a call tree. Path of a stack:
 * with -P a "COMM [PID]" node, then the user frames root first, then the kernel frames root first
 * (the order of the folded output; lost stacks appear as "[Missed User Stack]" /
 * "[Missed Kernel Stack]"). One line per node:
 *
 *     <2*depth spaces>COUNT PERCENT% NAME
 *
 * down to depth MAX_INDENT; deeper, "<2*MAX_INDENT spaces>[DEPTH] COUNT PERCENT% NAME": the
 * indentation of a path grows with the square of its depth, and a stack of 1,024 frames with
 * 64 inlined functions each printed 4.4 GB from a capture of 9.5 KB.
 *
 * COUNT is inclusive (the node and everything below it), PERCENT is COUNT over the section's total
 * with two decimals, siblings are sorted by count descending then name. --tree-min PCT hides
 * nodes (and their subtrees) under PCT percent. With -T each interval is headed by its time;
 * with --by each group gets its own tree (percentages of the group), headed by KEY=VALUE.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../report.h"

#define ROOT UINT32_MAX
#define MAX_INDENT 128u

struct tnode {
	uint32_t parent;
	const char *name;
	uint64_t count;
};

struct tree {
	struct tnode *nodes;
	uint32_t n, cap;
	struct rep_htab index;
	struct rep_strtab labels;	/* "COMM [PID]" */
	uint32_t *order;		/* node ids sorted by (parent, count desc, name) */
	uint32_t *first;		/* per node (+1 for the root): first child in order */
	uint64_t total;
	struct rep_charge charge;	/* the arrays above, from the run's budget */
};

struct child_key {
	const struct tree *t;
	uint32_t parent;
	const char *name;
};

static bool child_eq(const void *ctx, uint32_t val)
{
	const struct child_key *k = ctx;
	const struct tnode *n = &k->t->nodes[val];

	return n->parent == k->parent && n->name == k->name;
}

/*
 * Child of parent named name (interned pointer), added when new. Returns its id, -EFBIG (over
 * the run's budget) or -ENOMEM.
 */
static int64_t child(struct tree *t, uint32_t parent, const char *name)
{
	struct child_key key = { t, parent, name };
	uint64_t h = rep_hash_u64(rep_hash_u64(0, parent), (uintptr_t)name);
	uint32_t id;
	int err;

	if (rep_htab__find(&t->index, h, child_eq, &key, &id))
		return id;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		struct tnode *v;

		/* with the order and first arrays sort_children() makes */
		if (rep_charge__take(&t->charge, (uint64_t)(cap - t->cap) *
				     (sizeof(*v) + 2 * sizeof(uint32_t))))
			return -EFBIG;
		v = realloc(t->nodes, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->nodes = v;
		t->cap = cap;
	}
	err = rep_htab__insert(&t->index, h, t->n);
	if (err)
		return err;
	t->nodes[t->n] = (struct tnode){ parent, name, 0 };
	return t->n++;
}

static int descend(struct tree *t, uint32_t *at, const char *name, uint64_t count)
{
	int64_t id = child(t, *at, name);

	if (id < 0)
		return id;
	t->nodes[id].count = rep_count_add(t->nodes[id].count, count, NULL);
	*at = id;
	return 0;
}

static int add_stack(struct tree *t, const struct rep_model *m, const struct rep_opts *o,
		     const struct rep_stack *st)
{
	bool profile = m->cfg.profile;
	uint32_t at = ROOT, i;
	int err = 0;

	t->total = rep_count_add(t->total, st->count, NULL);
	if (o->perpid) {
		char label[CAP_COMM_LEN + 32];
		int64_t id;

		snprintf(label, sizeof(label), "%s [%" PRIu32 "]",
			 rep_strtab__str(&m->strs, st->comm), st->pid);
		id = rep_strtab__intern(&t->labels, label);
		if (id < 0)
			return id;
		err = descend(t, &at, rep_strtab__str(&t->labels, id), st->count);
	}
	if (!err && !o->kernel_only) {
		if (profile && (st->flags & REP_STACK_F_ULOST))
			err = descend(t, &at, "[Missed User Stack]", st->count);
		for (i = st->nu; !err && i-- > 0;)
			err = descend(t, &at, rep_strtab__str(&m->strs, st->frames[st->nk + i]),
				      st->count);
	}
	if (!err && !o->user_only) {
		if (profile && (st->flags & REP_STACK_F_KLOST))
			err = descend(t, &at, "[Missed Kernel Stack]", st->count);
		for (i = st->nk; !err && i-- > 0;)
			err = descend(t, &at, rep_strtab__str(&m->strs, st->frames[i]), st->count);
	}
	if (!err && at == ROOT)
		err = descend(t, &at, "[empty stack]", st->count);
	return err;
}

static int order_cmp(const void *a, const void *b, void *ctx)
{
	const struct tnode *nodes = ctx;
	const struct tnode *x = &nodes[*(const uint32_t *)a], *y = &nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int sort_children(struct tree *t)
{
	uint32_t i;

	t->order = malloc((t->n ? t->n : 1) * sizeof(*t->order));
	t->first = malloc((t->n + 1) * sizeof(*t->first));
	if (!t->order || !t->first)
		return -ENOMEM;
	for (i = 0; i < t->n; i++)
		t->order[i] = i;
	if (t->n)
		qsort_r(t->order, t->n, sizeof(*t->order), order_cmp, t->nodes);
	/* the root's children have parent ROOT: they sort last; slot t->n is the root's */
	for (i = 0; i <= t->n; i++)
		t->first[i] = UINT32_MAX;
	for (i = t->n; i-- > 0;) {
		uint32_t p = t->nodes[t->order[i]].parent;

		t->first[p == ROOT ? t->n : p] = i;
	}
	return 0;
}

/* A node being printed: its children's next place in t->order. */
struct level {
	uint32_t parent, i;
};

/* l at lv[depth], the array grown (from t's charge) when full. 0, -EFBIG or -ENOMEM. */
static int push_level(struct tree *t, struct level **lv, uint32_t *cap, uint32_t depth,
		      struct level l)
{
	if (depth == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 64;
		struct level *v;

		if (rep_charge__take(&t->charge, (uint64_t)(ncap - *cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(*lv, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*lv = v;
		*cap = ncap;
	}
	(*lv)[depth] = l;
	return 0;
}

/*
 * Depth first, children in order, without recursion: a path may be some 130,000 nodes deep
 * (1,024 frames a side, each with 64 inlined functions). 0, -EFBIG or -ENOMEM.
 */
static int print_tree(FILE *out, struct tree *t, const struct rep_opts *o)
{
	struct level *lv = NULL;
	uint32_t depth, cap = 0;
	int err;

	err = push_level(t, &lv, &cap, 0, (struct level){ ROOT, t->first[t->n] });
	for (depth = err ? 0 : 1; depth && !err;) {
		struct level *l = &lv[depth - 1];
		const struct tnode *n;
		uint32_t id;
		double pct;

		if (l->i >= t->n || t->nodes[t->order[l->i]].parent != l->parent) {
			depth--;
			continue;
		}
		id = t->order[l->i++];
		n = &t->nodes[id];
		pct = 100.0 * (double)n->count / (double)t->total;
		if (pct < o->tree_min_pct)
			continue;
		if (depth - 1 < MAX_INDENT)
			fprintf(out, "%*s", (int)(depth - 1) * 2, "");
		else
			fprintf(out, "%*s[%u] ", (int)MAX_INDENT * 2, "", depth - 1);
		fprintf(out, "%" PRIu64 " %.2f%% ", n->count, pct);
		rep_fputs_escaped(out, n->name, 0);
		fputc('\n', out);
		err = push_level(t, &lv, &cap, depth++, (struct level){ id, t->first[id] });
	}
	free(lv);
	return err;
}

static void tree_clear(struct tree *t)
{
	struct cap_budget *b = t->charge.budget;

	free(t->nodes);
	free(t->order);
	free(t->first);
	rep_htab__clear(&t->index);
	rep_strtab__clear(&t->labels);
	rep_charge__clear(&t->charge);
	memset(t, 0, sizeof(*t));
	t->charge.budget = t->index.charge.budget = b;
	rep_strtab__set_budget(&t->labels, b);
}

static void tree_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	cfg->key_pid = o->perpid;
	cfg->key_comm = o->perpid;
	cfg->addr_column = false;
}

static int tree_emit(FILE *out, const struct rep_model *m, const struct rep_opts *o)
{
	struct tree t = { .charge.budget = o->memory, .index.charge.budget = o->memory };
	uint32_t s, i = 0;
	char tm[32];
	int err = 0;

	rep_strtab__set_budget(&t.labels, o->memory);
	for (s = 0; s < m->nsections && !err; s++) {
		if (o->timestamp) {
			rep_model_section_time(m, s, tm, sizeof(tm));
			fprintf(out, "%-8s\n", tm);
		}
		/* --by: one tree per group, headed by its "KEY=VALUE" line */
		do {
			uint32_t g = i < m->nstacks ? m->stacks[i].group : 0;

			if (o->by != REP_BY_NONE && i < m->nstacks && m->stacks[i].section == s) {
				rep_fputs_escaped(out, rep_strtab__str(&m->strs, m->groups[g].label),
						  0);
				fputc('\n', out);
			}
			for (; i < m->nstacks && m->stacks[i].section == s &&
			       m->stacks[i].group == g && !err; i++)
				err = add_stack(&t, m, o, &m->stacks[i]);
			if (!err)
				err = sort_children(&t);
			if (!err && t.total)
				err = print_tree(out, &t, o);
			tree_clear(&t);
		} while (!err && i < m->nstacks && m->stacks[i].section == s);
	}
	tree_clear(&t);
	return err;
}

const struct emitter emit_tree = {
	.name = "tree",
	.configure = tree_configure,
	.emit = tree_emit,
};
