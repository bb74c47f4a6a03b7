// SPDX-License-Identifier: MIT
/*
 * rep_ksyms.c: the kernel symbol tables stkreport builds from KSYMS and KSYMS_ADD records
 * (docs/format.md 4.10). Each case writes a small capture, loads it, and names addresses of
 * each interval through the resolver every output uses: an interval keeps the table as it stood
 * when it was read, a replacement makes a new table, additions that change no earlier name do
 * not, and sizes bound what a symbol names.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../report/report.h"
#include "../test.h"

static char path[256];
static struct cap_writer *w;

static void start(void)
{
	w = cap_writer__open(path);
	if (!w) {
		printf("not ok rep_ksyms: cannot create %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void put(const struct cap_record *rec)
{
	int err = cap_writer__put(w, rec);

	if (err) {
		printf("not ok rep_ksyms: write: %s\n", strerror(-err));
		exit(1);
	}
}

static void put_ksyms(uint16_t type, uint32_t flags, struct cap_ksym *syms, uint32_t n)
{
	struct cap_record rec = { .type = type, .ksyms = { flags, n, syms } };

	put(&rec);
}

/* An interval whose one row has the kernel stack ips (none: no kernel stack). */
static void put_interval(uint32_t seq, uint64_t *ips, uint32_t n)
{
	struct cap_stack st = { .nips = n, .ips = ips };
	struct cap_row row = { .pid = 1, .tid = 1, .comm = "t", .kstack = n ? 1 : 0, .count = 1 };
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL,
				  .interval = { .seq = seq, .nkstacks = n ? 1 : 0, .kstacks = &st,
						.nrows = 1, .rows = &row } };

	put(&rec);
}

static struct rep_capture *finish(void)
{
	struct rep_capture *c;

	cap_writer__close(w);
	c = rep_capture__load(path, NULL);
	if (!c) {
		printf("not ok rep_ksyms: load: %s\n", strerror(errno));
		exit(1);
	}
	return c;
}

/* "name+0xoff" or "[reason]" of addr as a leaf kernel frame of interval iv. */
static const char *name_of(struct rep_resolver *r, const struct rep_capture *c, uint32_t iv,
			   uint64_t addr)
{
	static char buf[128];
	const struct rep_frame_info *f;

	if (rep_resolver__frame(r, &c->intervals[iv], 0, true, false, addr, &f))
		return "[error]";
	if (f->name)
		snprintf(buf, sizeof(buf), "%s+%#" PRIx64, f->name, f->offset);
	else
		snprintf(buf, sizeof(buf), "[%s]", sym_reason_name(f->reason));
	return buf;
}

static struct rep_resolver *resolver(const struct rep_capture *c)
{
	static struct rep_opts o = { .no_objects = true };
	struct rep_resolver *r = rep_resolver__new(c, &o, 0);

	if (!r) {
		printf("not ok rep_ksyms: resolver: %s\n", strerror(errno));
		exit(1);
	}
	return r;
}

/* KSYMS_ADD only (kallsyms=hits): additions share a table, a replacement makes a new one. */
static void test_hits(void)
{
	struct cap_ksym first[] = { { 0x1000, "a", NULL, 0x100 }, { 0x2000, "b", "mod", 0x10 } };
	struct cap_ksym more[] = { { 0x3000, "c", NULL, 0x100 } };
	struct cap_ksym moved[] = { { 0x1000, "a2", NULL, 0x80 }, { 0x1080, "bpf_x", "bpf", 8 } };
	uint64_t ips[] = { 0x1010 };
	struct rep_capture *c;
	struct rep_resolver *r;

	start();
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, first, 2);
	put_interval(0, ips, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, more, 1);
	put_interval(1, ips, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, moved, 2);
	put_interval(2, ips, 1);
	c = finish();
	r = resolver(c);
	T_EQ_U64("test_rep_ksyms_hits_tables", 2, c->nksyms);
	T_CHECK("test_rep_ksyms_hits_interval_tables", c->nintervals == 3 &&
		c->intervals[0].ksyms == 0 && c->intervals[1].ksyms == 0 &&
		c->intervals[2].ksyms == 1, "%u intervals", c->nintervals);
	T_EQ_STR("test_rep_ksyms_hits_named", "a+0x10", name_of(r, c, 0, 0x1010));
	T_EQ_STR("test_rep_ksyms_hits_last_byte", "b+0xf", name_of(r, c, 0, 0x200f));
	T_EQ_STR("test_rep_ksyms_hits_past_size", "[no symbol]", name_of(r, c, 0, 0x2010));
	T_EQ_STR("test_rep_ksyms_hits_below_first", "[no symbol]", name_of(r, c, 0, 0xfff));
	T_EQ_STR("test_rep_ksyms_hits_added_later_shared", "c+0x1", name_of(r, c, 0, 0x3001));
	T_EQ_STR("test_rep_ksyms_hits_old_table_kept", "a+0x90", name_of(r, c, 1, 0x1090));
	T_EQ_STR("test_rep_ksyms_hits_replaced", "a2+0x10", name_of(r, c, 2, 0x1010));
	T_EQ_STR("test_rep_ksyms_hits_replacement_new", "bpf_x+0x4", name_of(r, c, 2, 0x1084));
	T_EQ_STR("test_rep_ksyms_hits_replaced_range_gone", "[no symbol]",
		 name_of(r, c, 2, 0x1090));
	T_EQ_STR("test_rep_ksyms_hits_others_carried", "c+0xff", name_of(r, c, 2, 0x30ff));
	rep_resolver__free(r);
	rep_capture__free(c);
}

/* Until an interval with kernel stacks is read, every change goes into the one table. */
static void test_unused(void)
{
	struct cap_ksym first[] = { { 0x1000, "a", NULL, 0x100 } };
	struct cap_ksym moved[] = { { 0x1000, "a2", NULL, 0x100 } };
	struct cap_ksym snap[] = { { 0x1000, "k", NULL, 0 } };
	uint64_t ips[] = { 0x1010 };
	struct rep_capture *c;
	struct rep_resolver *r;

	start();
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, first, 1);
	put_interval(0, NULL, 0);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, moved, 1);
	put_ksyms(CAP_CHUNK_KSYMS, 0, snap, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, CAP_KSYMS_F_HIDDEN, NULL, 0);
	put_ksyms(CAP_CHUNK_KSYMS, 0, snap, 1);
	put_interval(1, ips, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, moved, 1);
	c = finish();
	r = resolver(c);
	T_EQ_U64("test_rep_ksyms_unused_changed_in_place", 2, c->nksyms);
	T_EQ_STR("test_rep_ksyms_unused_last_snapshot", "k+0x10", name_of(r, c, 1, 0x1010));
	rep_resolver__free(r);
	rep_capture__free(c);
}

/* HIDDEN from a KSYMS_ADD on: later intervals unnamed, earlier ones keep their names. */
static void test_hidden(void)
{
	struct cap_ksym first[] = { { 0x1000, "a", NULL, 0x100 } };
	uint64_t ips[] = { 0x1010 };
	struct rep_capture *c;
	struct rep_resolver *r;

	start();
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, first, 1);
	put_interval(0, ips, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, CAP_KSYMS_F_HIDDEN, NULL, 0);
	put_interval(1, ips, 1);
	c = finish();
	r = resolver(c);
	T_EQ_U64("test_rep_ksyms_hidden_tables", 2, c->nksyms);
	T_EQ_STR("test_rep_ksyms_hidden_before", "a+0x10", name_of(r, c, 0, 0x1010));
	T_EQ_STR("test_rep_ksyms_hidden_after", "[kallsyms hidden (kptr_restrict)]",
		 name_of(r, c, 1, 0x1010));
	rep_resolver__free(r);
	rep_capture__free(c);
}

/*
 * A KSYMS snapshot then KSYMS_ADD (kallsyms=all): a symbol landing after one without a size
 * renames addresses that one named, so a new table; a symbol at a snapshot symbol's address
 * replaces it.
 */
static void test_snapshot_then_add(void)
{
	struct cap_ksym snap[] = { { 0x1000, "k1", NULL, 0 }, { 0x2000, "k2", NULL, 0 },
				   { 0x2000, "k2_alias", NULL, 0 }, { 0x3000, "k3", NULL, 0 } };
	struct cap_ksym added[] = { { 0x2400, "x", "bpf", 0x200 } };
	struct cap_ksym over[] = { { 0x3000, "k3_new", "mod", 0x10 } };
	uint64_t ips[] = { 0x2500 };
	struct rep_capture *c;
	struct rep_resolver *r;

	start();
	put_ksyms(CAP_CHUNK_KSYMS, 0, snap, 4);
	put_interval(0, ips, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, added, 1);
	put_interval(1, ips, 1);
	put_ksyms(CAP_CHUNK_KSYMS_ADD, 0, over, 1);
	put_interval(2, ips, 1);
	c = finish();
	r = resolver(c);
	T_EQ_U64("test_rep_ksyms_snapshot_tables", 3, c->nksyms);
	T_EQ_STR("test_rep_ksyms_snapshot_nearest_lower", "k2_alias+0x500",
		 name_of(r, c, 0, 0x2500));
	T_EQ_STR("test_rep_ksyms_snapshot_added", "x+0x100", name_of(r, c, 1, 0x2500));
	T_EQ_STR("test_rep_ksyms_snapshot_cut_by_added", "k2_alias+0x3ff",
		 name_of(r, c, 1, 0x23ff));
	T_EQ_STR("test_rep_ksyms_snapshot_past_added", "[no symbol]", name_of(r, c, 1, 0x2700));
	T_EQ_STR("test_rep_ksyms_snapshot_before_replacement", "k3+0x5000",
		 name_of(r, c, 1, 0x8000));
	T_EQ_STR("test_rep_ksyms_snapshot_replaced", "k3_new+0x8", name_of(r, c, 2, 0x3008));
	T_EQ_STR("test_rep_ksyms_snapshot_replaced_sized", "[no symbol]",
		 name_of(r, c, 2, 0x8000));
	rep_resolver__free(r);
	rep_capture__free(c);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(path, sizeof(path), "%s/rep_ksyms.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		printf("not ok rep_ksyms: mkstemp: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	test_hits();
	test_unused();
	test_hidden();
	test_snapshot_then_add();
	unlink(path);
	T_EXIT();
}
