// SPDX-License-Identifier: MIT
/*
 * capdump: print every record of a capture as text, one line per item, for tests and debugging.
 *   capdump [-s|-k] FILE  -s: summary only (per probe event totals, intervals, losses)
 *                         -k: also the symbols of whole KSYMS snapshots (size=0)
 * Stacks are numbered as rows refer to them: per record up to 3.x, in the file from 4.0
 * (format.md 4.4), where each stack is printed once, by the record that brings it.
 * Exit 0 on a clean read (a torn tail is reported and still exits 0), 1 on an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stk/capture.h"

#define MAX_PROBES 256

struct totals {
	uint64_t per_probe[MAX_PROBES];
	uint64_t events, losses[CAP_LOSS__COUNT];
	uint32_t intervals, procs, rows;
	uint32_t event_chunks, objects, perfmap_syms;	/* 1.1; printed only when non-zero */
	int ended;
	uint16_t last_type;	/* of the last INTERVAL or EVENTS chunk, 0 before the first */
	uint32_t last_seq;
};

static void hex(const uint8_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("%02x", b[i]);
}

static void dump_meta(const struct cap_meta *m)
{
	for (uint32_t i = 0; i < m->nkv; i++)
		printf("meta %s=%s\n", m->kv[i].key, m->kv[i].value);
	for (uint32_t i = 0; i < m->nprobes; i++)
		printf("probe %u kind=%s nattached=%u spec=%s\n", m->probes[i].id,
		       cap_probe_kind_name(m->probes[i].kind), m->probes[i].nattached,
		       m->probes[i].spec);
}

static void dump_procs(const struct cap_procs *p)
{
	for (uint32_t i = 0; i < p->count; i++) {
		const struct cap_process *pr = &p->procs[i];

		printf("proc pid=%u start=%" PRIu64 " flags=%#x comm=%s exe=%s nmaps=%u\n", pr->pid,
		       pr->start_time, pr->flags, pr->comm, pr->exe, pr->nmaps);
		for (uint32_t j = 0; j < pr->nmaps; j++) {
			const struct cap_mapping *m = &pr->maps[j];

			printf("  map %" PRIx64 "-%" PRIx64 " pgoff=%" PRIx64 " dev=%" PRIx64
			       " ino=%" PRIu64 " kind=%u flags=%#x bid=",
			       m->start, m->end, m->pgoff, m->dev, m->inode, m->kind, m->flags);
			hex(m->build_id, m->build_id_len);
			printf(" %s\n", m->path);
		}
	}
}

/* The stacks rows may refer to before the next record: 4.x files number them in the file. */
struct numbering {
	uint16_t major;
	uint32_t nk, nu;	/* stacks of the file before the record (4.x) */
};

static void dump_stack(const char *what, uint32_t number, const struct cap_stack *s)
{
	printf("  %s %u flags=%#x n=%u:", what, number, s->flags, s->nips);
	for (uint32_t j = 0; j < s->nips; j++)
		printf(" %" PRIx64, s->ips[j]);
	printf("\n");
}

/*
 * INTERVAL, and EVENTS (1.1) whose rows add ts= and cpu= at the end of the line. -EBADMSG when
 * a row of a 4.x file refers past the file's stacks (stkreport's check, struct cap_stacks).
 */
static int dump_interval(const struct cap_interval *iv, int events, int summary,
			 struct numbering *num)
{
	uint32_t kbase = num->major >= 4 ? num->nk : 0, ubase = num->major >= 4 ? num->nu : 0;

	printf("%s seq=%u start=%" PRIu64 " end=%" PRIu64 " rows=%u kstacks=%u ustacks=%u\n",
	       events ? "events" : "interval", iv->seq, iv->start_ns, iv->end_ns, iv->nrows,
	       iv->nkstacks, iv->nustacks);
	num->nk = kbase + iv->nkstacks;
	num->nu = ubase + iv->nustacks;
	for (uint32_t i = 0; i < iv->nrows; i++)
		if (iv->rows[i].kstack > num->nk || iv->rows[i].ustack > num->nu)
			return -EBADMSG;
	if (summary)
		return 0;
	for (uint32_t i = 0; i < iv->nkstacks; i++)
		dump_stack("kstack", kbase + i + 1, &iv->kstacks[i]);
	for (uint32_t i = 0; i < iv->nustacks; i++)
		dump_stack("ustack", ubase + i + 1, &iv->ustacks[i]);
	for (uint32_t i = 0; i < iv->nrows; i++) {
		const struct cap_row *r = &iv->rows[i];

		printf("  row probe=%u pid=%u tid=%u comm=%s k=%u u=%u flags=%#x count=%" PRIu64,
		       r->probe, r->pid, r->tid, r->comm, r->kstack, r->ustack, r->flags, r->count);
		if (events)
			printf(" ts=%" PRIu64 " cpu=%u", r->ts_ns, r->cpu);
		printf("\n");
	}
	return 0;
}

static void dump_symbols(const struct cap_symbol *syms, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("  sym %" PRIx64 " size=%" PRIx64 " %s\n", syms[i].addr, syms[i].size,
		       syms[i].name);
}

/* KSYMS (no sizes: the whole snapshot, counted only) and KSYMS_ADD (each symbol). */
/* detail: 0 summary, 1 every record, 2 and the symbols of KSYMS snapshots */
static void dump_ksyms(const struct cap_ksyms *k, int sized, int detail)
{
	printf("%s count=%u flags=%#x\n", sized ? "ksyms_add" : "ksyms", k->count, k->flags);
	for (uint32_t i = 0; (sized ? detail : detail > 1) && i < k->count; i++)
		printf("  ksym %" PRIx64 " size=%" PRIx64 " %s%s%s%s\n", k->syms[i].addr,
		       k->syms[i].size, k->syms[i].name, k->syms[i].module ? " [" : "",
		       k->syms[i].module ? k->syms[i].module : "", k->syms[i].module ? "]" : "");
}

static void dump_objects(const struct cap_objects *os, int summary)
{
	for (uint32_t i = 0; i < os->count; i++) {
		const struct cap_object *o = &os->objs[i];

		printf("object flags=%#x bid=", o->flags);
		hex(o->build_id, o->build_id_len);
		printf(" path=%s debuglink=%s segs=%u syms=%u data=%" PRIu64 "\n", o->path,
		       o->debuglink, o->nsegs, o->nsyms, o->data_len);
		if (summary)
			continue;
		for (uint32_t j = 0; j < o->nsegs; j++)
			printf("  seg offset=%" PRIx64 " vaddr=%" PRIx64 " filesz=%" PRIx64
			       " memsz=%" PRIx64 "\n", o->segs[j].offset, o->segs[j].vaddr,
			       o->segs[j].filesz, o->segs[j].memsz);
		dump_symbols(o->syms, o->nsyms);
	}
}

static void dump_perfmap(const struct cap_perfmap *pm, int summary)
{
	printf("perfmap pid=%u start=%" PRIu64 " syms=%u\n", pm->pid, pm->start_time, pm->count);
	if (!summary)
		dump_symbols(pm->syms, pm->count);
}

/* 4.1: interpreter code objects (format.md 4.11), each with its line runs (start:line) */
static void dump_codes(const struct cap_codes *cs, int summary)
{
	printf("codes count=%u\n", cs->count);
	for (uint32_t i = 0; i < cs->count && !summary; i++) {
		const struct cap_code *c = &cs->codes[i];

		printf("  code %u lang=%u reason=%u addr=%" PRIx64 " first=%u %s %s", c->id, c->lang,
		       c->reason, c->addr, c->firstline, c->name ? c->name : "",
		       c->file ? c->file : "");
		for (uint32_t j = 0; j < c->nlines; j++)
			printf(" %u:%u", c->lines[j].start, c->lines[j].line);
		printf("\n");
	}
}

static void account(const struct cap_record *rec, struct totals *t)
{
	switch (rec->type) {
	case CAP_CHUNK_PROCS:
		t->procs += rec->procs.count;
		break;
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS:
		/* format.md 3.2 (2.2): the parts of a split interval, chunks with one seq after one
		 * another, are one interval */
		if (rec->type == CAP_CHUNK_EVENTS)
			t->event_chunks++;
		else if (t->last_type != rec->type || t->last_seq != rec->interval.seq)
			t->intervals++;
		t->last_type = rec->type;
		t->last_seq = rec->interval.seq;
		t->rows += rec->interval.nrows;
		for (uint32_t i = 0; i < rec->interval.nrows; i++) {
			const struct cap_row *r = &rec->interval.rows[i];

			t->events += r->count;
			if (r->probe < MAX_PROBES)
				t->per_probe[r->probe] += r->count;
		}
		break;
	case CAP_CHUNK_LOSSES:
		for (int i = 0; i < CAP_LOSS__COUNT; i++)
			t->losses[i] += rec->losses.counts[i];
		break;
	case CAP_CHUNK_OBJECTS:
		t->objects += rec->objects.count;
		break;
	case CAP_CHUNK_PERFMAP:
		t->perfmap_syms += rec->perfmap.count;
		break;
	case CAP_CHUNK_END:
		t->ended = 1;
		break;
	}
}

static int dump(const struct cap_record *rec, int summary, int ksyms, struct numbering *num)
{
	switch (rec->type) {
	case CAP_CHUNK_META:
		dump_meta(&rec->meta);
		break;
	case CAP_CHUNK_KSYMS:
	case CAP_CHUNK_KSYMS_ADD:
		dump_ksyms(&rec->ksyms, rec->type == CAP_CHUNK_KSYMS_ADD, summary ? 0 : 1 + ksyms);
		break;
	case CAP_CHUNK_PROCS:
		if (!summary)
			dump_procs(&rec->procs);
		break;
	case CAP_CHUNK_INTERVAL:
		return dump_interval(&rec->interval, 0, summary, num);
	case CAP_CHUNK_EVENTS:
		return dump_interval(&rec->interval, 1, summary, num);
	case CAP_CHUNK_OBJECTS:
		dump_objects(&rec->objects, summary);
		break;
	case CAP_CHUNK_PERFMAP:
		dump_perfmap(&rec->perfmap, summary);
		break;
	case CAP_CHUNK_CODES:
		dump_codes(&rec->codes, summary);
		break;
	case CAP_CHUNK_LOSSES:
		for (int i = 0; i < CAP_LOSS__COUNT; i++)
			if (rec->losses.counts[i] && !summary)
				printf("  loss interval=%u %s=%" PRIu64 "\n", rec->losses.interval_seq,
				       cap_loss_name(i), rec->losses.counts[i]);
		for (uint32_t cpu = 0; cpu < rec->losses.ncpus && !summary; cpu++)
			if (rec->losses.cpu_dropped[cpu])
				printf("  loss interval=%u cpu=%u events dropped=%" PRIu64 "\n",
				       rec->losses.interval_seq, cpu, rec->losses.cpu_dropped[cpu]);
		break;
	case CAP_CHUNK_END:
		printf("end nintervals=%u events=%" PRIu64 "\n", rec->end.nintervals,
		       rec->end.events);
		break;
	}
	return 0;
}

static void print_totals(const struct totals *t)
{
	printf("total events=%" PRIu64 " intervals=%u rows=%u procs=%u end=%d\n", t->events,
	       t->intervals, t->rows, t->procs, t->ended);
	if (t->event_chunks || t->objects || t->perfmap_syms)
		printf("total event_chunks=%u objects=%u perfmap_syms=%u\n", t->event_chunks,
		       t->objects, t->perfmap_syms);
	for (int i = 0; i < MAX_PROBES; i++)
		if (t->per_probe[i])
			printf("total probe=%d events=%" PRIu64 "\n", i, t->per_probe[i]);
	for (int i = 0; i < CAP_LOSS__COUNT; i++)
		if (t->losses[i])
			printf("total loss %s=%" PRIu64 "\n", cap_loss_name(i), t->losses[i]);
}

int main(int argc, char **argv)
{
	int summary = argc > 2 && !strcmp(argv[1], "-s");
	int ksyms = argc > 2 && !strcmp(argv[1], "-k");
	const char *path = argv[argc - 1];
	struct totals t = { 0 };
	struct numbering num = { 0 };
	struct cap_reader *r;
	struct cap_chunk c;
	int n, err = 0;

	if (argc < 2 || (argc > 2 && !summary && !ksyms)) {
		fprintf(stderr, "usage: capdump [-s|-k] FILE\n");
		return 2;
	}
	r = cap_reader__open(path);
	if (!r) {
		fprintf(stderr, "capdump: %s: %s\n", path, strerror(errno));
		return 1;
	}
	cap_reader__version(r, &num.major, NULL);
	while ((n = cap_reader__next(r, &c)) > 0) {
		struct cap_record *rec;

		err = cap_record__decode(&c, &rec);
		if (!err) {
			err = dump(rec, summary, ksyms, &num);
			if (!err)
				account(rec, &t);
			cap_record__free(rec);
		}
		if (err) {
			fprintf(stderr, "capdump: %s: chunk %u: %s\n", path, c.index, strerror(-err));
			break;
		}
	}
	if (n < 0 && n != -ENODATA)
		err = n;
	if (n < 0)
		fprintf(stderr, "capdump: %s: chunk %u at 0x%" PRIx64 ": %s\n", path,
			cap_reader__chunk_index(r), cap_reader__offset(r), strerror(-n));
	print_totals(&t);
	cap_reader__close(r);
	return err ? 1 : 0;
}
