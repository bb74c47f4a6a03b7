// SPDX-License-Identifier: MIT
/*
 * mkbig.c: a large synthetic capture for measuring stkreport (--sql loading, --pprof): ROWS
 * sample rows over intervals of 10,000 rows, 500 processes mapping tests/golden/elf/golden.elf,
 * 256 kernel and 256 user stacks per interval (8 to 23 frames, addresses that vary between
 * intervals so that deduplication has work to do). Deterministic: the same ROWS give the same
 * bytes.
 *
 * Usage: mkbig ROWS GOLDEN_ELF OUT.stk
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stk/capture.h>

#include "stk/symbolize.h"
#include "elfmap.h"

#define NPROCS 500u
#define NSTACKS 256u
#define ROWS_PER_INTERVAL 10000u
#define MAXDEPTH 24u
#define SEC 1000000000ull
#define MONO0 (1000 * SEC)
#define REAL0 1767322800000000000ull

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "mkbig: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void put(struct cap_writer *w, const char *path, const struct cap_record *rec)
{
	int err = cap_writer__put(w, rec);

	if (err)
		die(path, err);
}

static const uint64_t kfuncs[] = {
	0xffffffff81001000ull, 0xffffffff81001200ull, 0xffffffff81002000ull,
	0xffffffff81002100ull, 0xffffffff81003000ull, 0xffffffff81004000ull,
};

static void put_header(struct cap_writer *w, const char *path, const struct sym_elf *e,
		       uint64_t text)
{
	struct cap_kv kv[] = {
		{ "host", "big-host" }, { "kernel", "6.1.0-big" }, { "arch", "x86_64" },
		{ "ncpus", "4" }, { "mode", "profile" }, { "freq_hz", "49" },
		{ "interval_s", "1" }, { "stacks", "kernel,user" }, { "clock", "monotonic" },
		{ "clock.mono_ns", "1000000000000" }, { "clock.real_ns", "1767322800000000000" },
		{ "start.mono_ns", "1000000000000" },
	};
	struct cap_probe probe = { 0, CAP_PROBE_SAMPLE, 4, "profile" };
	struct cap_ksym ksyms[] = {
		{ kfuncs[0], "do_syscall_64", NULL }, { kfuncs[1], "entry_SYSCALL_64", NULL },
		{ kfuncs[2], "__x64_sys_getppid", NULL }, { kfuncs[3], "vfs_read", NULL },
		{ kfuncs[4], "ksys_read", NULL }, { kfuncs[5], "do_idle", NULL },
	};
	static struct cap_process procs[NPROCS];
	static struct cap_mapping map;
	static char comms[NPROCS][16];
	struct cap_record rec = { .type = CAP_CHUNK_META };
	uint32_t i;

	rec.meta = (struct cap_meta){ sizeof(kv) / sizeof(kv[0]), kv, 1, &probe };
	put(w, path, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_KSYMS };
	rec.ksyms = (struct cap_ksyms){ 0, sizeof(ksyms) / sizeof(ksyms[0]), ksyms };
	put(w, path, &rec);
	/* the text segment of golden.elf (holding its first function), at its link address */
	elfmap_segment(e, text, 0, &map);
	map.kind = CAP_MAP_FILE;
	map.build_id_len = e->build_id_len;
	memcpy(map.build_id, e->build_id, e->build_id_len);
	map.path = "/golden.elf";
	for (i = 0; i < NPROCS; i++) {
		snprintf(comms[i], sizeof(comms[i]), "worker-%u", i % 50);
		procs[i] = (struct cap_process){ 1000 + i, 0, 5000 + i, comms[i], "/golden.elf", 1,
						 &map };
	}
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ NPROCS, procs };
	put(w, path, &rec);
}

/* Function symbols of the object (addresses to put in user stacks). */
static uint32_t functions(const struct sym_elf *e, uint64_t *addrs, uint32_t max)
{
	uint32_t i, n = 0;

	for (i = 0; i < e->nsyms && n < max; i++)
		if (e->syms[i].size >= 8)
			addrs[n++] = e->syms[i].addr;
	return n;
}

static void put_interval(struct cap_writer *w, const char *path, uint32_t seq, uint32_t nrows,
			 const uint64_t *ufuncs, uint32_t nufuncs)
{
	static uint64_t ips[2 * NSTACKS][MAXDEPTH];
	static struct cap_stack ks[NSTACKS], us[NSTACKS];
	static struct cap_row rows[ROWS_PER_INTERVAL];
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };
	uint32_t i, j;

	for (i = 0; i < NSTACKS; i++) {
		/* a quarter of the stacks change every interval, the rest repeat */
		uint64_t salt = i < NSTACKS / 4 ? seq : 0;

		ks[i].nips = 8 + (i % 16);
		us[i].nips = 8 + ((i * 7) % 16);
		ks[i].ips = ips[i];
		us[i].ips = ips[NSTACKS + i];
		for (j = 0; j < ks[i].nips; j++)
			ks[i].ips[j] = kfuncs[(i + j) % 6] + 1 + ((i * 31 + j * 7 + salt) % 64);
		for (j = 0; j < us[i].nips; j++)
			us[i].ips[j] = ufuncs[(i * 3 + j) % nufuncs] + 1 + ((i + j + salt) % 4);
	}
	for (i = 0; i < nrows; i++) {
		uint64_t r = next();
		uint32_t pid = 1000 + r % NPROCS;

		rows[i] = (struct cap_row){ 0 };
		rows[i].pid = pid;
		rows[i].tid = pid + ((r >> 20) % 4) * 10000;
		snprintf(rows[i].comm, sizeof(rows[i].comm), "worker-%u", (pid - 1000) % 50);
		rows[i].kstack = (r >> 8) % 3 ? 1 + (r >> 24) % NSTACKS : CAP_NO_STACK;
		rows[i].ustack = 1 + (r >> 40) % NSTACKS;
		rows[i].count = 1 + (r >> 50) % 5;
	}
	rec.interval = (struct cap_interval){ seq, MONO0 + seq * SEC, MONO0 + (seq + 1) * SEC,
					      NSTACKS, NSTACKS, nrows, ks, us, rows };
	put(w, path, &rec);
}

int main(int argc, char **argv)
{
	uint64_t ufuncs[256];
	struct cap_record end = { .type = CAP_CHUNK_END };
	struct cap_writer *w;
	struct sym_elf *e;
	unsigned long rows;
	uint32_t nufuncs, seq = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: mkbig ROWS GOLDEN_ELF OUT.stk\n");
		return 2;
	}
	rows = strtoul(argv[1], NULL, 10);
	e = sym_elf__open(argv[2]);
	if (!e)
		die(argv[2], errno);
	nufuncs = functions(e, ufuncs, 256);
	if (!nufuncs)
		die(argv[2], ENOENT);
	w = cap_writer__open(argv[3]);
	if (!w)
		die(argv[3], errno);
	put_header(w, argv[3], e, ufuncs[0]);
	while (rows) {
		uint32_t n = rows > ROWS_PER_INTERVAL ? ROWS_PER_INTERVAL : rows;

		put_interval(w, argv[3], seq++, n, ufuncs, nufuncs);
		rows -= n;
	}
	end.end = (struct cap_end){ seq, MONO0 + seq * SEC, 0 };
	put(w, argv[3], &end);
	cap_writer__close(w);
	sym_elf__close(e);
	return 0;
}
