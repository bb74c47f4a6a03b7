/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader: bytes -> cap_reader__open_mem() -> every chunk -> cap_record__decode(), then
 * stkreport's loader and every output that reads a capture (rep_fuzz_one(): every emitter, the
 * summary, --diff, --svg, --pprof, the --sql loader and printers); or bytes ->
 * cap_record__decode() directly (see LLVMFuzzerTestOneInput). No crash, leak, hang or unbounded
 * allocation may come out of any input.
 *
 * Built two ways:
 *   -DSTK_LIBFUZZER, clang -fsanitize=fuzzer,address: a libFuzzer target (docs/format.md 7)
 *   plain (make): a driver replaying files and directories given on the command line, printing
 *     `ok fuzz FILE` for each; tests/run replays tests/fuzz/corpus this way, so every input
 *     that ever crashed stays a test.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

			h += strlen(r->comm) + r->count + r->ts_ns + r->cpu;
			if (r->kstack != CAP_NO_STACK)
				for (j = 0; j < iv->kstacks[r->kstack - 1].nips; j++)
					h += iv->kstacks[r->kstack - 1].ips[j];
			if (r->ustack != CAP_NO_STACK)
				for (j = 0; j < iv->ustacks[r->ustack - 1].nips; j++)
					h += iv->ustacks[r->ustack - 1].ips[j];
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
	case CAP_CHUNK_END:
		h += rec->end.events;
		break;
	}
	return h;
}

/* Where the emitters print: opened once, kept for the life of the process. */
static FILE *report_sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

/*
 * stkreport's outputs on a capture. -ENOMEM and -EFBIG (over the budget) answer a hostile
 * size; any other error is a bug
 * (one of rep_fuzz_one()'s fixed queries failed, a write to /dev/null failed): abort, so that
 * libFuzzer keeps the input and the corpus replay fails.
 */
static const char *replaying;	/* the file being replayed (plain driver), or NULL */

/*
 * The SQL loader only up to this size: SQLite spends ~3 ms a capture on its schema alone, and on
 * larger captures about as long as every other output together (mkbig's 2,000 rows, 42 KB:
 * 0.5 s of 1.3 s). The corpus (2 KB at most) and libFuzzer's inputs (4096 bytes unless
 * -max_len says otherwise) stay under it.
 */
#define FUZZ_SQL_MAX (32u << 10)

static void report_one(const uint8_t *data, size_t size)
{
	unsigned int what = size <= FUZZ_SQL_MAX ? REP_FUZZ_ALL : REP_FUZZ_ALL & ~REP_FUZZ_SQL;
	int err = rep_fuzz_one(data, size, report_sink(), what);

	if (err && err != -ENOMEM && err != -EFBIG) {
		fflush(stdout);
		fprintf(stderr, "fuzz_reader: %s: stkreport's outputs failed: %s\n",
			replaying ? replaying : "input", strerror(-err));
		abort();
	}
}

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
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cap_reader *r;
	struct cap_chunk ch;
	volatile uint64_t sink = 0;

	if (size >= 6 && !memcmp(data, "STKCAP", 6)) {
		r = cap_reader__open_mem(data, size);
		if (!r)
			return 0;
		while (cap_reader__next(r, &ch) == 1)
			sink += decode_and_walk(&ch);
		sink += cap_reader__chunk_index(r) + cap_reader__offset(r);
		cap_reader__close(r);
		/* and stkreport on it: load, symbolize (no object files), every output */
		if (report_sink())
			report_one(data, size);
	} else if (size >= 1) {
		/*
		 * Byte 0 modulo the number of types, plus 1: 0..8 kept the meaning they had
		 * before KSYMS_ADD (2.0, byte 0 = 9) came (corpus files).
		 */
		ch = (struct cap_chunk){ .type = 1 + data[0] % CAP_CHUNK_KSYMS_ADD,
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
	return 0;
}

#ifdef STK_LIBFUZZER
#include <lz4frame.h>

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
	replaying = path;
	LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
	replaying = NULL;
	printf("ok fuzz %s\n", path);
out:
	if (err)
		printf("not ok fuzz %s: cannot read: %s\n", path, strerror(err));
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
		printf("not ok fuzz %s: %s\n", dir, strerror(errno));
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
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			failed |= replay_dir(argv[i]);
		else
			failed |= replay_file(argv[i]);
	}
	return failed ? 1 : 0;
}
#endif
