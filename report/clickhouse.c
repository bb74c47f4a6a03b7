// SPDX-License-Identifier: MIT
/*
 * clickhouse.c: --clickhouse URL, the symbolized rows of captures sent to a ClickHouse server's
 * HTTP interface (docs/clickhouse.md: the schema, the fleet queries, and why it works this way
 * on ClickHouse 18.16, Debian 12's).
 *
 * Rows: each capture goes through the model (agg.c) as -f would print it, with the options
 * given (filters, -K/-U, -l, -s, --inline...), and its on_row hook hands every row over with its
 * displayed stack: the frames are the folded line's, root first, with a profile capture's
 * "[Missed ... Stack]" markers, so that the documented queries print exactly what stkreport
 * prints. A stack is sent once per run, keyed by a hash of its content (stacks: id, frames,
 * modules, kinds); a row is (capture, row, time, interval, host, pid, tid, comm, probe, stack,
 * count, weight); a capture's id is a hash of its file's bytes.
 *
 * Loading twice counts once: before a capture is sent, the server is asked whether its rows are
 * there (ids are content hashes, so a copy of a file is the same capture); rows go in batches of
 * about BATCH_BYTES, each batch as three INSERTs in RowBinary: stacks (ReplacingMergeTree: a
 * stack sent again merges away), captures, then samples, which is the commit point: all the
 * rows of a batch go in one block (max_insert_block_size), which ClickHouse writes as one part
 * or not at all, so a capture's rows are all there or none. A run cut between the captures and
 * the samples INSERT leaves a captures row without its rows; the next run sends the rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "http.h"
#include "report.h"

/* Sample rows of a batch before it is sent: bounded memory, few parts on the server. */
#define BATCH_BYTES (16u << 20)

/* The tables, as the loader creates them when missing (docs/clickhouse.md, "Schema"). */
static const char *const schema[] = {
	"CREATE TABLE IF NOT EXISTS captures (id UInt64, file String, host String,"
	" kernel String, arch String, start DateTime, start_ns Int64, duration_ns UInt64,"
	" mode String, probes Array(String), freq_hz UInt64, period UInt64, rows UInt64,"
	" events UInt64, format String, state String, loaded DateTime DEFAULT now())"
	" ENGINE = ReplacingMergeTree() ORDER BY id",
	"CREATE TABLE IF NOT EXISTS stacks (id UInt64, frames Array(String),"
	" modules Array(String), kinds Array(Enum8('kernel' = 1, 'user' = 2, 'python' = 3)))"
	" ENGINE = ReplacingMergeTree() ORDER BY id",
	"CREATE TABLE IF NOT EXISTS samples (capture UInt64, row UInt32, time DateTime,"
	" interval UInt32, host String, pid UInt32, tid UInt32, comm String, probe String,"
	" stack UInt64, count UInt64, weight UInt64)"
	" ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(time) ORDER BY (capture, row)",
};

/* The columns each INSERT names, in RowBinary order (a table may have more, with defaults). */
#define CAPTURES_COLUMNS "id, file, host, kernel, arch, start, start_ns, duration_ns, mode," \
	" probes, freq_hz, period, rows, events, format, state"
#define STACKS_COLUMNS "id, frames, modules, kinds"
#define SAMPLES_COLUMNS "capture, row, time, interval, host, pid, tid, comm, probe, stack," \
	" count, weight"

/* stacks.kinds (Enum8): an interpreter frame (format.md 4.11) says python. */
enum { KIND_KERNEL = 1, KIND_USER = 2, KIND_PYTHON = 3 };

/* ---- RowBinary (ClickHouse's row format: little-endian, strings length-prefixed) ------------ */

struct bytes {
	uint8_t *buf;
	size_t len, cap;
	bool failed;		/* an append ran out of memory; later ones do nothing */
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->failed || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *v;

		while (cap < b->len + n)
			cap *= 2;
		v = realloc(b->buf, cap);
		if (!v) {
			b->failed = true;
			return;
		}
		b->buf = v;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* An unsigned integer of n bytes (UInt8...UInt64, Int64 and DateTime alike), little-endian. */
static void put_uint(struct bytes *b, uint64_t v, unsigned int n)
{
	uint8_t le[8];

	for (unsigned int i = 0; i < n; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	put(b, le, n);
}

/* LEB128: string lengths and array sizes */
static void put_varint(struct bytes *b, uint64_t v)
{
	uint8_t out[10];
	unsigned int n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	put(b, out, n);
}

static void put_str(struct bytes *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_varint(b, n);
	put(b, s, n);
}

/* ---- the loader ----------------------------------------------------------------------------- */

/* A set of 64-bit ids (stack ids sent, capture ids of the run). */
struct idset {
	struct rep_htab index;
	uint64_t *ids;
	uint32_t n, cap;
};

struct rep_ch {
	struct rep_opts o;		/* the options the rows are made with */
	struct rep_http *http;
	/* the batch being built */
	struct bytes stacks, captures, samples;
	uint64_t batch_rows;
	struct idset stacks_sent;	/* in this run (a stack sent twice merges away anyway) */
	struct idset captures_seen;	/* in this run: a file given twice is one capture */
	/* the capture being added */
	uint64_t id;
	int64_t wall_offset;		/* wall = CLOCK_MONOTONIC + this, when has_clock */
	bool has_clock;
	uint64_t unit;			/* what one count is worth, in weight's unit */
	const char *host;
	uint64_t rows, events;
	struct bytes scratch;		/* a stack's arrays, hashed into its id */
	struct emit_path_elem *path;
	uint32_t path_cap;
	/* what the run did */
	uint32_t loaded, skipped;
	uint64_t rows_sent, stacks_new;
};

static bool id_eq(const void *ctx, uint32_t val)
{
	const struct idset *s = ((const void *const *)ctx)[0];
	const uint64_t *id = ((const void *const *)ctx)[1];

	return s->ids[val] == *id;
}

/* Add id to s: 1 when it was not there, 0 when it was, -ENOMEM. */
static int idset_add(struct idset *s, uint64_t id)
{
	const void *ctx[2] = { s, &id };
	uint32_t val;

	if (rep_htab__find(&s->index, id, id_eq, ctx, &val))
		return 0;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = realloc(s->ids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->ids = v;
		s->cap = cap;
	}
	if (rep_htab__insert(&s->index, id, s->n))
		return -ENOMEM;
	s->ids[s->n++] = id;
	return 1;
}

static void idset_clear(struct idset *s)
{
	rep_htab__clear(&s->index);
	free(s->ids);
}

/* One line for the run's error: the server named, never the URL (it may hold a password). */
static int ch_error(const struct rep_ch *ch, const char *what, int err)
{
	fprintf(stderr, "stkreport: --clickhouse %s: %s%s%s\n", rep_http__server(ch->http),
		what ? what : "", what ? ": " : "",
		err == -ENOMEM ? strerror(ENOMEM) : rep_http__error(ch->http));
	return err;
}

/* Run one statement (its result, if any, into *reply). */
static int ch_exec(struct rep_ch *ch, const char *sql, bool no_database, char **reply)
{
	return rep_http__post(ch->http, NULL, no_database, sql, strlen(sql), reply, NULL);
}

/* INSERT the rows of b into table (columns cols), as one block: all of them, or none. */
static int ch_insert(struct rep_ch *ch, const char *table, const char *cols,
		     const struct bytes *b, uint64_t rows)
{
	char query[512], block[64];
	const char *params[] = {
		query,
		/* a Distributed table hands each shard its rows before it answers */
		"insert_distributed_sync=1",
		block,
		NULL,
	};
	int err;

	if (b->failed)
		return ch_error(ch, table, -ENOMEM);
	if (!b->len)
		return 0;
	snprintf(query, sizeof(query), "query=INSERT INTO %s (%s) FORMAT RowBinary", table, cols);
	snprintf(block, sizeof(block), "max_insert_block_size=%" PRIu64, rows + 1);
	err = rep_http__post(ch->http, params, false, b->buf, b->len, NULL, NULL);
	return err ? ch_error(ch, table, err) : 0;
}

/* Send the batch: stacks, captures, then samples, the commit point. */
static int flush(struct rep_ch *ch)
{
	int err = ch_insert(ch, "stacks", STACKS_COLUMNS, &ch->stacks, UINT32_MAX);

	if (!err)
		err = ch_insert(ch, "captures", CAPTURES_COLUMNS, &ch->captures, UINT32_MAX);
	if (!err)
		err = ch_insert(ch, "samples", SAMPLES_COLUMNS, &ch->samples, ch->batch_rows);
	ch->stacks.len = ch->captures.len = ch->samples.len = 0;
	ch->rows_sent += ch->batch_rows;
	ch->batch_rows = 0;
	return err;
}

/* The database the URL names, and the tables that are missing in it. */
static int create_schema(struct rep_ch *ch)
{
	const char *db = rep_http__database(ch->http);
	char *sql;
	int err;

	/* the URL names the database: a request that names a missing one fails, so this one
	 * goes without it */
	if (strchr(db, '`')) {
		fprintf(stderr, "stkreport: --clickhouse: database name with a backquote: %s\n", db);
		return -EINVAL;
	}
	if (asprintf(&sql, "CREATE DATABASE IF NOT EXISTS `%s`", db) < 0)
		return ch_error(ch, NULL, -ENOMEM);
	err = ch_exec(ch, sql, true, NULL);
	free(sql);
	if (err)
		return ch_error(ch, NULL, err);
	for (size_t i = 0; i < sizeof(schema) / sizeof(schema[0]); i++) {
		err = ch_exec(ch, schema[i], false, NULL);
		if (err)
			return ch_error(ch, NULL, err);
	}
	return 0;
}

struct rep_ch *rep_ch__open(const char *url, const struct rep_opts *o)
{
	struct rep_ch *ch = calloc(1, sizeof(*ch));
	char why[256];
	int err;

	if (!ch) {
		fprintf(stderr, "stkreport: --clickhouse: %s\n", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	/* the rows are those of -f without any grouping: rep_model__add() per capture */
	ch->o = *o;
	ch->o.by = REP_BY_NONE;
	ch->http = rep_http__open(url, why, sizeof(why));
	if (!ch->http) {
		err = -errno;
		fprintf(stderr, "stkreport: --clickhouse %s: %s\n", url, why);
		goto fail;
	}
	err = create_schema(ch);
	if (err)
		goto fail;
	return ch;
fail:
	rep_ch__close(ch);
	errno = -err;
	return NULL;
}

void rep_ch__close(struct rep_ch *ch)
{
	if (!ch)
		return;
	rep_http__close(ch->http);
	free(ch->stacks.buf);
	free(ch->captures.buf);
	free(ch->samples.buf);
	free(ch->scratch.buf);
	free(ch->path);
	idset_clear(&ch->stacks_sent);
	idset_clear(&ch->captures_seen);
	free(ch);
}

/* ---- one capture ---------------------------------------------------------------------------- */

/* The capture's id: XXH64 (seed 0) of its file's bytes, the same wherever the file goes. */
static int file_id(const char *path, uint64_t *id)
{
	XXH64_state_t *st = XXH64_createState();
	static const size_t chunk = 1 << 20;
	char *buf = malloc(chunk);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (!st || !buf) {
		err = -ENOMEM;
		goto out;
	}
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	XXH64_reset(st, 0);
	while ((n = read(fd, buf, chunk)) > 0)
		XXH64_update(st, buf, n);
	if (n < 0)
		err = -errno;
	*id = XXH64_digest(st);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	XXH64_freeState(st);
	return err;
}

/* What the server holds of capture id. */
struct held {
	bool capture;		/* its captures row */
	uint64_t rows;		/* the rows that row says it has */
	bool samples;		/* any of its rows */
};

static int ask_held(struct rep_ch *ch, uint64_t id, struct held *h)
{
	unsigned long long ncap, rows, nsamples;
	char sql[384], *reply = NULL;
	int err;

	/* one request: three scalar subqueries, answered as one TabSeparated line */
	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT count() FROM captures WHERE id = %" PRIu64 "),"
		 " (SELECT max(rows) FROM captures WHERE id = %" PRIu64 "),"
		 " (SELECT count() FROM samples WHERE capture = %" PRIu64 ")", id, id, id);
	err = ch_exec(ch, sql, false, &reply);
	if (err)
		return ch_error(ch, NULL, err);
	if (sscanf(reply, "%llu\t%llu\t%llu", &ncap, &rows, &nsamples) != 3) {
		fprintf(stderr, "stkreport: --clickhouse %s: unexpected answer: %.200s\n",
			rep_http__server(ch->http), reply);
		err = -EPROTO;
	}
	free(reply);
	*h = (struct held){ ncap > 0, rows, nsamples > 0 };
	return err;
}

/* What one count is worth in samples.weight: nanoseconds of CPU or off-CPU time, else one. */
static uint64_t count_unit(const struct rep_capture *c)
{
	int64_t v;

	if (rep_capture_weight_us(c))
		return 1000;
	if (!rep_capture_is_profile(c))
		return 1;
	if (rep_capture_meta_i64(c, "period", &v) && v > 0)
		return v;
	if (rep_capture_meta_i64(c, "freq_hz", &v) && v > 0)
		return 1000000000 / v;
	return 1;
}

static uint64_t weight(uint64_t count, uint64_t unit)
{
	uint64_t w;

	return __builtin_mul_overflow(count, unit, &w) ? UINT64_MAX : w;
}

/* Seconds since the epoch of a CLOCK_MONOTONIC time of the capture (DateTime is 32 bits). */
static uint32_t wall_s(const struct rep_ch *ch, uint64_t mono)
{
	int64_t ns = ch->has_clock ? (int64_t)((uint64_t)ch->wall_offset + mono) : (int64_t)mono;

	return ns <= 0 ? 0 : ns / 1000000000 > UINT32_MAX ? UINT32_MAX : ns / 1000000000;
}

/*
 * The stack of a row as -f shows it, root first: its arrays into scratch, their hash as its
 * id, and the row into the batch when this run has not sent it yet.
 */
static int stack_id(struct rep_ch *ch, const struct rep_model *m, const struct rep_stack *st,
		    uint64_t *id)
{
	struct bytes *s = &ch->scratch;
	uint32_t i, first;
	int64_t n;
	int err;

	n = emit_folded_path(m, &ch->o, st, &ch->path, &ch->path_cap);
	if (n < 0)
		return n;
	/* the empty comm field that starts a line of a counting capture is not a frame */
	first = emit_folded_blank_comm(m, &ch->o);
	s->len = 0;
	put_varint(s, n - first);
	for (i = first; i < n; i++)
		put_str(s, ch->path[i].name);
	put_varint(s, n - first);
	for (i = first; i < n; i++) {
		const struct rep_frame *f = ch->path[i].frame ?
			rep_model_frame(m, ch->path[i].frame) : NULL;

		put_str(s, f && f->module ? f->module : "");
	}
	put_varint(s, n - first);
	for (i = first; i < n; i++)
		put_uint(s, ch->path[i].kernel ? KIND_KERNEL :
			    rep_model_frame_python(m, ch->path[i].frame) ? KIND_PYTHON : KIND_USER, 1);
	if (s->failed)
		return -ENOMEM;
	*id = XXH64(s->buf, s->len, 0);
	err = idset_add(&ch->stacks_sent, *id);
	if (err <= 0)
		return err;
	put_uint(&ch->stacks, *id, 8);
	put(&ch->stacks, s->buf, s->len);
	ch->stacks_new++;
	return 0;
}

/* rep_model's hook: one row the filters kept, with its stack as displayed. */
static int on_row(void *ctx, const struct rep_model *m, const struct rep_capture *c,
		  const struct rep_interval *ri, uint32_t row, const struct rep_stack *st)
{
	struct rep_ch *ch = ctx;
	const struct cap_row *r = &ri->iv->rows[row];
	struct bytes *b = &ch->samples;
	const char *probe = rep_capture_probe_spec(c, r->probe);
	char comm[CAP_COMM_LEN + 1], id[16];
	uint64_t stack = 0;
	int err;

	err = stack_id(ch, m, st, &stack);
	if (err)
		return err;
	memcpy(comm, r->comm, CAP_COMM_LEN);
	comm[CAP_COMM_LEN] = 0;	/* hostile input may lack the NUL */
	snprintf(id, sizeof(id), "%" PRIu32, r->probe);
	put_uint(b, ch->id, 8);
	put_uint(b, ch->rows, 4);
	/* an event's own time (stkrec --snoop), else its interval's start */
	put_uint(b, wall_s(ch, ri->events ? r->ts_ns : ri->iv->start_ns), 4);
	put_uint(b, ri->index, 4);
	put_str(b, ch->host);
	put_uint(b, r->pid, 4);
	put_uint(b, r->tid, 4);
	put_str(b, comm);
	put_str(b, probe ? probe : id);
	put_uint(b, stack, 8);
	put_uint(b, r->count, 8);
	put_uint(b, weight(r->count, ch->unit), 8);
	ch->rows++;
	ch->batch_rows++;
	ch->events = rep_count_add(ch->events, r->count, NULL);
	return b->failed ? -ENOMEM : 0;
}

/* The capture's rows, through a model of its own (its mode decides the markers). */
static int add_rows(struct rep_ch *ch, const struct rep_capture *c, const char *name)
{
	struct rep_model m = { 0 };
	struct rep_model_cfg cfg;
	int err;

	rep_model_cfg_for(&emit_folded, &ch->o, c, &cfg);
	/* rows keep their pid and comm: the model need not tell stacks apart by them */
	cfg.key_pid = cfg.key_comm = false;
	err = rep_model__begin(&m, &ch->o, &cfg);
	if (!err) {
		m.on_row = on_row;
		m.on_row_ctx = ch;
		err = rep_model__add(&m, c, name);
	}
	rep_model__clear(&m);
	return err;
}

/* The capture's row of the captures table. */
static void put_capture(struct rep_ch *ch, const struct rep_capture *c, const char *name)
{
	const char *mode = c->meta ? cap_meta_get(c->meta, "mode") : NULL;
	struct bytes *b = &ch->captures;
	int64_t start = 0, v;
	uint64_t end = 0;
	bool has_start = rep_capture_start_ns(c, &start);
	char format[16];

	if (!has_start || !rep_capture_end_ns(c, &end) || end < (uint64_t)start)
		end = start;
	put_uint(b, ch->id, 8);
	put_str(b, name);
	put_str(b, ch->host);
	put_str(b, c->meta ? cap_meta_get(c->meta, "kernel") : NULL);
	put_str(b, c->meta ? cap_meta_get(c->meta, "arch") : NULL);
	put_uint(b, wall_s(ch, start), 4);
	put_uint(b, ch->has_clock ? (uint64_t)ch->wall_offset + (uint64_t)start : (uint64_t)start,
		 8);
	put_uint(b, end - (uint64_t)start, 8);
	put_str(b, mode ? mode : "count");	/* format.md 4.1, as --sql's captures.mode */
	put_varint(b, c->meta ? c->meta->nprobes : 0);
	for (uint32_t i = 0; c->meta && i < c->meta->nprobes; i++)
		put_str(b, c->meta->probes[i].spec);
	put_uint(b, rep_capture_meta_i64(c, "freq_hz", &v) && v > 0 ? (uint64_t)v : 0, 8);
	put_uint(b, rep_capture_meta_i64(c, "period", &v) && v > 0 ? (uint64_t)v : 0, 8);
	put_uint(b, ch->rows, 8);
	put_uint(b, ch->events, 8);
	snprintf(format, sizeof(format), "%u.%u", c->major, c->minor);
	put_str(b, format);
	put_str(b, rep_capture_state(c->how));
}

int rep_ch__add(struct rep_ch *ch, const struct rep_capture *c, const char *name)
{
	const char *host = c->meta ? cap_meta_get(c->meta, "host") : NULL;
	size_t len = ch->samples.len;
	uint64_t batch_rows = ch->batch_rows;
	struct held held = { 0 };
	int err;

	err = file_id(name, &ch->id);
	if (err) {
		fprintf(stderr, "stkreport: %s: %s\n", name, strerror(-err));
		return err;
	}
	err = idset_add(&ch->captures_seen, ch->id);
	if (err < 0) {
		fprintf(stderr, "stkreport: %s: %s\n", name, strerror(ENOMEM));
		return err;
	}
	if (err)
		err = ask_held(ch, ch->id, &held);
	else	/* given before in this run */
		held = (struct held){ true, 0, true };
	if (err)
		return err;
	if (held.capture && (held.samples || !held.rows)) {
		if (!ch->o.quiet)
			fprintf(stderr, "stkreport: %s: already loaded (capture %" PRIu64 "): "
				"skipped\n", name, ch->id);
		ch->skipped++;
		return 0;
	}
	ch->host = host && *host ? host : "?";
	ch->has_clock = rep_capture_wall_ns(c, 0, &ch->wall_offset);
	ch->unit = count_unit(c);
	ch->rows = ch->events = 0;
	err = add_rows(ch, c, name);
	if (err) {
		fprintf(stderr, "stkreport: %s: %s\n", name, strerror(-err));
		return err;
	}
	if (held.samples) {
		/* its rows are there but not its captures row (something else cut the load):
		 * the row, with what it counts, and not the samples again */
		ch->samples.len = len;
		ch->batch_rows = batch_rows;
	}
	if (!held.capture)
		put_capture(ch, c, name);
	if (ch->captures.failed) {
		fprintf(stderr, "stkreport: %s: %s\n", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	ch->loaded++;
	return ch->samples.len >= BATCH_BYTES ? flush(ch) : 0;
}

int rep_ch__finish(struct rep_ch *ch)
{
	int err = flush(ch);

	if (!err && !ch->o.quiet)
		fprintf(stderr, "# clickhouse: %s, database %s: %u captures loaded (%" PRIu64
			" rows, %" PRIu64 " stacks sent), %u already there\n",
			rep_http__server(ch->http), rep_http__database(ch->http), ch->loaded,
			ch->rows_sent, ch->stacks_new, ch->skipped);
	return err;
}
