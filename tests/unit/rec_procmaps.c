// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/proc/procmaps.c's mapping set, as the kernel's mmap records change it: a
 * mapping replaces what it overlaps (MAP_FIXED), one inside an older mapping splits it, records
 * older than the last /proc read or exec change nothing, an exec ends the old image, which still
 * names the rows of it drained after the exec, in a part of the interval of its own. And the
 * table stays as small as the live processes while many come and go.
 */
#include <malloc.h>
#include <unistd.h>

#include "../test.h"
#include "../../record/rec.h"

/* An anonymous executable mapping (no object to open) [start, end) at pgoff. */
static struct cap_mapping anon(uint64_t start, uint64_t end, uint64_t pgoff)
{
	return (struct cap_mapping){ .start = start, .end = end, .pgoff = pgoff,
				     .kind = CAP_MAP_ANON_EXEC, .path = "" };
}

/* The mappings of pid the PROCS record before part p would hold: "start-end@pgoff ..." in buf. */
static const char *part_layout(struct rec_procs *ps, uint32_t p, uint32_t pid, char *buf,
			       size_t sz)
{
	struct cap_procs out;
	size_t len = 0;

	buf[0] = 0;
	rec_procs__pending(ps, p, &out);
	for (uint32_t i = 0; i < out.count; i++) {
		if (out.procs[i].pid != pid)
			continue;
		for (uint32_t j = 0; j < out.procs[i].nmaps; j++) {
			const struct cap_mapping *m = &out.procs[i].maps[j];

			if (m->kind != CAP_MAP_ANON_EXEC || m->start < 0x10000000)
				continue;	/* the test's own mappings, read from /proc */
			len += snprintf(buf + len, sz - len, "%s%llx-%llx@%llx", len ? " " : "",
					(unsigned long long)m->start, (unsigned long long)m->end,
					(unsigned long long)m->pgoff);
		}
	}
	return buf;
}

/* An interval without rows: what run.c does before its PROCS records (one part). */
static int split_empty(struct rec_procs *ps)
{
	struct cap_interval iv = { 0 };
	uint32_t part[1];

	return rec_procs__split(ps, &iv, NULL, part);
}

/* The mappings of pid the next interval's PROCS record would hold. */
static const char *layout(struct rec_procs *ps, uint32_t pid, char *buf, size_t sz)
{
	split_empty(ps);
	part_layout(ps, 0, pid, buf, sz);
	rec_procs__written(ps, 0);
	rec_procs__split_done(ps);
	return buf;
}

/* layout() is evaluated once: each call takes the pending records. */
static void check_layout(struct rec_procs *ps, uint32_t pid, const char *name, const char *want)
{
	char buf[512];
	const char *got = layout(ps, pid, buf, sizeof(buf));

	T_EQ_STR(name, want, got);
}

/*
 * An exec at t + 20 while the image of the exec at t + 10 has rows: the interval is written in
 * two parts, each after the record of the image its rows ran in.
 */
static void test_split(struct rec_procs *ps, uint32_t pid, uint64_t t)
{
	struct cap_row rows[3] = { { .pid = pid }, { .pid = pid }, { .pid = pid + 1000000 } };
	uint64_t when[3] = { t + 10, t + 20, 0 };	/* BPF's stamps: its execs' times */
	struct cap_interval iv = { .nrows = 3, .rows = rows };
	struct cap_mapping m;
	uint32_t part[3];
	char buf[512];
	int n;

	rec_procs__exec(ps, pid, "newer", t + 20);
	m = anon(0x60000000, 0x60001000, 0);
	rec_procs__mapped(ps, pid, &m, t + 21);
	n = rec_procs__split(ps, &iv, when, part);
	T_EQ_INT("procmaps.split_parts", 2, n);
	T_CHECK("procmaps.split_rows", part[0] == 0 && part[1] == 1 && part[2] == 0,
		"parts %u %u %u", part[0], part[1], part[2]);
	T_EQ_STR("procmaps.split_old_first", "40000000-40001000@0",
		 part_layout(ps, 0, pid, buf, sizeof(buf)));
	T_EQ_STR("procmaps.split_new_after", "60000000-60001000@0",
		 part_layout(ps, 1, pid, buf, sizeof(buf)));
	rec_procs__written(ps, 0);
	rec_procs__written(ps, 1);
	rec_procs__split_done(ps);
	/* the next interval: one part, the new image, written once more as the pid's last record */
	when[0] = t + 20;
	n = rec_procs__split(ps, &iv, when, part);
	T_EQ_INT("procmaps.split_next", 1, n);
	check_layout(ps, pid, "procmaps.split_next_layout", "60000000-60001000@0");
	check_layout(ps, pid, "procmaps.split_then_done", "");
}

/*
 * An exec the reader applies between the interval's split and its PROCS record: the record is
 * of the image the interval's rows ran in, the one current at the split; the new image comes
 * with the next interval. Before, the new image was written, and the rows named with it.
 */
static void test_exec_after_split(struct rec_procs *ps, uint32_t pid, uint64_t t)
{
	struct cap_mapping m;
	char buf[512];

	rec_procs__exec(ps, pid, "first", t + 30);
	m = anon(0x70000000, 0x70001000, 0);
	rec_procs__mapped(ps, pid, &m, t + 31);
	T_EQ_INT("procmaps.exec_after_split_parts", 1, split_empty(ps));
	rec_procs__exec(ps, pid, "second", t + 40);
	m = anon(0x80000000, 0x80001000, 0);
	rec_procs__mapped(ps, pid, &m, t + 41);
	T_EQ_STR("procmaps.exec_after_split_record", "70000000-70001000@0",
		 part_layout(ps, 0, pid, buf, sizeof(buf)));
	rec_procs__written(ps, 0);
	rec_procs__split_done(ps);
	check_layout(ps, pid, "procmaps.exec_after_split_next", "80000000-80001000@0");
	check_layout(ps, pid, "procmaps.exec_after_split_done", "");
}

/*
 * One interval as run.c and mmaps.c drive it: n processes forked from parent (its mappings
 * copied), with events, a mapping of their own, gone; then written and retired. The pids are
 * above any pid_max in use, so their /proc reads fail as for processes gone already.
 */
static void churn_interval(struct rec_procs *ps, uint32_t parent, uint32_t first, uint32_t n)
{
	struct cap_mapping m = anon(0x60000000, 0x60001000, 0);
	struct cap_procs out;

	for (uint32_t pid = first; pid < first + n; pid++) {
		rec_procs__forked(ps, pid, parent, rec_now_ns());
		rec_procs__ensure(ps, pid, "churn");
		rec_procs__mapped(ps, pid, &m, rec_now_ns());	/* to give the walker */
	}
	rec_procs__publish(ps, rec_now_ns());
	for (uint32_t pid = first; pid < first + n; pid++)
		rec_procs__exited(ps, pid);
	split_empty(ps);
	rec_procs__pending(ps, 0, &out);
	rec_procs__written(ps, 0);
	rec_procs__split_done(ps);
	rec_procs__retire(ps);
}

/* 20,000 processes, 50 an interval, pids used again: entries go one interval after exit. */
static void test_churn(struct rec_procs *ps, uint32_t parent)
{
	struct rec_procs_stats st;
	size_t warm = 0, end;

	for (uint32_t i = 0; i < 400; i++) {
		churn_interval(ps, parent, 5000000 + (i % 100) * 50, 50);
		if (i == 49)
			warm = mallinfo2().uordblks;
	}
	end = mallinfo2().uordblks;
	rec_procs__stats(ps, &st);
	T_EQ_U64("procmaps.churn_followed", 1 + 400 * 50, st.entries);
	/* the last interval's 50 wait for the next retire; the test process stays */
	T_EQ_U64("procmaps.churn_retired", 399 * 50, st.retired);
	T_EQ_U64("procmaps.churn_held", 1 + 50, st.held);
	/* no array or tree growing with the processes seen (ASan's allocator reports 0 here) */
	T_CHECK("procmaps.churn_memory_flat", end <= warm + 16384,
		"%zu bytes in use after 2,500 processes, %zu after 20,000", warm, end);
}

int main(void)
{
	struct rec_procs *ps = rec_procs__new(NULL);
	uint32_t pid = getpid();
	struct cap_mapping m;
	char buf[512];
	uint64_t t;

	/* this process, read from /proc now: its records from here on change its mappings */
	rec_procs__ensure(ps, pid, "rec_procmaps");
	layout(ps, pid, buf, sizeof(buf));
	t = rec_now_ns();

	m = anon(0x20000000, 0x20010000, 0);
	rec_procs__mapped(ps, pid, &m, t + 1);
	m = anon(0x20004000, 0x20006000, 0x100);	/* inside: splits the first */
	rec_procs__mapped(ps, pid, &m, t + 2);
	check_layout(ps, pid, "procmaps.split_sorted",
		     "20000000-20004000@0 20004000-20006000@100 20006000-20010000@6000");

	m = anon(0x20003000, 0x20007000, 0x200);	/* over the middle and both ends */
	rec_procs__mapped(ps, pid, &m, t + 3);
	check_layout(ps, pid, "procmaps.overlap_trimmed",
		     "20000000-20003000@0 20003000-20007000@200 20007000-20010000@7000");

	m = anon(0x1ffff000, 0x20011000, 0x300);	/* covers them all */
	rec_procs__mapped(ps, pid, &m, t + 4);
	check_layout(ps, pid, "procmaps.covered", "1ffff000-20011000@300");

	m = anon(0x30000000, 0x30001000, 0);	/* made before the /proc read: in it already */
	rec_procs__mapped(ps, pid, &m, t - 1000000000ull);
	check_layout(ps, pid, "procmaps.older_than_read", "");

	rec_procs__exec(ps, pid, "new", t + 10);	/* the old image goes */
	m = anon(0x40000000, 0x40001000, 0);
	rec_procs__mapped(ps, pid, &m, t + 11);
	m = anon(0x50000000, 0x50001000, 0);	/* of the old image, read late */
	rec_procs__mapped(ps, pid, &m, t + 9);
	check_layout(ps, pid, "procmaps.exec", "40000000-40001000@0");
	test_split(ps, pid, t);
	test_exec_after_split(ps, pid, t);
	test_churn(ps, pid);

	rec_procs__free(ps);
	T_EXIT();
}
