// SPDX-License-Identifier: MIT
/*
 * mkgolden.c: writes the synthetic captures of tests/golden (input.stk of each case) with the
 * format/ writer. Nothing comes from this host: kallsyms are a handful of made-up kernel
 * symbols, and user mappings point at the committed tests/golden/elf/golden{,-pie}.elf (and
 * plt{,-stripped}.elf), whose symbol addresses and build-ids are read here (so the captures
 * always match the committed binaries; reports reach them with --symfs tests/golden/elf).
 *
 * Usage: mkgolden GOLDEN_DIR     (writes GOLDEN_DIR/CASE/input.stk; reads GOLDEN_DIR/elf/)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <stk/capture.h>
#include <stk/elfobj.h>

#include "stk/symbolize.h"
#include "elfmap.h"

#define PIE_BIAS 0x555555554000ull
#define SEC 1000000000ull
#define MONO0 (1000 * SEC)	/* CLOCK_MONOTONIC at the start of every capture */
#define REAL0 1767322800000000000ull	/* 2026-01-02 03:00:00 UTC */

struct elf_obj {
	struct sym_elf *e;
	uint64_t bias;
	const char *path;	/* as recorded in the capture */
};

static const char *dir;

static void die(const char *what, int err)
{
	fprintf(stderr, "mkgolden: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void load_elf(struct elf_obj *o, const char *file, const char *recorded, uint64_t bias)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/elf/%s", dir, file);
	o->e = sym_elf__open(path);
	if (!o->e)
		die(path, errno);
	o->bias = bias;
	o->path = recorded;
}

static uint64_t sym(const struct elf_obj *o, const char *name)
{
	uint32_t i;

	for (i = 0; i < o->e->nsyms; i++)
		if (!strcmp(o->e->syms[i].name, name))
			return o->e->syms[i].addr;
	fprintf(stderr, "mkgolden: no symbol %s\n", name);
	exit(1);
}

/* Run-time address of NAME+off in the object. */
static uint64_t at(const struct elf_obj *o, const char *name, uint64_t off)
{
	return o->bias + sym(o, name) + off;
}

/* The mapping of the object's segment holding addr, as /proc/PID/maps would show it. */
static struct cap_mapping text_map_at(const struct elf_obj *o, uint64_t addr)
{
	struct cap_mapping m = { 0 };

	elfmap_segment(o->e, addr, o->bias, &m);
	m.dev = 0x801;
	m.inode = 4242;
	m.kind = CAP_MAP_FILE;
	m.build_id_len = o->e->build_id_len;
	memcpy(m.build_id, o->e->build_id, o->e->build_id_len);
	m.path = (char *)o->path;
	return m;
}

/* The executable mapping of the object: the one holding main. */
static struct cap_mapping text_map(const struct elf_obj *o)
{
	return text_map_at(o, sym(o, "main"));
}

static struct cap_mapping other_map(uint64_t start, uint64_t end, uint32_t kind, const char *path,
				    uint8_t bid_byte)
{
	struct cap_mapping m = { .start = start, .end = end, .kind = kind, .path = (char *)path };

	if (bid_byte) {
		m.build_id_len = 20;
		memset(m.build_id, bid_byte, 20);
	}
	return m;
}

/* ---- writing ------------------------------------------------------------------------------- */

struct out {
	struct cap_writer *w;
	char path[512];
	uint64_t interval_off[8];	/* file offset of each interval chunk */
	uint64_t interval_len[8];
	uint32_t nintervals;
	uint64_t events;
	uint64_t real_ns;	/* CLOCK_REALTIME at the start of the capture; 0: REAL0 */
};

static void put(struct out *o, struct cap_record *rec)
{
	uint64_t before = cap_writer__size(o->w);
	int err = cap_writer__put(o->w, rec);

	if (err)
		die(o->path, err);
	if (rec->type == CAP_CHUNK_INTERVAL && o->nintervals < 8) {
		uint32_t i;

		o->interval_off[o->nintervals] = before;
		o->interval_len[o->nintervals] = cap_writer__size(o->w) - before;
		o->nintervals++;
		for (i = 0; i < rec->interval.nrows; i++)
			o->events += rec->interval.rows[i].count;
	}
}

/* Start writing GOLDEN_DIR/name/file. */
static void open_case_file(struct out *o, const char *name, const char *file)
{
	char d[256];

	snprintf(d, sizeof(d), "%s/%s", dir, name);
	mkdir(d, 0755);
	snprintf(o->path, sizeof(o->path), "%s/%s", d, file);
	memset(o->interval_off, 0, sizeof(o->interval_off));
	o->nintervals = 0;
	o->events = 0;
	o->w = cap_writer__open(o->path);
	if (!o->w)
		die(o->path, errno);
}

static void open_case(struct out *o, const char *name)
{
	open_case_file(o, name, "input.stk");
}

static void close_case(struct out *o, bool with_end)
{
	if (with_end) {
		struct cap_record end = { .type = CAP_CHUNK_END };

		end.end.nintervals = o->nintervals;
		end.end.end_ns = MONO0 + o->nintervals * SEC + SEC / 2;
		end.end.events = o->events;
		put(o, &end);
	}
	cap_writer__close(o->w);
	o->w = NULL;
}

/*
 * Metadata of a capture from host running kernel, then nextra more keys; freq_hz NULL for none
 * (it then is not written at all).
 */
static void put_meta_kv(struct out *o, const char *mode, struct cap_probe *probes,
			uint32_t nprobes, const char *host, const char *kernel, const char *freq_hz,
			const struct cap_kv *extra, uint32_t nextra)
{
	static char mono[32], real[32], start[32];
	struct cap_kv kv[32] = {
		{ "host", (char *)host },
		{ "kernel", (char *)kernel },
		{ "arch", "x86_64" },
		{ "ncpus", "4" },
		{ "boot_id", "00000000-0000-0000-0000-000000000000" },
		{ "tool_version", "0.1.0" },
		{ "argv", "stkrec golden" },
		{ "mode", (char *)mode },
		{ "interval_s", "1" },
		{ "stacks", "kernel,user" },
		{ "clock", "monotonic" },
		{ "clock.mono_ns", mono },
		{ "clock.real_ns", real },
		{ "start.mono_ns", start },
		{ "freq_hz", (char *)freq_hz },	/* last fixed key: left out when NULL */
	};
	struct cap_record rec = { .type = CAP_CHUNK_META };
	uint32_t n = 15 - !freq_hz;	/* the keys above */

	snprintf(mono, sizeof(mono), "%llu", MONO0);
	snprintf(real, sizeof(real), "%llu", o->real_ns ? (unsigned long long)o->real_ns : REAL0);
	snprintf(start, sizeof(start), "%llu", MONO0);
	for (uint32_t i = 0; i < nextra && n < 32; i++)
		kv[n++] = extra[i];
	rec.meta.nkv = n;
	rec.meta.kv = kv;
	rec.meta.nprobes = nprobes;
	rec.meta.probes = probes;
	put(o, &rec);
}

static void put_meta_host(struct out *o, const char *mode, struct cap_probe *probes,
			  uint32_t nprobes, const char *host, const char *freq_hz)
{
	put_meta_kv(o, mode, probes, nprobes, host, "6.1.0-golden", freq_hz, NULL, 0);
}

static void put_meta(struct out *o, const char *mode, struct cap_probe *probes, uint32_t nprobes)
{
	put_meta_host(o, mode, probes, nprobes, "golden-host", NULL);
}

/* Made-up kernel: addresses are arbitrary but fixed. */
#define K_STEXT 0xffffffff81000000ull
#define K_DO_SYSCALL 0xffffffff81001000ull
#define K_ENTRY 0xffffffff81001200ull
#define K_GETPPID 0xffffffff81002000ull
#define K_VFS_READ 0xffffffff81002100ull
#define K_KSYS_READ 0xffffffff81003000ull
#define K_DO_IDLE 0xffffffff81004000ull
#define K_CPU_STARTUP 0xffffffff81004400ull
#define K_EXT4_READ 0xffffffffc0001000ull
#define K_EXT4_END 0xffffffffc0002000ull

static void put_ksyms(struct out *o, bool hidden)
{
	struct cap_ksym syms[] = {
		{ K_STEXT, "_stext", NULL },
		{ K_DO_SYSCALL, "do_syscall_64", NULL },
		{ K_ENTRY, "entry_SYSCALL_64_after_hwframe", NULL },
		{ K_GETPPID, "__x64_sys_getppid", NULL },
		{ K_VFS_READ, "vfs_read", NULL },
		{ K_KSYS_READ, "ksys_read", NULL },
		{ K_DO_IDLE, "do_idle", NULL },
		{ K_CPU_STARTUP, "cpu_startup_entry", NULL },
		{ K_EXT4_READ, "ext4_file_read_iter", "ext4" },
		{ K_EXT4_END, "ext4_llseek", "ext4" },
	};
	struct cap_record rec = { .type = CAP_CHUNK_KSYMS };
	uint32_t i;

	if (hidden) {
		for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
			syms[i].addr = 0;
		rec.ksyms.flags = CAP_KSYMS_F_HIDDEN;
	}
	rec.ksyms.count = sizeof(syms) / sizeof(syms[0]);
	rec.ksyms.syms = syms;
	put(o, &rec);
}

static void put_procs(struct out *o, struct cap_process *procs, uint32_t n)
{
	struct cap_record rec = { .type = CAP_CHUNK_PROCS };

	rec.procs.count = n;
	rec.procs.procs = procs;
	put(o, &rec);
}

static void put_losses(struct out *o, uint32_t seq, uint32_t kind, uint64_t n, uint32_t kind2,
		       uint64_t n2)
{
	struct cap_record rec = { .type = CAP_CHUNK_LOSSES };

	rec.losses.interval_seq = seq;
	rec.losses.counts[kind] += n;
	rec.losses.counts[kind2] += n2;
	put(o, &rec);
}

/* An interval under construction. */
struct ivb {
	struct cap_stack ks[16], us[32];
	uint64_t ips[64][16];
	uint32_t nips_used;
	struct cap_row rows[32];
	struct cap_interval iv;
};

static void iv_begin(struct ivb *b, uint32_t seq)
{
	memset(b, 0, sizeof(*b));
	b->iv.seq = seq;
	b->iv.start_ns = MONO0 + seq * SEC;
	b->iv.end_ns = MONO0 + (seq + 1) * SEC;
	b->iv.kstacks = b->ks;
	b->iv.ustacks = b->us;
	b->iv.rows = b->rows;
}

/* Add a stack (leaf first, 0-terminated list of addresses); returns its 1-based reference. */
static uint32_t iv_stack(struct ivb *b, bool kernel, const uint64_t *ips)
{
	struct cap_stack *s = kernel ? &b->ks[b->iv.nkstacks++] : &b->us[b->iv.nustacks++];
	uint64_t *dst = b->ips[b->nips_used++];

	while (ips[s->nips]) {
		dst[s->nips] = ips[s->nips];
		s->nips++;
	}
	s->ips = dst;
	return kernel ? b->iv.nkstacks : b->iv.nustacks;
}

static void iv_row(struct ivb *b, uint32_t probe, uint32_t pid, const char *comm, uint32_t kstack,
		   uint32_t ustack, uint32_t flags, uint64_t count)
{
	struct cap_row *r = &b->rows[b->iv.nrows++];

	r->probe = probe;
	r->pid = pid;
	r->tid = pid;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->kstack = kstack;
	r->ustack = ustack;
	r->flags = flags;
	r->count = count;
}

static void iv_put(struct out *o, struct ivb *b)
{
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };

	rec.interval = b->iv;
	put(o, &rec);
}

/* ---- the cases ----------------------------------------------------------------------------- */

static struct elf_obj golden, pie, plt, plt_stripped;

/* Processes shared by the count, truncated and corrupt captures. */
static void put_count_procs(struct out *o)
{
	static struct cap_mapping m100[2], m200[1];
	struct cap_process procs[] = {
		{ 100, 0, 5000, "golden", "/golden.elf", 2, m100 },
		{ 200, 0, 6000, "golden-pie", "/golden-pie.elf", 1, m200 },
		{ 300, CAP_PROC_F_NO_MAPS, 7000, "gone", "", 0, NULL },
	};

	m100[0] = text_map(&golden);
	m100[1] = other_map(0x7f0000001000ull, 0x7f0000002000ull, CAP_MAP_FILE,
			    "/lib/libmissing.so", 0xab);
	m200[0] = text_map(&pie);
	put_procs(o, procs, sizeof(procs) / sizeof(procs[0]));
}

static void count_interval(struct out *o, uint32_t seq)
{
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t k_read[] = { K_EXT4_READ + 0x8, K_VFS_READ + 0x20, K_KSYS_READ + 0x1c,
				    K_DO_SYSCALL + 0x60, K_ENTRY + 0x44, 0 };
	/* user stacks: leaf, then return addresses (the byte after a call) */
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	const uint64_t u_chain_pie[] = { at(&pie, "stk_leaf", 4), at(&pie, "stk_mid", 0x10),
					 at(&pie, "stk_top", 0x12), at(&pie, "main", 0x1a), 0 };
	const uint64_t u_read[] = { at(&golden, "read_file", 0x30),
				    at(&golden, "parse_config", 0x11),
				    at(&golden, "main", 0x37), 0 };
	const uint64_t u_gone[] = { 0x401150, 0x401170, 0 };
	const uint64_t u_odd[] = { 0x7f0000001234ull, 0x7ffff0000000ull, at(&golden, "main", 0x37),
				   0 };
	struct ivb b;
	uint32_t kg, kr, uc, ucp, ur, ug, uo;

	iv_begin(&b, seq);
	kg = iv_stack(&b, true, k_getppid);
	kr = iv_stack(&b, true, k_read);
	uc = iv_stack(&b, false, u_chain);
	ucp = iv_stack(&b, false, u_chain_pie);
	ur = iv_stack(&b, false, u_read);
	ug = iv_stack(&b, false, u_gone);
	uo = iv_stack(&b, false, u_odd);
	/* pid 100 and 200 show identical frames: one stack unless -P */
	iv_row(&b, 0, 100, "golden", kg, uc, 0, 5 + seq);
	iv_row(&b, 0, 200, "golden-pie", kg, ucp, 0, 4);
	iv_row(&b, 1, 100, "golden", kr, ur, 0, 3);
	iv_row(&b, 0, 300, "gone", kg, ug, 0, 2);
	iv_row(&b, 1, 100, "golden", kr, uo, 0, 1);
	/* equal counts, different stacks: the tie order must not depend on the file */
	iv_row(&b, 0, 100, "golden", 0, ur, 0, 3);
	if (seq == 1)
		iv_row(&b, 0, 200, "golden-pie", kg, 0, 0, 6);
	iv_put(o, &b);
}

static void case_count(struct out *o, const char *name, bool with_end)
{
	struct cap_probe probes[] = {
		{ 0, CAP_PROBE_TRACEPOINT, 1, "t:syscalls:sys_enter_getppid" },
		{ 1, CAP_PROBE_UPROBE, 1, "/golden.elf:read_file" },
	};

	open_case(o, name);
	put_meta(o, "count", probes, 2);
	put_ksyms(o, false);
	put_count_procs(o);
	count_interval(o, 0);
	put_losses(o, 0, CAP_LOSS_KSTACK_COLLISION, 2, CAP_LOSS_USTACK_MISSING, 1);
	count_interval(o, 1);
	close_case(o, with_end);
}

/*
 * Start a sampling capture of the burner (pid 100) and its PIE twin (pid 200), shared by the
 * profile and merge cases: metadata from host (freq_hz as in put_meta_host()), kallsyms, the two
 * processes.
 */
static void open_burner_case(struct out *o, const char *name, const char *file, const char *host,
			     const char *freq_hz)
{
	static struct cap_mapping m100[1], m200[1];
	struct cap_process procs[] = {
		{ 100, 0, 5000, "burner", "/golden.elf", 1, m100 },
		{ 200, 0, 6000, "burner-pie", "/golden-pie.elf", 1, m200 },
	};
	struct cap_probe probes[] = { { 0, CAP_PROBE_SAMPLE, 4, "profile" } };

	m100[0] = text_map(&golden);
	m200[0] = text_map(&pie);
	open_case_file(o, name, file);
	put_meta_host(o, "profile", probes, 1, host, freq_hz);
	put_ksyms(o, false);
	put_procs(o, procs, 2);
}

static void case_profile(struct out *o)
{
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t k_idle[] = { K_DO_IDLE + 0x5, K_CPU_STARTUP + 0x20, K_STEXT + 0x30, 0 };
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	const uint64_t u_chain_pie[] = { at(&pie, "stk_leaf", 9), at(&pie, "stk_mid", 0x10),
					 at(&pie, "stk_top", 0x12), at(&pie, "main", 0x1a), 0 };
	const uint64_t u_mid[] = { at(&golden, "stk_mid", 0x3), at(&golden, "stk_top", 0x12),
				   at(&golden, "main", 0x1a), 0 };
	struct ivb b;
	uint32_t kg, ki, uc, ucp, um;

	open_burner_case(o, "profile", "input.stk", "golden-host", NULL);
	iv_begin(&b, 0);
	kg = iv_stack(&b, true, k_getppid);
	ki = iv_stack(&b, true, k_idle);
	uc = iv_stack(&b, false, u_chain);
	ucp = iv_stack(&b, false, u_chain_pie);
	um = iv_stack(&b, false, u_mid);
	iv_row(&b, 0, 100, "burner", 0, uc, 0, 40);	/* user mode: no kernel stack */
	iv_row(&b, 0, 100, "burner", 0, um, 0, 9);
	iv_row(&b, 0, 200, "burner-pie", 0, ucp, 0, 40);	/* same frames, other pid */
	iv_row(&b, 0, 100, "burner", kg, uc, 0, 6);	/* in a syscall */
	iv_row(&b, 0, 0, "swapper/0", ki, 0, 0, 25);	/* idle: kernel only */
	iv_row(&b, 0, 100, "burner", kg, 0, CAP_ROW_F_USTACK_LOST, 2);
	iv_row(&b, 0, 200, "burner-pie", 0, ucp, CAP_ROW_F_KSTACK_LOST, 1);
	iv_put(o, &b);
	put_losses(o, 0, CAP_LOSS_USTACK_COLLISION, 2, CAP_LOSS_KSTACK_COLLISION, 1);
	close_case(o, true);
}

static void put_ksyms_add(struct out *o, struct cap_ksym *syms, uint32_t n)
{
	struct cap_record rec = { .type = CAP_CHUNK_KSYMS_ADD, .ksyms = { 0, n, syms } };

	put(o, &rec);
}

/*
 * Kernel symbols as stkrec 2.0 writes them (format.md 4.10): KSYMS_ADD records with sizes before
 * the intervals that need them. Between the two intervals ext4 is gone and a BPF program sits
 * where ext4_file_read_iter was: interval 0 keeps the old name, interval 1 gets the new one. An
 * address past its symbol's size stays unnamed.
 */
static void case_ksyms(struct out *o)
{
	static struct cap_mapping m100[1];
	struct cap_process procs[] = { { 100, 0, 5000, "burner", "/golden.elf", 1, m100 } };
	struct cap_probe probes[] = { { 0, CAP_PROBE_SAMPLE, 4, "profile" } };
	struct cap_ksym first[] = {
		{ K_DO_SYSCALL, "do_syscall_64", NULL, K_ENTRY - K_DO_SYSCALL },
		{ K_ENTRY, "entry_SYSCALL_64_after_hwframe", NULL, 0x100 },
		{ K_GETPPID, "__x64_sys_getppid", NULL, 0x40 },
		{ K_EXT4_READ, "ext4_file_read_iter", "ext4", K_EXT4_END - K_EXT4_READ },
	};
	struct cap_ksym second[] = {
		{ K_EXT4_READ, "bpf_prog_6deef7357e7b4530_on_sample", "bpf", 0x100 },
	};
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t k_past[] = { K_GETPPID + 0x50, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t k_ext4[] = { K_EXT4_READ + 0x20, K_DO_SYSCALL + 0x80, K_ENTRY + 0x44, 0 };
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	struct ivb b;
	uint32_t kg, kp, ke, uc;

	m100[0] = text_map(&golden);
	open_case(o, "ksyms");
	put_meta(o, "profile", probes, 1);
	put_procs(o, procs, 1);
	put_ksyms_add(o, first, 4);
	iv_begin(&b, 0);
	kg = iv_stack(&b, true, k_getppid);
	kp = iv_stack(&b, true, k_past);
	ke = iv_stack(&b, true, k_ext4);
	uc = iv_stack(&b, false, u_chain);
	iv_row(&b, 0, 100, "burner", kg, uc, 0, 6);
	iv_row(&b, 0, 100, "burner", kp, uc, 0, 2);
	iv_row(&b, 0, 100, "burner", ke, uc, 0, 3);
	iv_put(o, &b);
	put_ksyms_add(o, second, 1);
	iv_begin(&b, 1);
	kg = iv_stack(&b, true, k_getppid);
	ke = iv_stack(&b, true, k_ext4);
	uc = iv_stack(&b, false, u_chain);
	iv_row(&b, 0, 100, "burner", ke, uc, 0, 4);
	iv_row(&b, 0, 100, "burner", kg, uc, 0, 1);
	iv_put(o, &b);
	close_case(o, true);
}

/* Every reason a frame stays unnamed, and hidden kallsyms. */
static void case_unknown(struct out *o)
{
	static struct cap_mapping m100[4], m400[1];
	struct cap_process procs[] = {
		{ 100, 0, 5000, "odd", "/golden.elf", 4, m100 },
		{ 300, CAP_PROC_F_NO_MAPS, 7000, "gone", "", 0, NULL },
		{ 400, 0, 8000, "replaced", "/golden.elf", 1, m400 },
	};
	struct cap_probe probes[] = { { 0, CAP_PROBE_UPROBE, 1, "/golden.elf:stk_leaf" } };
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, 0 };
	const uint64_t u_all[] = {
		at(&golden, "stk_leaf", 0),	/* named */
		at(&golden, "_start", 0x25),	/* in the text mapping, in a gap between symbols */
		0x7f0000001234ull,		/* object not found */
		0x7fff00000800ull,		/* vdso */
		0x7ffff0000000ull,		/* outside any mapping */
		at(&golden, "main", 0x1a),
		0,
	};
	const uint64_t u_gone[] = { 0x401150, 0x401170, 0 };
	const uint64_t u_replaced[] = { at(&golden, "stk_leaf", 0), at(&golden, "main", 0x1a), 0 };
	struct ivb b;
	uint32_t kg, ua, ug, ur;

	m100[0] = text_map(&golden);
	m100[1] = other_map(0x7f0000001000ull, 0x7f0000002000ull, CAP_MAP_FILE,
			    "/lib/libmissing.so", 0xab);
	m100[2] = other_map(0x7fff00000000ull, 0x7fff00002000ull, CAP_MAP_VDSO, "[vdso]", 0);
	m100[3] = other_map(0x7fff10000000ull, 0x7fff10001000ull, CAP_MAP_ANON_EXEC, "", 0);
	/* same path as pid 100's binary, another build-id: the file on disk must not be used */
	m400[0] = text_map(&golden);
	memset(m400[0].build_id, 0x5a, m400[0].build_id_len);
	open_case(o, "unknown");
	put_meta(o, "count", probes, 1);
	put_ksyms(o, true);
	put_procs(o, procs, 3);
	iv_begin(&b, 0);
	kg = iv_stack(&b, true, k_getppid);
	ua = iv_stack(&b, false, u_all);
	ug = iv_stack(&b, false, u_gone);
	ur = iv_stack(&b, false, u_replaced);
	iv_row(&b, 0, 100, "odd", kg, ua, 0, 3);
	iv_row(&b, 0, 300, "gone", 0, ug, 0, 2);
	iv_row(&b, 0, 400, "replaced", 0, ur, 0, 5);
	iv_row(&b, 0, 500, "noproc", 0, ur, 0, 1);	/* no process record at all */
	iv_put(o, &b);
	close_case(o, true);
}

/*
 * Paths a hostile capture may name (tests/golden/paths, tests/check/paths.sh): the kernel's file
 * systems, a relative path, ".." and "//" in a path, and a path a --symfs symlink leads out of.
 * stkreport must open none of them (the normal object beside them still gets its names).
 */
static void case_paths(struct out *o)
{
	static const char *const bad[] = {
		"/proc/self/mem", "/dev/zero", "relative/lib.so", "/usr/lib/../../etc/passwd",
		"/usr//lib/x.so", "/escape/passwd",
	};
	enum { NBAD = sizeof(bad) / sizeof(bad[0]) };
	static struct cap_mapping maps[1 + NBAD];
	struct cap_process procs[] = { { 100, 0, 5000, "paths", "/golden.elf", 1 + NBAD, maps } };
	struct cap_probe probes[] = { { 0, CAP_PROBE_UPROBE, 1, "/golden.elf:stk_leaf" } };
	uint64_t ips[2 + NBAD + 1];
	struct ivb b;
	uint32_t u, i;

	maps[0] = text_map(&golden);
	ips[0] = at(&golden, "stk_leaf", 0);
	for (i = 0; i < NBAD; i++) {
		uint64_t start = 0x7f0000000000ull + ((uint64_t)i << 20);

		maps[1 + i] = other_map(start, start + 0x1000, CAP_MAP_FILE, bad[i], 0xb0 + i);
		ips[1 + i] = start + 0x10;
	}
	ips[1 + NBAD] = at(&golden, "main", 0x1a);
	ips[2 + NBAD] = 0;
	open_case(o, "paths");
	put_meta(o, "count", probes, 1);
	put_ksyms(o, false);
	put_procs(o, procs, 1);
	iv_begin(&b, 0);
	u = iv_stack(&b, false, ips);
	iv_row(&b, 0, 100, "paths", 0, u, 0, 7);
	iv_put(o, &b);
	close_case(o, true);
}

/*
 * The OBJECTS record stkrec writes for the file (record/proc/objects.c): its segments, and its
 * .symtab, else its .dynsym, with its PLT stubs, one symbol per address.
 */
static void put_object_of(struct out *o, const struct elf_obj *eo, const char *file)
{
	struct elfobj_syms l = { 0 };
	struct cap_object obj = { .path = (char *)eo->path, .debuglink = "",
				  .build_id_len = eo->e->build_id_len };
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS, .objects = { 1, &obj } };
	struct cap_segment segs[8];
	struct cap_symbol *syms;
	char path[512];
	int fd;
	Elf *e;

	snprintf(path, sizeof(path), "%s/elf/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!e)
		die(path, errno);
	obj.flags = elfobj_syms_add(&l, e, SHT_SYMTAB, 0) > 0 ? CAP_OBJ_F_SYMTAB : CAP_OBJ_F_DYNSYM;
	if (!l.n)
		elfobj_syms_add(&l, e, SHT_DYNSYM, 0);
	if (elfobj_syms_add_plt(&l, e) < 0)
		die(path, ENOMEM);
	elfobj_syms_unique(&l);
	syms = calloc(l.n + 1, sizeof(*syms));
	if (!syms)
		die(path, ENOMEM);
	for (uint32_t i = 0; i < l.n; i++)
		syms[i] = (struct cap_symbol){ l.v[i].addr, l.v[i].c.size, (char *)l.v[i].c.name };
	obj.nsyms = l.n;
	obj.syms = syms;
	for (uint32_t i = 0; i < eo->e->nsegs && i < 8; i++, obj.nsegs++)
		segs[i] = (struct cap_segment){ eo->e->segs[i].offset, eo->e->segs[i].vaddr,
						eo->e->segs[i].filesz, eo->e->segs[i].memsz };
	obj.segs = segs;
	memcpy(obj.build_id, eo->e->build_id, obj.build_id_len);
	put(o, &rec);
	free(syms);
	elfobj_syms_clear(&l);
	elf_end(e);
	close(fd);
}

/*
 * PLT stubs (tests/golden/plt, plt-embedded): leaves in each stub of plt.elf (.plt's lazy ones,
 * .plt.got's, .plt.sec's), in .plt's first entry (no function's: _init, sizeless before it, must
 * not name it) and in _init, called from main. plt: the stacks in plt.elf and in
 * plt-stripped.elf, named from the files (the one's .symtab, the other's .dynsym); embedded: in
 * plt-stripped.elf, named from the record stkrec writes for it (.dynsym and the stubs). The
 * two files have one build-id: a capture with the record would name both from it. Every stub
 * reads NAME@plt in each.
 */
static void case_plt(struct out *o, const char *name, bool embedded)
{
	static struct cap_mapping m100[1], m300[1];
	struct cap_process procs[] = {
		{ 100, 0, 5000, "plt", "/plt.elf", 1, m100 },
		{ 300, 0, 7000, "plt-stripped", "/plt-stripped.elf", 1, m300 },
	};
	struct cap_probe probes[] = { { 0, CAP_PROBE_SAMPLE, 4, "profile" } };
	/* leaves, one stack each: the stubs at 0x1030..0x109f, PLT0, _init */
	static const uint64_t leaves[] = { 0x1034, 0x1040, 0x1059, 0x1064, 0x1070, 0x1084, 0x109e,
					   0x1026, 0x1004 };
	const uint64_t ret_main = sym(&plt, "main") + 0xc;
	uint32_t first = embedded ? 1 : 0;
	struct ivb b;
	char comm[16];

	m100[0] = text_map(&plt);
	m300[0] = text_map_at(&plt_stripped, leaves[0]);
	open_case(o, name);
	put_meta_host(o, "profile", probes, 1, "golden-host", "99");
	put_ksyms(o, false);
	put_procs(o, procs + first, 2 - first);
	if (embedded)
		put_object_of(o, &plt_stripped, "plt-stripped.elf");
	iv_begin(&b, 0);
	for (uint32_t p = first; p < 2; p++) {
		const struct elf_obj *eo = p ? &plt_stripped : &plt;

		snprintf(comm, sizeof(comm), "%s", procs[p].comm);
		for (uint32_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
			const uint64_t ips[] = { eo->bias + leaves[i], eo->bias + ret_main, 0 };

			iv_row(&b, 0, procs[p].pid, comm, 0, iv_stack(&b, false, ips), 0, i + 1);
		}
	}
	iv_put(o, &b);
	close_case(o, true);
}

/* Row counts that add past 64 bits (tests/golden/saturated): totals held at UINT64_MAX. */
static void case_saturated(struct out *o)
{
	static struct cap_mapping maps[1];
	struct cap_process procs[] = { { 100, 0, 5000, "big", "/golden.elf", 1, maps } };
	struct cap_probe probes[] = { { 0, CAP_PROBE_UPROBE, 1, "/golden.elf:stk_leaf" } };
	const uint64_t leaf[] = { at(&golden, "stk_leaf", 0), at(&golden, "main", 0x1a), 0 };
	const uint64_t other[] = { at(&golden, "main", 0x1a), 0 };
	struct ivb b;
	uint32_t u, v;

	maps[0] = text_map(&golden);
	open_case(o, "saturated");
	put_meta(o, "count", probes, 1);
	put_ksyms(o, false);
	put_procs(o, procs, 1);
	iv_begin(&b, 0);
	u = iv_stack(&b, false, leaf);
	v = iv_stack(&b, false, other);
	iv_row(&b, 0, 100, "big", 0, u, 0, UINT64_MAX);
	iv_row(&b, 0, 100, "big", 0, u, 0, UINT64_MAX);
	iv_row(&b, 0, 100, "big", 0, v, 0, 5);
	iv_put(o, &b);
	close_case(o, true);
}

/*
 * Two hosts sampling the same program (tests/golden/merge): input.stk from web1 (2 intervals),
 * web2.stk from web2 (1 interval), and before.stk, web1 a day earlier (1 interval, other shares),
 * for --diff. Counts are chosen so that every total and share is exact.
 */
static void merge_capture(struct out *o, const char *file, const char *host, const char *freq,
			  int which)
{
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	const uint64_t u_read[] = { at(&golden, "read_file", 0x30),
				    at(&golden, "parse_config", 0x11),
				    at(&golden, "main", 0x37), 0 };
	const uint64_t u_chain_pie[] = { at(&pie, "stk_leaf", 9), at(&pie, "stk_mid", 0x10),
					 at(&pie, "stk_top", 0x12), at(&pie, "main", 0x1a), 0 };
	const uint64_t u_mid_pie[] = { at(&pie, "stk_mid", 0x3), at(&pie, "stk_top", 0x12),
				       at(&pie, "main", 0x1a), 0 };
	struct ivb b;
	uint32_t kg, uc, ur, ucp, ump;

	open_burner_case(o, "merge", file, host, freq);
	iv_begin(&b, 0);
	kg = iv_stack(&b, true, k_getppid);
	uc = iv_stack(&b, false, u_chain);
	ur = iv_stack(&b, false, u_read);
	ucp = iv_stack(&b, false, u_chain_pie);
	ump = iv_stack(&b, false, u_mid_pie);
	switch (which) {
	case 0:	/* web1, interval 0: 30 chain, 10 read */
		iv_row(&b, 0, 100, "burner", 0, uc, 0, 30);
		iv_row(&b, 0, 100, "burner", 0, ur, 0, 10);
		break;
	case 1:	/* web2: 50 chain (pie), 15 mid, 5 read in a syscall */
		iv_row(&b, 0, 200, "burner-pie", 0, ucp, 0, 50);
		iv_row(&b, 0, 200, "burner-pie", 0, ump, 0, 15);
		iv_row(&b, 0, 100, "burner", kg, ur, 0, 5);
		break;
	default:	/* before: 20 chain, 30 read */
		iv_row(&b, 0, 100, "burner", 0, uc, 0, 20);
		iv_row(&b, 0, 100, "burner", 0, ur, 0, 30);
	}
	iv_put(o, &b);
	if (which == 0) {	/* web1, interval 1: 20 chain, 5 chain in a syscall */
		iv_begin(&b, 1);
		kg = iv_stack(&b, true, k_getppid);
		uc = iv_stack(&b, false, u_chain);
		iv_row(&b, 0, 100, "burner", 0, uc, 0, 20);
		iv_row(&b, 0, 100, "burner", kg, uc, 0, 5);
		iv_put(o, &b);
	}
	close_case(o, true);
}

static void case_merge(struct out *o)
{
	merge_capture(o, "input.stk", "web1", "49", 0);
	merge_capture(o, "web2.stk", "web2", "49", 1);
	merge_capture(o, "before.stk", "web1", "49", 2);
}

/*
 * stkrec --offcpu (bcc offcputime; counts are microseconds): two threads of sleeper (pid 100,
 * tids 101 and 102) blocked in the same chain, which offcputime prints per thread; thread 101
 * also blocked from a second call site of the same functions (other addresses, the same
 * names), a stack of its own in bcc; and a lighter process (300) seen first, which must not
 * give a pprof profile its name.
 */
static void case_offcpu(struct out *o)
{
	static struct cap_mapping m100[1], m300[1];
	struct cap_process procs[] = {
		{ 300, 0, 4000, "other", "/golden-pie.elf", 1, m300 },
		{ 100, 0, 5000, "sleeperA", "/golden.elf", 1, m100 },
	};
	struct cap_probe probes[] = { { 0, CAP_PROBE_TRACEPOINT, 1, "offcpu:sched_switch" } };
	const struct cap_kv extra[] = { { "weight", "us" } };
	const uint64_t k_read[] = { K_EXT4_READ + 0x8, K_VFS_READ + 0x20, K_KSYS_READ + 0x1c,
				    K_DO_SYSCALL + 0x60, K_ENTRY + 0x44, 0 };
	const uint64_t u_read[] = { at(&golden, "read_file", 0x30),
				    at(&golden, "parse_config", 0x11), at(&golden, "main", 0x37), 0 };
	const uint64_t u_read2[] = { at(&golden, "read_file", 0x38),
				     at(&golden, "parse_config", 0x21), at(&golden, "main", 0x37), 0 };
	const uint64_t u_other[] = { at(&pie, "stk_leaf", 9), at(&pie, "stk_mid", 0x10),
				     at(&pie, "stk_top", 0x12), at(&pie, "main", 0x1a), 0 };
	struct ivb b;
	uint32_t kr, ur, ur2, uo;

	m100[0] = text_map(&golden);
	m300[0] = text_map(&pie);
	open_case(o, "offcpu");
	put_meta_kv(o, "offcpu", probes, 1, "golden-host", "6.1.0-golden", NULL, extra, 1);
	put_ksyms(o, false);
	put_procs(o, procs, 2);
	iv_begin(&b, 0);
	kr = iv_stack(&b, true, k_read);
	ur = iv_stack(&b, false, u_read);
	ur2 = iv_stack(&b, false, u_read2);
	uo = iv_stack(&b, false, u_other);
	iv_row(&b, 0, 300, "other", kr, uo, 0, 1200);
	iv_row(&b, 0, 100, "sleeperA", kr, ur, 0, 1002861);
	b.rows[1].tid = 101;
	iv_row(&b, 0, 100, "sleeperA", kr, ur, 0, 1001587);
	b.rows[2].tid = 102;
	iv_row(&b, 0, 100, "sleeperA", kr, ur2, 0, 50000);
	b.rows[3].tid = 101;
	iv_put(o, &b);
	close_case(o, true);
}

/*
 * stkrec -e page-faults: a profile of an event taken at every occurrence (meta event, period 1):
 * counts are page faults, and a pprof profile says so.
 */
static void case_faults(struct out *o)
{
	static struct cap_mapping m100[1];
	struct cap_process procs[] = { { 100, 0, 5000, "faulter", "/golden.elf", 1, m100 } };
	struct cap_probe probes[] = { { 0, CAP_PROBE_SAMPLE, 4, "page-faults:period:1" } };
	const struct cap_kv extra[] = { { "event", "page-faults" }, { "period", "1" } };
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	struct ivb b;

	m100[0] = text_map(&golden);
	open_case(o, "faults");
	put_meta_kv(o, "profile", probes, 1, "golden-host", "6.1.0-golden", "0", extra, 2);
	put_ksyms(o, false);
	put_procs(o, procs, 1);
	iv_begin(&b, 0);
	iv_row(&b, 0, 100, "faulter", 0, iv_stack(&b, false, u_chain), 0, 7);
	iv_put(o, &b);
	close_case(o, true);
}

/*
 * A fleet (tests/golden/fleet, tests/check/clickhouse.sh): three hosts sampling at 49 Hz for two
 * one-hour windows, web1, web2 and db1 from 03:00 and again from 04:00 (2026-01-02, UTC), two
 * intervals each: input.stk is web1 at 03:00, the others HOST-HH.stk. Counts are chosen so that
 * every total and share is exact: web1 is steady, on web2 stk_leaf jumps from 10 of 75 samples
 * to 45 of 75, db1 has a kernel-only idle stack and a lost user stack ("[Missed User Stack]").
 */
struct fleet_row {
	uint32_t pid;
	const char *comm;
	int kstack, ustack;	/* enum fleet_stack, 0: none */
	uint32_t flags;
	uint64_t count;
};

enum fleet_stack { F_NONE, F_GETPPID, F_IDLE, F_CHAIN, F_READ, F_CHAIN_PIE, F_MID_PIE };

static void fleet_interval(struct out *o, uint32_t seq, const struct fleet_row *rows, uint32_t n)
{
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t k_idle[] = { K_DO_IDLE + 0x5, K_CPU_STARTUP + 0x20, K_STEXT + 0x30, 0 };
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	const uint64_t u_read[] = { at(&golden, "read_file", 0x30),
				    at(&golden, "parse_config", 0x11),
				    at(&golden, "main", 0x37), 0 };
	const uint64_t u_chain_pie[] = { at(&pie, "stk_leaf", 9), at(&pie, "stk_mid", 0x10),
					 at(&pie, "stk_top", 0x12), at(&pie, "main", 0x1a), 0 };
	const uint64_t u_mid_pie[] = { at(&pie, "stk_mid", 0x3), at(&pie, "stk_top", 0x12),
				       at(&pie, "main", 0x1a), 0 };
	const uint64_t *const ips[] = {
		[F_GETPPID] = k_getppid, [F_IDLE] = k_idle, [F_CHAIN] = u_chain,
		[F_READ] = u_read, [F_CHAIN_PIE] = u_chain_pie, [F_MID_PIE] = u_mid_pie,
	};
	uint32_t ref[F_MID_PIE + 1] = { 0 };
	struct ivb b;

	iv_begin(&b, seq);
	for (int s = F_GETPPID; s <= F_MID_PIE; s++)
		ref[s] = iv_stack(&b, s <= F_IDLE, ips[s]);
	for (uint32_t i = 0; i < n; i++)
		iv_row(&b, 0, rows[i].pid, rows[i].comm, ref[rows[i].kstack], ref[rows[i].ustack],
		       rows[i].flags, rows[i].count);
	iv_put(o, &b);
}

static void fleet_capture(struct out *o, const char *host, uint32_t hour,
			  const struct fleet_row *iv0, uint32_t n0, const struct fleet_row *iv1,
			  uint32_t n1)
{
	char file[64];

	if (!strcmp(host, "web1") && hour == 3)
		snprintf(file, sizeof(file), "input.stk");
	else
		snprintf(file, sizeof(file), "%s-%02u.stk", host, hour);
	o->real_ns = REAL0 + (hour - 3) * 3600 * SEC;
	open_burner_case(o, "fleet", file, host, "49");
	fleet_interval(o, 0, iv0, n0);
	fleet_interval(o, 1, iv1, n1);
	close_case(o, true);
	o->real_ns = 0;
}

static void case_fleet(struct out *o)
{
#define ROWS(...) (const struct fleet_row[]){ __VA_ARGS__ }, \
	sizeof((const struct fleet_row[]){ __VA_ARGS__ }) / sizeof(struct fleet_row)
	/* web1: steady, stk_leaf 55 of 65 then 53 of 65 */
	fleet_capture(o, "web1", 3,
		      ROWS({ 100, "burner", 0, F_CHAIN, 0, 30 }, { 100, "burner", 0, F_READ, 0, 10 }),
		      ROWS({ 100, "burner", 0, F_CHAIN, 0, 20 },
			   { 100, "burner", F_GETPPID, F_CHAIN, 0, 5 }));
	fleet_capture(o, "web1", 4,
		      ROWS({ 100, "burner", 0, F_CHAIN, 0, 28 }, { 100, "burner", 0, F_READ, 0, 12 }),
		      ROWS({ 100, "burner", 0, F_CHAIN, 0, 22 },
			   { 100, "burner", F_GETPPID, F_CHAIN, 0, 3 }));
	/* web2: stk_leaf 10 of 75, then 45 of 75 */
	fleet_capture(o, "web2", 3,
		      ROWS({ 200, "burner-pie", 0, F_CHAIN_PIE, 0, 10 },
			   { 200, "burner-pie", 0, F_MID_PIE, 0, 40 }),
		      ROWS({ 100, "burner", F_GETPPID, F_READ, 0, 5 },
			   { 0, "swapper/0", F_IDLE, 0, 0, 20 }));
	fleet_capture(o, "web2", 4,
		      ROWS({ 200, "burner-pie", 0, F_CHAIN_PIE, 0, 45 },
			   { 200, "burner-pie", 0, F_MID_PIE, 0, 5 }),
		      ROWS({ 100, "burner", F_GETPPID, F_READ, 0, 5 },
			   { 0, "swapper/0", F_IDLE, 0, 0, 20 }));
	/* db1: parse_config mostly, idle, and a sample whose user stack was lost */
	fleet_capture(o, "db1", 3,
		      ROWS({ 100, "postgres", 0, F_READ, 0, 60 },
			   { 100, "postgres", F_GETPPID, 0, CAP_ROW_F_USTACK_LOST, 4 }),
		      ROWS({ 0, "swapper/1", F_IDLE, 0, 0, 36 }));
	fleet_capture(o, "db1", 4,
		      ROWS({ 100, "postgres", 0, F_READ, 0, 50 },
			   { 100, "postgres", F_GETPPID, 0, CAP_ROW_F_USTACK_LOST, 6 }),
		      ROWS({ 0, "swapper/1", F_IDLE, 0, 0, 44 }));
#undef ROWS
}

/*
 * stkrec --snoop: one EVENTS batch of 5 events on 2 CPUs (rows in time order), a uprobe event
 * without kernel stack, a user stack with an address no symbol covers, and ring-buffer drops on
 * CPU 1.
 */
static void case_snoop(struct out *o)
{
	static struct cap_mapping m100[2];
	struct cap_process procs[] = {
		{ 100, 0, 5000, "golden", "/golden.elf", 2, m100 },
	};
	struct cap_probe probes[] = {
		{ 0, CAP_PROBE_TRACEPOINT, 1, "t:syscalls:sys_enter_getppid" },
		{ 1, CAP_PROBE_UPROBE, 1, "/golden.elf:read_file" },
	};
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t u_chain[] = { at(&golden, "stk_leaf", 4), at(&golden, "stk_mid", 0x10),
				     at(&golden, "stk_top", 0x12), at(&golden, "main", 0x1a), 0 };
	const uint64_t u_read[] = { at(&golden, "read_file", 0), at(&golden, "parse_config", 0x11),
				    0x7f0000001234ull, at(&golden, "main", 0x37), 0 };
	static uint64_t drops[2] = { 0, 3 };
	struct cap_record rec = { .type = CAP_CHUNK_EVENTS };
	struct cap_record lo = { .type = CAP_CHUNK_LOSSES };
	struct ivb b;
	uint32_t kg, uc, ur;
	static const struct {
		uint32_t probe, tid, cpu;
		uint64_t ts;
	} ev[] = {
		{ 0, 100, 0, MONO0 + 100000000ull },
		{ 0, 101, 1, MONO0 + 100000250ull },
		{ 1, 100, 0, MONO0 + 100500000ull },
		{ 0, 100, 0, MONO0 + 250000001ull },
		{ 1, 101, 1, MONO0 + 1250000000ull },
	};

	m100[0] = text_map(&golden);
	m100[1] = other_map(0x7f0000001000ull, 0x7f0000002000ull, CAP_MAP_FILE,
			    "/lib/libmissing.so", 0xab);
	open_case(o, "snoop");
	put_meta(o, "snoop", probes, 2);
	put_ksyms(o, false);
	put_procs(o, procs, 1);
	iv_begin(&b, 0);
	b.iv.end_ns = MONO0 + 2 * SEC;
	kg = iv_stack(&b, true, k_getppid);
	uc = iv_stack(&b, false, u_chain);
	ur = iv_stack(&b, false, u_read);
	for (uint32_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		iv_row(&b, ev[i].probe, 100, "golden", ev[i].probe ? 0 : kg, ev[i].probe ? ur : uc,
		       0, 1);
		b.rows[i].tid = ev[i].tid;
		b.rows[i].ts_ns = ev[i].ts;
		b.rows[i].cpu = ev[i].cpu;
	}
	rec.interval = b.iv;
	put(o, &rec);
	o->events += b.iv.nrows;
	o->nintervals++;
	lo.losses.counts[CAP_LOSS_EVENTS_DROPPED] = 3;
	lo.losses.ncpus = 2;
	lo.losses.cpu_dropped = drops;
	put(o, &lo);
	close_case(o, true);
}

/*
 * Names are data (tests/golden/control): every byte 0x01-0x1f and 0x7f, a backslash and ';' in
 * comms, in function names of an embedded symbol table, in the object's path, in a kernel symbol
 * and its module, in the host, kernel, probe spec and other metadata. Text outputs must escape
 * them all (stkreport(1), OUTPUT); --json keeps its own escapes, the database the raw bytes.
 * Every row is a stack of its own in every layout (tests/golden/run counts -f lines).
 */
#define K_CTL 0xffffffff81005000ull
#define CTL_BASE 0x7f1000000000ull
#define CTL_PATH "/opt/\x1b[1mevil\a/lib\tctl\n.so"

static const char ctl_all[] = "ctl_\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
			      "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"
			      "\x7f\\;_end";

/* An object stkrec embedded (format.md 4.8): symbols and one segment, no file anywhere. */
static void put_control_object(struct out *o)
{
	static struct cap_segment seg = { 0, 0, 0x2000, 0x2000 };
	static struct cap_symbol syms[] = {
		{ 0x1000, 0x100, (char *)ctl_all },
		{ 0x1100, 0x100, "evil\nfake;stack 99999999" },
		{ 0x1200, 0x100, "caf\xc3\xa9_utf8" },
		/* 0x1300..: no symbol, "[unknown] (MODULE+0xOFF)" with -v */
	};
	struct cap_object obj = { .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20,
				  .path = CTL_PATH, .debuglink = "", .nsegs = 1, .segs = &seg,
				  .nsyms = 3, .syms = syms };
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS, .objects = { 1, &obj } };

	memset(obj.build_id, 0xc7, 20);
	put(o, &rec);
}

/* The control processes: comms that hold every control byte between them, '\' and ';'. */
static struct cap_process ctl_procs[] = {
	{ 100, 0, 5000, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
	  "/opt/\x1b[1mevil\a/prog\n", 2, NULL },
	{ 101, 0, 5001, "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e", "/prog", 2,
	  NULL },
	{ 102, 0, 5002, "\x1f\x7f\\;x\nfake 9999", "/prog", 2, NULL },
	{ 103, 0, 5003, "caf\xc3\xa9", "/prog", 2, NULL },
	{ 104, 0, 5004, "\x1b[31mred\a", "/prog", 2, NULL },
};
#define NCTL (sizeof(ctl_procs) / sizeof(ctl_procs[0]))

/* Start a control capture in mode: metadata, kernel symbols, the embedded object, processes. */
static void open_control_case(struct out *o, const char *name, const char *file, const char *mode)
{
	static struct cap_mapping maps[NCTL][2];
	static struct cap_probe probes[] = {
		{ 0, CAP_PROBE_SAMPLE, 4, "profile\x1b]0;title\a\\" },
	};
	struct cap_kv extra[] = {
		{ "unwind", "f\x1b[2Jp" },
		{ "probe.0.mechanism", "m\x7f\r" },
		{ "probe.0.skipped", "s\\k\v" },
	};
	struct cap_ksym ksyms[] = {
		{ K_DO_SYSCALL, "do_syscall_64", NULL },
		{ K_ENTRY, "entry_SYSCALL_64_after_hwframe", NULL },
		{ K_CTL, "ksym\x1b[2J\n\\", "m\aod" },
		{ K_CTL + 0x1000, "k_end", NULL },
	};
	struct cap_record krec = { .type = CAP_CHUNK_KSYMS, .ksyms = { 0, 4, ksyms } };
	uint32_t i;

	for (i = 0; i < NCTL; i++) {
		maps[i][0] = text_map(&golden);
		maps[i][1] = other_map(CTL_BASE, CTL_BASE + 0x2000, CAP_MAP_FILE, CTL_PATH, 0xc7);
		ctl_procs[i].maps = maps[i];
	}
	probes[0].kind = strcmp(mode, "snoop") ? CAP_PROBE_SAMPLE : CAP_PROBE_UPROBE;
	open_case_file(o, name, file);
	put_meta_kv(o, mode, probes, 1, "ctl\x1b[31mhost\a", "6.1\r\n# forged: 1", NULL, extra,
		    sizeof(extra) / sizeof(extra[0]));
	put(o, &krec);
	put_control_object(o);
	put_procs(o, ctl_procs, NCTL);
}

/* The stacks of the control captures, leaf first. */
#define CTL_U_ALL { CTL_BASE + 0x1004, CTL_BASE + 0x1110, at(&golden, "main", 0x1a), 0 }
#define CTL_U_EVIL { CTL_BASE + 0x1104, at(&golden, "main", 0x1a), 0 }
#define CTL_U_GAP { CTL_BASE + 0x1350, CTL_BASE + 0x1020, at(&golden, "main", 0x1a), 0 }
#define CTL_U_UTF8 { CTL_BASE + 0x1204, at(&golden, "main", 0x1a), 0 }
#define CTL_K { K_CTL + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 }

/* A sampling capture: which 0 is input.stk, 1 before.stk (other counts, for --diff). */
static void control_capture(struct out *o, const char *file, int which)
{
	const uint64_t k_ctl[] = CTL_K, u_all[] = CTL_U_ALL, u_evil[] = CTL_U_EVIL;
	const uint64_t u_gap[] = CTL_U_GAP, u_utf8[] = CTL_U_UTF8;
	static const uint64_t counts[2][4] = { { 7, 5, 3, 2 }, { 1, 10, 3, 2 } };
	struct ivb b;
	uint32_t kc, ua, ue, ug, uu;

	open_control_case(o, "control", file, "profile");
	iv_begin(&b, 0);
	kc = iv_stack(&b, true, k_ctl);
	ua = iv_stack(&b, false, u_all);
	ue = iv_stack(&b, false, u_evil);
	ug = iv_stack(&b, false, u_gap);
	uu = iv_stack(&b, false, u_utf8);
	iv_row(&b, 0, 100, ctl_procs[0].comm, kc, ua, 0, counts[which][0]);
	iv_row(&b, 0, 101, ctl_procs[1].comm, 0, ue, 0, counts[which][1]);
	iv_row(&b, 0, 102, ctl_procs[2].comm, 0, ug, 0, counts[which][2]);
	iv_row(&b, 0, 103, ctl_procs[3].comm, 0, uu, 0, counts[which][3]);
	iv_put(o, &b);
	close_case(o, true);
}

/* stkrec --snoop of the same processes (tests/golden/control-snoop): one event each. */
static void case_control_snoop(struct out *o)
{
	const uint64_t k_ctl[] = CTL_K, u_all[] = CTL_U_ALL, u_gap[] = CTL_U_GAP;
	struct cap_record rec = { .type = CAP_CHUNK_EVENTS };
	struct ivb b;
	uint32_t kc, ua, ug, i;

	open_control_case(o, "control-snoop", "input.stk", "snoop");
	iv_begin(&b, 0);
	kc = iv_stack(&b, true, k_ctl);
	ua = iv_stack(&b, false, u_all);
	ug = iv_stack(&b, false, u_gap);
	for (i = 0; i < NCTL; i++) {
		iv_row(&b, 0, ctl_procs[i].pid, ctl_procs[i].comm, i % 2 ? 0 : kc,
		       i % 2 ? ug : ua, 0, 1);
		b.rows[i].ts_ns = MONO0 + (i + 1) * 1000000ull;
		b.rows[i].cpu = i % 2;
	}
	rec.interval = b.iv;
	put(o, &rec);
	o->events += b.iv.nrows;
	o->nintervals++;
	close_case(o, true);
}

static void case_control(struct out *o)
{
	control_capture(o, "input.stk", 0);
	control_capture(o, "before.stk", 1);
}

/*
 * GOLDEN_DIR/name/input.stk: the committed capture GOLDEN_DIR/from/input.stk rewritten by this
 * format's writer, record by record (4.0: each stack once per file, format.md 4.4). Its reports
 * must be from's, byte for byte, but the summary's format line (tests/golden/count-v4.0).
 */
static void case_rewritten(struct out *o, const char *name, const char *from)
{
	struct cap_record *rec, **held = NULL;
	struct cap_stacks stacks;
	struct cap_reader *r;
	struct cap_chunk ch;
	uint32_t nheld = 0;
	uint16_t major;
	char src[512];
	int n;

	snprintf(src, sizeof(src), "%s/%s/input.stk", dir, from);
	r = cap_reader__open(src);
	if (!r)
		die(src, errno);
	cap_reader__version(r, &major, NULL);
	cap_stacks__init(&stacks, major, NULL);
	open_case(o, name);
	while ((n = cap_reader__next(r, &ch)) > 0) {
		if (cap_record__decode(&ch, &rec))
			die(src, EBADMSG);
		if (rec->type == CAP_CHUNK_INTERVAL || rec->type == CAP_CHUNK_EVENTS) {
			struct cap_record one = *rec;

			/* the file's stacks point into the records: kept to the end */
			held = realloc(held, (nheld + 1) * sizeof(*held));
			if (!held || cap_stacks__add(&stacks, &rec->interval))
				die(src, ENOMEM);
			held[nheld++] = rec;
			cap_stacks__view(&stacks, &rec->interval, &one.interval);
			put(o, &one);
		} else {
			put(o, rec);
			cap_record__free(rec);
		}
	}
	if (n < 0)
		die(src, -n);
	cap_writer__close(o->w);
	o->w = NULL;
	cap_stacks__release(&stacks);
	while (nheld)
		cap_record__free(held[--nheld]);
	free(held);
	cap_reader__close(r);
}

static void rewrite(const char *path, void (*edit)(uint8_t *buf, size_t *len, void *ctx), void *ctx)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);
	size_t len;

	if (!f || !buf)
		die(path, errno);
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	edit(buf, &len, ctx);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		die(path, errno);
	free(buf);
}

static void cut(uint8_t *buf, size_t *len, void *ctx)
{
	*len = *(uint64_t *)ctx;
}

static void flip(uint8_t *buf, size_t *len, void *ctx)
{
	buf[*(uint64_t *)ctx] ^= 0x40;
}

/* Header major version one past ours (format.md 2: u16 at 8, CRC32C of bytes 0..11 at 12). */
static void newer(uint8_t *buf, size_t *len, void *ctx)
{
	uint32_t crc;

	buf[8] = CAP_MAJOR + 1;
	buf[9] = 0;
	crc = cap_crc32c(0, buf, 12);
	buf[12] = crc;
	buf[13] = crc >> 8;
	buf[14] = crc >> 16;
	buf[15] = crc >> 24;
}

/*
 * A sampling capture of a Python program (format.md 4.11): golden.elf stands in for the
 * interpreter, stk_top for its evaluation function, whose native frame each run of Python
 * frames follows; main for Py_BytesMain, stk_mid for a C function calling back into Python
 * (sorted with a key), read_file for a C function Python calls. Two stacks differ only in a
 * Python frame's line, one holds a code object that could not be named. before.stk is another
 * run: other code ids and addresses, other counts, for --diff, which matches frames by name.
 */
static void python_capture(struct out *o, const char *file, bool before)
{
	static struct cap_mapping m400[1];
	struct cap_process procs[] = { { 400, 0, 5000, "python3", "/golden.elf", 1, m400 } };
	struct cap_probe probes[] = { { 0, CAP_PROBE_SAMPLE, 4, "profile" } };
	const struct cap_kv extra[] = { { "python_frames", "python" } };
	struct cap_code_line l_module[] = { { 0, 1 }, { 10, 40 } };
	struct cap_code_line l_handle[] = { { 0, 20 }, { 4, 22 }, { 12, 23 } };
	struct cap_code_line l_parse[] = { { 0, 8 }, { 2, 9 } };
	/* another run numbers and places its code objects otherwise */
	const uint32_t id0 = before ? 10 : 0;
	const uint64_t a0 = before ? 0x7f0000200000ull : 0x7f0000100000ull;
	struct cap_code codes[] = {
		{ id0 + 1, CAP_LANG_PYTHON, CAP_CODE_NAMED, a0, "<module>", "/srv/app.py", 1, 2,
		  l_module },
		{ id0 + 2, CAP_LANG_PYTHON, CAP_CODE_NAMED, a0 + 0x400, "Worker.handle",
		  "/srv/app.py", 20, 3, l_handle },
		{ id0 + 3, CAP_LANG_PYTHON, CAP_CODE_NAMED, a0 + 0x800, "parse", "/srv/app.py", 8, 2,
		  l_parse },
		{ id0 + 4, CAP_LANG_PYTHON, CAP_CODE_NAMED, a0 + 0xc00, "keyfn",
		  "/usr/lib/python3/sorting.py", 30, 0, NULL },
		{ id0 + 5, CAP_LANG_PYTHON, CAP_CODE_CHANGED, a0 + 0x1000, NULL, NULL, 0, 0, NULL },
	};
	struct cap_record rec = { .type = CAP_CHUNK_CODES, .codes = { 5, codes } };
	const uint64_t k_getppid[] = { K_GETPPID + 0x10, K_DO_SYSCALL + 0x40, K_ENTRY + 0x44, 0 };
	const uint64_t eval = at(&golden, "stk_top", 0x12), root = at(&golden, "main", 0x1a);
	const uint64_t module = CAP_CODE_FRAME(id0 + 1, 12);
	/* the interpreter running parse's line 9 itself */
	const uint64_t u_parse[] = { at(&golden, "stk_top", 4), CAP_CODE_FRAME(id0 + 3, 3),
				     CAP_CODE_FRAME(id0 + 2, 5), module, root, 0 };
	/* handle at line 23, not 22: another stack */
	const uint64_t u_parse23[] = { at(&golden, "stk_top", 4), CAP_CODE_FRAME(id0 + 3, 3),
				       CAP_CODE_FRAME(id0 + 2, 13), module, root, 0 };
	/* parse calling C: read_file <- parse_config <- the interpreter */
	const uint64_t u_read[] = { at(&golden, "read_file", 0x30),
				    at(&golden, "parse_config", 0x11), eval,
				    CAP_CODE_FRAME(id0 + 3, 2), CAP_CODE_FRAME(id0 + 2, 5), module,
				    root, 0 };
	/* C calling Python: keyfn (no instruction run yet) under stk_mid under handle */
	const uint64_t u_key[] = { eval, CAP_CODE_FRAME(id0 + 4, CAP_CODE_OFF_NONE),
				   at(&golden, "stk_mid", 0x10), eval, CAP_CODE_FRAME(id0 + 2, 13),
				   module, root, 0 };
	/* a code object freed and its address reused before stkrec read it */
	const uint64_t u_changed[] = { eval, CAP_CODE_FRAME(id0 + 5, 7), module, root, 0 };
	/* an activation in its prologue: no Python frame yet, the interpreter's own shows */
	const uint64_t u_prologue[] = { at(&golden, "stk_top", 0), at(&golden, "stk_mid", 0x10),
					eval, CAP_CODE_FRAME(id0 + 2, 5), module, root, 0 };
	struct ivb b;
	uint32_t kg;

	m400[0] = text_map(&golden);
	open_case_file(o, "python", file);
	put_meta_kv(o, "profile", probes, 1, "golden-host", "6.1.0-golden", "99", extra, 1);
	put_ksyms(o, false);
	put_procs(o, procs, 1);
	put(o, &rec);
	iv_begin(&b, 0);
	kg = iv_stack(&b, true, k_getppid);
	iv_row(&b, 0, 400, "python3", 0, iv_stack(&b, false, u_parse), 0, before ? 20 : 30);
	iv_row(&b, 0, 400, "python3", kg, iv_stack(&b, false, u_read), 0, before ? 6 : 12);
	if (!before) {
		iv_row(&b, 0, 400, "python3", 0, iv_stack(&b, false, u_parse23), 0, 5);
		iv_row(&b, 0, 400, "python3", 0, iv_stack(&b, false, u_key), 0, 7);
		iv_row(&b, 0, 400, "python3", 0, iv_stack(&b, false, u_changed), 0, 2);
		iv_row(&b, 0, 400, "python3", 0, iv_stack(&b, false, u_prologue), 0, 1);
	}
	iv_put(o, &b);
	put_losses(o, 0, CAP_LOSS_PY_UNNAMED, 1, CAP_LOSS_PY_BAD_FRAME, before ? 0 : 3);
	close_case(o, true);
}

static void case_python(struct out *o)
{
	python_capture(o, "before.stk", true);
	python_capture(o, "input.stk", false);
}

int main(int argc, char **argv)
{
	struct out o = { 0 };
	uint64_t off;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: mkgolden GOLDEN_DIR\n");
		return 2;
	}
	dir = argv[1];
	load_elf(&golden, "golden.elf", "/golden.elf", 0);
	load_elf(&pie, "golden-pie.elf", "/golden-pie.elf", PIE_BIAS);
	load_elf(&plt, "plt.elf", "/plt.elf", PIE_BIAS);
	load_elf(&plt_stripped, "plt-stripped.elf", "/plt-stripped.elf", PIE_BIAS);

	case_count(&o, "count", true);
	case_profile(&o);
	case_unknown(&o);
	case_paths(&o);
	case_saturated(&o);
	case_snoop(&o);
	case_offcpu(&o);
	case_faults(&o);
	case_merge(&o);
	case_fleet(&o);
	case_ksyms(&o);
	case_control(&o);
	case_control_snoop(&o);
	case_python(&o);
	case_plt(&o, "plt", false);
	case_plt(&o, "plt-embedded", true);

	/* recorder killed inside the second interval chunk */
	case_count(&o, "truncated", false);
	off = o.interval_off[1] + o.interval_len[1] / 2;
	rewrite(o.path, cut, &off);

	/* one bit flipped inside the second interval's payload: checksum mismatch */
	case_count(&o, "corrupt", true);
	off = o.interval_off[1] + o.interval_len[1] - 8;
	rewrite(o.path, flip, &off);

	case_count(&o, "newer", true);
	rewrite(o.path, newer, NULL);

	case_rewritten(&o, "count-v4.0", "count");

	{
		char p[512];

		snprintf(p, sizeof(p), "%s/notcapture", dir);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/notcapture/input.stk", dir);
		f = fopen(p, "w");
		if (!f || fputs("this is not a capture file\n", f) < 0 || fclose(f))
			die(p, errno);
		/* what a recorder left when its disk was full before the header */
		snprintf(p, sizeof(p), "%s/empty", dir);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/empty/input.stk", dir);
		f = fopen(p, "w");
		if (!f || fclose(f))
			die(p, errno);
	}
	sym_elf__close(golden.e);
	sym_elf__close(pie.e);
	return 0;
}
