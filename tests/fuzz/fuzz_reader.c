/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader: stkreport's fuzz targets, one binary. STK_FUZZ (environment) picks the harness:
 *
 *   reader (the default)  bytes -> cap_reader__open_mem() -> every chunk -> cap_record__decode(),
 *                         or bytes -> cap_record__decode() directly (see reader_one()): the
 *                         reader and the decoders alone, the fastest (thousands of inputs a
 *                         second)
 *   list, perpid, ...     stkreport with one option set (harnesses[]), as its command line
 *                         reaches the code (rep_parse_opts(), rep_run()), on the bytes as a
 *                         capture file: every output mode, its files written to a directory of
 *                         the fuzzer's; where two captures go in, the second is the input cut
 *                         after its first interval
 *
 * No crash, leak, hang or unbounded allocation may come out of any input; an output that fails
 * to write (-EIO), or a fixed query that fails on a capture that loaded, is a bug too: abort,
 * so that libFuzzer keeps the input and the corpus replay fails.
 *
 * Built two ways:
 *   -DSTK_LIBFUZZER, clang -fsanitize=fuzzer,address,undefined: `make fuzz` (tests/fuzz/run
 *     runs each harness in turn; docs/format.md 7)
 *   plain (make): a driver replaying files and directories given on the command line through
 *     the reader and every harness, printing `ok fuzz FILE` for each; tests/run replays
 *     tests/fuzz/corpus this way, so every input that ever crashed stays a test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "stk/capture.h"
#include "../../report/report.h"

/* Touch every decoded field that points somewhere, so a bad pointer faults here. */
static uint64_t walk_record(const struct cap_record *rec)
{
	uint64_t h = rec->type;
	uint32_t i, j;

	switch (rec->type) {
	case CAP_CHUNK_META:
		for (i = 0; i < rec->meta.nkv; i++)
			h += strlen(rec->meta.kv[i].key) + strlen(rec->meta.kv[i].value);
		for (i = 0; i < rec->meta.nprobes; i++)
			h += strlen(rec->meta.probes[i].spec) + rec->meta.probes[i].id;
		h += !!cap_meta_get(&rec->meta, "mode");
		break;
	case CAP_CHUNK_KSYMS:
	case CAP_CHUNK_KSYMS_ADD:
		for (i = 0; i < rec->ksyms.count; i++)
			h += rec->ksyms.syms[i].addr + rec->ksyms.syms[i].size +
			     strlen(rec->ksyms.syms[i].name) +
			     (rec->ksyms.syms[i].module ? strlen(rec->ksyms.syms[i].module) : 0);
		break;
	case CAP_CHUNK_PROCS:
		for (i = 0; i < rec->procs.count; i++) {
			const struct cap_process *p = &rec->procs.procs[i];

			h += strlen(p->comm) + strlen(p->exe);
			for (j = 0; j < p->nmaps; j++)
				h += p->maps[j].start + strlen(p->maps[j].path) +
				     p->maps[j].build_id[p->maps[j].build_id_len ?
							 p->maps[j].build_id_len - 1 : 0];
		}
		break;
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS: {
		const struct cap_interval *iv = &rec->interval;

		for (i = 0; i < iv->nrows; i++) {
			const struct cap_row *r = &iv->rows[i];
			/* the record's own stacks; a 4.x row may refer to earlier records' (the
			 * loader's struct cap_stacks resolves those) */
			const struct cap_stack *ks = cap_stacks__get(NULL, iv, false, r->kstack);
			const struct cap_stack *us = cap_stacks__get(NULL, iv, true, r->ustack);

			h += strlen(r->comm) + r->count + r->ts_ns + r->cpu;
			for (j = 0; ks && j < ks->nips; j++)
				h += ks->ips[j];
			for (j = 0; us && j < us->nips; j++)
				h += us->ips[j];
		}
		break;
	}
	case CAP_CHUNK_LOSSES:
		for (i = 0; i < CAP_LOSS__COUNT; i++)
			h += rec->losses.counts[i] + strlen(cap_loss_name(i));
		for (i = 0; i < rec->losses.ncpus; i++)
			h += rec->losses.cpu_dropped[i];
		break;
	case CAP_CHUNK_OBJECTS:
		for (i = 0; i < rec->objects.count; i++) {
			const struct cap_object *o = &rec->objects.objs[i];

			h += strlen(o->path) + strlen(o->debuglink) +
			     o->build_id[o->build_id_len ? o->build_id_len - 1 : 0];
			for (j = 0; j < o->nsegs; j++)
				h += o->segs[j].offset + o->segs[j].memsz;
			for (j = 0; j < o->nsyms; j++)
				h += o->syms[j].addr + strlen(o->syms[j].name);
			if (o->data_len)
				h += o->data[0] + o->data[o->data_len - 1];
		}
		break;
	case CAP_CHUNK_PERFMAP:
		for (i = 0; i < rec->perfmap.count; i++)
			h += rec->perfmap.syms[i].addr + strlen(rec->perfmap.syms[i].name);
		break;
	case CAP_CHUNK_CODES:
		for (i = 0; i < rec->codes.count; i++) {
			const struct cap_code *c = &rec->codes.codes[i];

			h += c->id + c->addr + strlen(c->name) + strlen(c->file);
			for (j = 0; j < c->nlines; j++)
				h += c->lines[j].start + c->lines[j].line;
		}
		break;
	case CAP_CHUNK_END:
		h += rec->end.events;
		break;
	}
	return h;
}


/* ---- the reader alone -------------------------------------------------------------------- */

static uint64_t decode_and_walk(const struct cap_chunk *ch)
{
	struct cap_record *rec;
	uint64_t h = 0;

	if (cap_record__decode(ch, &rec) == 0) {
		h = walk_record(rec);
		cap_record__free(rec);
	}
	return h;
}

/*
 * Two modes, picked by the first bytes:
 * - a capture (starts with the magic "STKCAP"): the reader walks it, every chunk is decoded;
 * - anything else: byte 0 picks a record type and the rest is a decompressed payload given to
 *   the decoder directly. A mutated capture almost never keeps valid checksums, so without
 *   this mode the fuzzer would hardly ever get past the CRC into the record decoders.
 */
static void reader_one(const uint8_t *data, size_t size)
{
	struct cap_reader *r;
	struct cap_chunk ch;
	volatile uint64_t sink = 0;

	if (size >= 6 && !memcmp(data, "STKCAP", 6)) {
		r = cap_reader__open_mem(data, size);
		if (!r)
			return;
		while (cap_reader__next(r, &ch) == 1)
			sink += decode_and_walk(&ch);
		sink += cap_reader__chunk_index(r) + cap_reader__offset(r);
		cap_reader__close(r);
	} else if (size >= 1) {
		/*
		 * Byte 0 modulo the number of types, plus 1: 0..8 kept the meaning they had
		 * before KSYMS_ADD (2.0, byte 0 = 9) came, 0..9 before CODES (4.1, 10) came
		 * (corpus files).
		 */
		ch = (struct cap_chunk){ .type = 1 + data[0] % CAP_CHUNK_CODES,
					 .len = (uint32_t)(size - 1),
					 .data = data + 1 };
		sink += decode_and_walk(&ch);
		/* OBJECTS has two layouts (format.md 5): also as a chunk of a 2.x file. */
		if (ch.type == CAP_CHUNK_OBJECTS) {
			ch.major = 2;
			sink += decode_and_walk(&ch);
		}
		/* And once through the reader, for its header checks on non-captures. */
		r = cap_reader__open_mem(data, size);
		cap_reader__close(r);
	}
	(void)sink;
}

/* ---- stkreport on the input -------------------------------------------------------------- */

/* SQL the harnesses run: views over every table, names and comms in the three printers. */
#define SQL_TABLE "SELECT function, kernel, self, total FROM functions ORDER BY total DESC, " \
	"function, kernel"
#define SQL_CSV "SELECT 'meta' AS t, capture AS c, key AS a, value AS b FROM meta" \
	" UNION ALL SELECT 'probe', capture, kind, spec FROM probes" \
	" UNION ALL SELECT 'process', capture, comm, exe FROM processes" \
	" UNION ALL SELECT 'object', NULL, build_id, path FROM objects" \
	" UNION ALL SELECT 'caller', capture, function, caller FROM callers" \
	" UNION ALL SELECT 'loss', capture, kind, count FROM losses" \
	" UNION ALL SELECT 'interval', capture, seq, count FROM intervals"
#define SQL_JSON "SELECT c.state, c.format, c.duration_ns, s.*, s.count / 3.0 AS third, " \
	"f.symbol, f.offset, f.file, f.line, f.reason FROM samples s JOIN captures c ON " \
	"c.id = s.capture LEFT JOIN frames f ON f.stack = coalesce(s.kstack, s.ustack) AND " \
	"f.depth = 0 ORDER BY s.id"

/*
 * An option set. In args, "@" is an output file in the fuzzer's directory, "%" the second
 * capture (the input cut after its first interval), "=" the input, which goes last unless it is
 * named; "ROOT" is STK_FUZZ_ROOT (tests/golden/elf: ELF files with symbols and DWARF).
 */
#define FUZZ_FILES 0x1u		/* may open object files: it names a --symfs or --debug-dir */
#define FUZZ_QUERY 0x2u		/* a fixed query: failing on a capture that loads is a bug */

struct harness {
	const char *name;
	const char *args[16];
	unsigned int flags;
};

static const struct harness harnesses[] = {
	{ "list", { "-q" } },
	{ "summary", { "-P" } },
	{ "verbose", { "-q", "-v", "-P", "-d" } },
	{ "offsets", { "-q", "-s", "-T", "-K" } },
	{ "folded", { "-q", "-f", "-a", "-d", "--no-demangle" } },
	{ "address", { "-q", "-A", "--address-stacks", "-s" } },
	{ "old-layout", { "-q", "--old-layout", "-d", "-a" } },
	{ "tree", { "-q", "--tree", "--tree-min", "1", "-P" } },
	{ "json", { "-q", "--json", "-U" } },
	{ "by", { "-q", "-f", "--by", "interval" } },
	{ "merge", { "-q", "--by", "capture", "%", "=" } },
	{ "filters", { "-q", "--pid", "100,0", "--comm", "hostile", "--grep", "a|k", "--time", "1,",
		       "--max-depth", "2" } },
	{ "sql", { "-q", "--sql", SQL_TABLE }, FUZZ_QUERY },
	{ "sql-csv", { "-q", "--csv", "--sql", SQL_CSV }, FUZZ_QUERY },
	{ "sql-json", { "-q", "--json", "--sql", SQL_JSON, "%", "=" }, FUZZ_QUERY },
	{ "sqlite", { "-q", "--sqlite", "@" } },
	{ "pprof", { "-q", "--pprof", "@", "%", "=" } },
	{ "svg", { "-q", "--svg", "@", "--title", "t", "--width", "600", "--inverted" } },
	{ "diff", { "-a", "-d", "--normalize", "--diff", "%", "=" } },
	{ "diff-svg", { "-q", "--svg", "@", "--diff", "=", "%" } },
	{ "lines", { "-q", "-l", "--inline", "-s" } },
	{ "symfs", { "-q", "-l", "--symfs", "ROOT" }, FUZZ_FILES },
	{ "debug-dir", { "-q", "--inline", "--debug-dir", "ROOT", "--debug-dir", "ROOT" },
	  FUZZ_FILES },
};

#define NHARNESS (sizeof(harnesses) / sizeof(harnesses[0]))

/* What every harness shares: the input's files and the outputs' directory, made once. */
struct fuzz_env {
	int in_fd, prefix_fd;		/* memfds: the input and its prefix as capture files */
	char in[64], prefix[64];	/* their /proc/self/fd paths */
	char dir[PATH_MAX];		/* outputs: STK_FUZZ_OUT, or a directory of ours */
	bool own_dir;			/* made here: removed by env_clean() */
	const char *root;		/* STK_FUZZ_ROOT */
	FILE *log;			/* the driver's own output (stdout is stkreport's) */
};

/* The input, as a file stkreport opens (format.md 6: one write, no reopen). */
static void put_file(int fd, const uint8_t *data, size_t size)
{
	size_t done = 0;
	ssize_t n;

	if (ftruncate(fd, 0))
		abort();
	while (done < size) {
		n = pwrite(fd, data + done, size - done, done);
		if (n <= 0)
			abort();
		done += n;
	}
}

static int env_init(struct fuzz_env *e)
{
	int null;

	const char *dir = getenv("STK_FUZZ_OUT");

	e->in_fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	e->prefix_fd = memfd_create("fuzz-prefix", MFD_CLOEXEC);
	if (e->in_fd < 0 || e->prefix_fd < 0)
		return -errno;
	e->own_dir = !dir || !*dir;
	snprintf(e->dir, sizeof(e->dir), "%s", e->own_dir ? "/tmp/stkreport-fuzz-XXXXXX" : dir);
	if (e->own_dir && !mkdtemp(e->dir))
		return -errno;
	snprintf(e->in, sizeof(e->in), "/proc/self/fd/%d", e->in_fd);
	snprintf(e->prefix, sizeof(e->prefix), "/proc/self/fd/%d", e->prefix_fd);
	e->root = getenv("STK_FUZZ_ROOT") ? getenv("STK_FUZZ_ROOT") : "tests/golden/elf";
	/* stkreport prints on stdout: /dev/null; the driver keeps its own copy for its lines */
	e->log = fdopen(dup(STDOUT_FILENO), "w");
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (!e->log || null < 0 || dup2(null, STDOUT_FILENO) < 0)
		return -errno;
	close(null);
	setvbuf(e->log, NULL, _IOLBF, 0);
	return 0;
}

/* The outputs' files, and their directory when it is ours. */
static void env_clean(const struct fuzz_env *e)
{
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < NHARNESS; i++) {
		snprintf(path, sizeof(path), "%s/out-%s", e->dir, harnesses[i].name);
		unlink(path);
	}
	if (e->own_dir)
		rmdir(e->dir);
}

/* One harness on the input already in e's files (the prefix too). */
static void harness_one(const struct fuzz_env *e, const struct harness *h, bool loads)
{
	char out[PATH_MAX + 64], *argv[40];
	bool named = false;
	struct rep_opts o;
	int argc = 0, err;

	snprintf(out, sizeof(out), "%s/out-%s", e->dir, h->name);
	argv[argc++] = "stkreport";
	/* the budgets libFuzzer's limits leave room for (-rss_limit_mb=2048, with ASan) */
	argv[argc++] = "--max-memory=256";
	argv[argc++] = "--max-debug=64";
	for (const char *const *a = h->args; *a; a++) {
		const char *v = *a;

		if (!strcmp(v, "@"))
			v = out;
		else if (!strcmp(v, "%"))
			v = e->prefix;
		else if (!strcmp(v, "ROOT"))
			v = e->root;
		else if (!strcmp(v, "="))
			v = e->in, named = true;
		argv[argc++] = (char *)v;
	}
	if (!named)
		argv[argc++] = (char *)e->in;
	argv[argc] = NULL;
	err = rep_parse_opts(argc, argv, &o);
	if (err) {
		fprintf(stderr, "fuzz_reader: harness %s: its options are refused\n", h->name);
		abort();
	}
	o.no_objects = !(h->flags & FUZZ_FILES);
	err = rep_run(&o);
	rep_opts__free(&o);
	/* /dev/null and our own directory do not fail; a query that fails on data is a bug */
	if (err == -EIO || ((h->flags & FUZZ_QUERY) && loads && (err == -EINVAL || err == -EPERM))) {
		fprintf(stderr, "fuzz_reader: harness %s: %s\n", h->name, strerror(-err));
		abort();
	}
}

/* The input, and its prefix, into e's files; whether the input loads as a capture. */
static bool env_put(struct fuzz_env *e, const uint8_t *data, size_t size)
{
	struct cap_reader *r = cap_reader__open_mem(data, size);

	cap_reader__close(r);
	put_file(e->in_fd, data, size);
	put_file(e->prefix_fd, data, rep_fuzz_cut(data, size));
	return r != NULL;
}

static struct fuzz_env env;

#ifdef STK_LIBFUZZER
static const struct harness *chosen;	/* NULL: the reader */

static const struct harness *harness_named(const char *name)
{
	for (size_t i = 0; i < NHARNESS; i++)
		if (!strcmp(harnesses[i].name, name))
			return &harnesses[i];
	return NULL;
}

static void env_clean_at_exit(void)
{
	env_clean(&env);
}


int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *name = getenv("STK_FUZZ");

	(void)argc;
	(void)argv;
	/* tests/fuzz/run asks for the names */
	if (name && !strcmp(name, "help")) {
		for (size_t i = 0; i < NHARNESS; i++)
			printf("%s\n", harnesses[i].name);
		exit(0);
	}
	if (name && strcmp(name, "reader")) {
		chosen = harness_named(name);
		if (!chosen || env_init(&env)) {
			fprintf(stderr, "fuzz_reader: STK_FUZZ=%s: no such harness, or no memfd\n",
				name);
			exit(2);
		}
		atexit(env_clean_at_exit);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!chosen)
		reader_one(data, size);
	else
		harness_one(&env, chosen, env_put(&env, data, size));
	return 0;
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#define MUT_MAX_CHUNKS 256
#define MUT_MAX_RAW (1u << 20)	/* a larger chunk is left to libFuzzer's own mutations */

/*
 * Mutate the decompressed payload of one chunk of a capture (format.md 3.1), then compress it
 * again and fix the chunk header (raw_len, stored_len, crc): the result still passes the
 * checksums, so mutations reach the record decoders in context, the loader and every output
 * instead of stopping at the first damaged chunk. Returns the new size, or 0 when the input is
 * no capture with such a chunk (the caller mutates the bytes instead).
 */
static size_t mutate_chunk(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	/* a frame is at most its content + 1/256 + a header: LZ4F_compressFrameBound() */
	static uint8_t raw[MUT_MAX_RAW], frame[MUT_MAX_RAW + (MUT_MAX_RAW >> 8) + 4096];
	size_t offs[MUT_MAX_CHUNKS], n = 0, off = 16, in, out, len, stored, tail;
	LZ4F_preferences_t prefs = { 0 };
	LZ4F_dctx *dctx = NULL;
	uint32_t crc;
	size_t ret;

	/* format.md 2 and 3.1: a 16-byte file header, then chunks of a 24-byte header + payload */
	while (off + 24 <= size && n < MUT_MAX_CHUNKS && !memcmp(data + off, "CHNK", 4)) {
		stored = data[off + 16] | data[off + 17] << 8 | data[off + 18] << 16 |
			 (size_t)data[off + 19] << 24;
		if (stored > size - off - 24)
			break;
		offs[n++] = off;
		off += 24 + stored;
	}
	if (!n)
		return 0;
	off = offs[seed % n];
	stored = data[off + 16] | data[off + 17] << 8 | data[off + 18] << 16 |
		 (size_t)data[off + 19] << 24;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
		return 0;
	in = stored;
	out = sizeof(raw);
	ret = LZ4F_decompress(dctx, raw, &out, data + off + 24, &in, NULL);
	LZ4F_freeDecompressionContext(dctx);
	if (LZ4F_isError(ret) || ret != 0)
		return 0;	/* not one whole frame, or larger than raw[] */
	len = LLVMFuzzerMutate(raw, out, sizeof(raw));
	prefs.frameInfo.contentSize = len;
	ret = LZ4F_compressFrame(frame, sizeof(frame), raw, len, &prefs);
	if (LZ4F_isError(ret))
		return 0;
	tail = size - (off + 24 + stored);
	if (off + 24 + ret + tail > max_size)
		return 0;
	memmove(data + off + 24 + ret, data + off + 24 + stored, tail);
	memcpy(data + off + 24, frame, ret);
	data[off + 12] = len, data[off + 13] = len >> 8, data[off + 14] = len >> 16;
	data[off + 15] = len >> 24;
	data[off + 16] = ret, data[off + 17] = ret >> 8, data[off + 18] = ret >> 16;
	data[off + 19] = ret >> 24;
	crc = cap_crc32c(cap_crc32c(0, data + off, 20), data + off + 24, ret);
	data[off + 20] = crc, data[off + 21] = crc >> 8, data[off + 22] = crc >> 16;
	data[off + 23] = crc >> 24;
	return off + 24 + ret + tail;
}

/* Captures: three times in four one chunk's content (mutate_chunk()), else the bytes. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	size_t n = 0;

	if (size >= 6 && !memcmp(data, "STKCAP", 6) && seed % 4)
		n = mutate_chunk(data, size, max_size, seed / 4);
	return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
#else
/*
 * The harnesses only up to this size: libFuzzer's inputs stay under it (tests/fuzz/run's
 * -max_len), and a larger file (mkbig's) would make the replay take seconds a harness.
 */
#define HARNESS_MAX (32u << 10)

static bool size_ok(size_t size)
{
	return size <= HARNESS_MAX;
}

static int replay_file(const char *path)
{
	uint8_t *buf = NULL;
	struct stat st;
	FILE *f;
	int err = 0;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) < 0) {
		err = errno;
		goto out;
	}
	/* An exact-size copy, so a sanitizer sees any read past the input. */
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		err = buf ? EIO : ENOMEM;
		goto out;
	}
	reader_one(buf, (size_t)st.st_size);
	if (size_ok((size_t)st.st_size)) {
		bool loads = env_put(&env, buf, (size_t)st.st_size);

		for (size_t i = 0; i < NHARNESS; i++)
			harness_one(&env, &harnesses[i], loads);
	}
	fprintf(env.log, "ok fuzz %s\n", path);
out:
	if (err)
		fprintf(env.log, "not ok fuzz %s: cannot read: %s\n", path, strerror(err));
	free(buf);
	if (f)
		fclose(f);
	return err ? 1 : 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a directory in name order, so output is stable. */
static int replay_dir(const char *dir)
{
	struct dirent *de;
	char **names = NULL, path[4096];
	size_t n = 0, i;
	int failed = 0;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(env.log, "not ok fuzz %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		char **more;

		if (de->d_name[0] == '.')
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more)
			break;
		names = more;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		failed |= replay_file(path);
		free(names[i]);
	}
	free(names);
	return failed;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (env_init(&env)) {
		fprintf(stderr, "fuzz_reader: no memfd or temporary directory: %s\n", strerror(errno));
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			failed |= replay_dir(argv[i]);
		else
			failed |= replay_file(argv[i]);
	}
	env_clean(&env);
	return failed ? 1 : 0;
}
#endif
