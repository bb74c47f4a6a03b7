// SPDX-License-Identifier: MIT
/*
 * output.c: where a recording's captures go (stkrec(8), ALWAYS ON):
 *   - one file, -o FILE;
 *   - rotation (--rotate): a new file at an interval boundary, each a complete capture named
 *     with its start time, FILE-YYYYmmddTHHMMSS.mmmZ.stk (UTC, FILE without its .stk), the
 *     oldest ones removed past --max-files or --max-disk, the files of an earlier run under the
 *     same name counted too (a service that restarts keeps its bound);
 *   - the flight recorder (--flight SECS): the same rotation into memory, segments of a quarter
 *     of SECS in memfds, those that may hold an interval of the last SECS kept (within
 *     --flight-memory); a dump copies those intervals into one file named as a rotated one.
 * run.c writes each capture (header, intervals, END) and resets what the rooms have written at
 * each new one; the writer keeps its own stacks (format.md 4.4), so each file stands alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "write.h"

#define NS_PER_SEC 1000000000ull
#define NS_PER_MS 1000000ull
/* "-YYYYmmddTHHMMSS.mmmZ" */
#define STAMP_LEN 21
#define EXT ".stk"

/* A closed file of the rotation (or a dump), oldest first. */
struct kept {
	char *path;
	uint64_t size;
};

/* An interval a flight segment holds. */
struct span {
	uint64_t start, end;
};

/* A complete capture in memory (--flight). */
struct segment {
	const struct cap_writer *w;	/* writing it; NULL once closed */
	int fd;			/* a memfd */
	uint64_t size;
	struct span *spans;	/* its intervals */
	uint32_t nspans, spans_cap;
};

struct rec_output {
	const struct rec_opts *o;
	/* sized so that dir/NAME fits in PATH_MAX for any NAME of a directory entry */
	char dir[PATH_MAX - NAME_MAX - 2];	/* of the rotated files and dumps */
	char base[NAME_MAX - STAMP_LEN - 8];	/* their names: base, a stamp, EXT */
	char path[PATH_MAX + 32];	/* the last file created or dumped (fits in PATH_MAX) */
	struct kept *kept;
	uint32_t nkept, kept_cap;
	uint64_t largest;	/* the largest file closed: room kept for the next (--max-disk) */
	/* the captures being written: the next one is made before the last is closed */
	struct open_capture {
		const struct cap_writer *w;	/* NULL: a free slot */
		uint64_t start_ns;
		int unnamed;		/* a descriptor of it while it has no name, else -1 */
		char path[PATH_MAX + 32];
	} open[2];
	uint32_t files;		/* files written (rotation) or dumped (--flight) */
	struct segment *segs;	/* --flight: oldest first; the last one is being written */
	uint32_t nsegs, segs_cap;
	uint64_t dropped_ns;	/* --flight: the end of the last segment dropped for memory */
	const char *sudo_user;	/* under sudo, the -o file is root's, not this user's */
};

static bool rotating(const struct rec_output *out)
{
	return out->o->rotate || out->o->flight_s;
}

/* ---- names ---------------------------------------------------------------------------------- */

/* Wall time of a CLOCK_MONOTONIC time, in ms since the epoch. */
static uint64_t wall_ms(uint64_t mono_ns)
{
	struct timespec ts;
	uint64_t now = rec_now_ns(), real;

	clock_gettime(CLOCK_REALTIME, &ts);
	real = (uint64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
	return (real - (now > mono_ns ? now - mono_ns : 0)) / NS_PER_MS;
}

/* out->path: the name of a file starting at ms (UTC). */
static void name_at(struct rec_output *out, uint64_t ms)
{
	time_t s = ms / 1000;
	struct tm tm;
	char stamp[16];

	gmtime_r(&s, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(out->path, sizeof(out->path), "%s/%s-%s.%03uZ" EXT, out->dir, out->base, stamp,
		 (unsigned int)(ms % 1000));
}

/* Is name one of ours: base, a stamp, ext? */
static bool is_ours(const struct rec_output *out, const char *name)
{
	static const char shape[STAMP_LEN + 1] = "-ddddddddTdddddd.dddZ";
	size_t nb = strlen(out->base), n = strlen(name);

	if (n != nb + STAMP_LEN + strlen(EXT) || strncmp(name, out->base, nb) ||
	    strcmp(name + nb + STAMP_LEN, EXT))
		return false;
	for (size_t i = 0; i < STAMP_LEN; i++) {
		char c = name[nb + i];

		if (shape[i] == 'd' ? c < '0' || c > '9' : c != shape[i])
			return false;
	}
	return true;
}

/*
 * A new file without a name yet, in the directory of the files (O_TMPFILE): it gets its name
 * once the file before it is closed (name_file()), so that a recorder killed in between leaves
 * no file after one that is not whole, and nothing when it had no name yet. fd, or -errno
 * (-EOPNOTSUPP where the file system cannot: then it is named at once).
 */
static int create_unnamed(const struct rec_output *out)
{
	int fd = open(out->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd >= 0) {
		fchmod(fd, 0600);	/* format.md 6 */
		return fd;
	}
	return errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : -errno;
}

/* A new file at path (mode 0600, format.md 6): fd, or -errno (-EEXIST: taken). */
static int make_file(const char *path, int unused)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	fchmod(fd, 0600);
	return fd;
}

/* fd, a file from create_unnamed(), named path: 0, or -errno (-EEXIST: taken). */
static int link_file(const char *path, int fd)
{
	char self[32];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

/*
 * out->path for a file starting at ms (since the epoch), or a millisecond later while that name
 * is taken, so that names stay stamps and sort as the files were made: make(path, fd)'s result.
 */
static int claim_name(struct rec_output *out, uint64_t ms, int (*make)(const char *, int), int fd)
{
	int ret = -EEXIST;

	for (int i = 0; i < 1000 && ret == -EEXIST; i++, ms++) {
		name_at(out, ms);
		ret = make(out->path, fd);
	}
	return ret;
}

/* A new file named for ms (claim_name()): fd, or -errno. */
static int create_named(struct rec_output *out, uint64_t ms)
{
	return claim_name(out, ms, make_file, -1);
}

/* fd (from create_unnamed()) named for ms (claim_name()): 0, or -errno. */
static int name_file(struct rec_output *out, int fd, uint64_t ms)
{
	return claim_name(out, ms, link_file, fd);
}

/*
 * A new file of ours for a writer: unnamed with a second descriptor in *unnamed (named later,
 * name_file()), or where the file system cannot, named for ms at once (*unnamed -1). The
 * writer's fd, or -errno.
 */
static int create_file(struct rec_output *out, uint64_t ms, int *unnamed)
{
	int fd = create_unnamed(out), err;

	*unnamed = -1;
	if (fd == -EOPNOTSUPP)
		return create_named(out, ms);
	if (fd < 0)
		return fd;
	*unnamed = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (*unnamed >= 0)
		return fd;
	err = -errno;
	close(fd);
	return err;
}

/* ---- kept files ---------------------------------------------------------------------------- */

static int keep(struct rec_output *out, const char *path, uint64_t size)
{
	char *p = strdup(path);

	if (!p || rec_grow(&out->kept, out->nkept, &out->kept_cap, sizeof(*out->kept), 16)) {
		free(p);
		return -ENOMEM;
	}
	out->kept[out->nkept++] = (struct kept){ p, size };
	if (size > out->largest)
		out->largest = size;
	return 0;
}

static int cmp_kept(const void *a, const void *b)
{
	return strcmp(((const struct kept *)a)->path, ((const struct kept *)b)->path);
}

/* The files an earlier run left under our names: they count towards the bounds. */
static int find_earlier(struct rec_output *out)
{
	DIR *d = opendir(out->dir);
	struct dirent *e;
	char path[PATH_MAX];
	struct stat st;
	int err = 0;

	if (!d)
		return 0;	/* created later, or refused then */
	while (!err && (e = readdir(d))) {
		if (!is_ours(out, e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", out->dir, e->d_name);
		if (!lstat(path, &st) && S_ISREG(st.st_mode) && cap_is_capture_file(path))
			err = keep(out, path, st.st_size);
	}
	closedir(d);
	if (out->nkept)		/* stamps: oldest first */
		qsort(out->kept, out->nkept, sizeof(*out->kept), cmp_kept);
	return err;
}

/*
 * --max-files, --max-disk: remove the oldest files until the ones left, with the file being
 * written, are at most max_files, and take at most max_disk with room for one more file as
 * large as the largest so far. A file that is no longer a capture of ours is left alone.
 */
static void prune(struct rec_output *out)
{
	const struct rec_opts *o = out->o;
	uint64_t total = 0;
	uint32_t drop = 0;
	uint32_t writing = 0;

	for (int i = 0; i < 2 && !o->flight_s; i++)	/* a flight segment is no file */
		writing += out->open[i].w != NULL;

	for (uint32_t i = 0; i < out->nkept; i++)
		total += out->kept[i].size;
	while (drop < out->nkept &&
	       ((o->max_files && out->nkept - drop + writing > o->max_files) ||
		(o->max_disk && total + out->largest > o->max_disk))) {
		struct kept *k = &out->kept[drop++];
		struct stat st;

		if (!lstat(k->path, &st) && S_ISREG(st.st_mode) && cap_is_capture_file(k->path) &&
		    unlink(k->path) && errno != ENOENT)
			rec_err(-errno, "warning: cannot remove %s: %s", k->path, strerror(errno));
		total -= k->size;
		free(k->path);
	}
	if (drop)
		memmove(out->kept, out->kept + drop, (out->nkept - drop) * sizeof(*out->kept));
	out->nkept -= drop;
}

/* ---- the output ------------------------------------------------------------------------------- */

struct rec_output *rec_output__new(const struct rec_opts *o)
{
	struct rec_output *out = calloc(1, sizeof(*out));
	char copy[PATH_MAX], *name;
	size_t n;
	int err;

	if (!out)
		return NULL;
	out->o = o;
	if (!rotating(out))
		return out;
	/* -o DIR/BASE.stk: files DIR/BASE-stamp.stk */
	snprintf(copy, sizeof(copy), "%s", o->output);
	snprintf(out->dir, sizeof(out->dir), "%s", dirname(copy));
	snprintf(copy, sizeof(copy), "%s", o->output);
	name = basename(copy);
	n = strlen(name);
	if (n > strlen(EXT) && !strcmp(name + n - strlen(EXT), EXT))
		name[n - strlen(EXT)] = 0;
	snprintf(out->base, sizeof(out->base), "%s", name);
	if (strlen(o->output) >= sizeof(copy) || strlen(name) >= sizeof(out->base) ||
	    strlen(out->dir) >= sizeof(out->dir) - 1)	/* cut by a snprintf above */
		err = -ENAMETOOLONG;
	else
		err = find_earlier(out);
	if (err) {
		rec_output__free(out);
		errno = -err;
		return NULL;
	}
	return out;
}

static void free_segment(struct segment *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->spans);
}

void rec_output__free(struct rec_output *out)
{
	if (!out)
		return;
	for (uint32_t i = 0; i < out->nkept; i++)
		free(out->kept[i].path);
	free(out->kept);
	for (uint32_t i = 0; i < out->nsegs; i++)
		free_segment(&out->segs[i]);
	free(out->segs);
	free(out);
}

/* A memfd for a new flight segment; the writer gets a duplicate. */
static int new_segment(struct rec_output *out)
{
	struct segment *s;
	int fd, dup_fd;

	if (rec_grow(&out->segs, out->nsegs, &out->segs_cap, sizeof(*out->segs), 8))
		return -ENOMEM;
	fd = memfd_create("stkrec-flight", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0) {
		close(fd);
		return -errno;
	}
	s = &out->segs[out->nsegs++];
	*s = (struct segment){ .fd = fd };
	return dup_fd;
}

static struct open_capture *slot_of(struct rec_output *out, const struct cap_writer *w)
{
	for (int i = 0; i < 2; i++)
		if (out->open[i].w == w)
			return &out->open[i];
	return NULL;
}

static struct segment *segment_of(struct rec_output *out, const struct cap_writer *w)
{
	for (uint32_t i = 0; i < out->nsegs; i++)
		if (out->segs[i].w == w)
			return &out->segs[i];
	return NULL;
}

/*
 * The capture being written at start by w: the -o file, the next of the rotation (unnamed: a
 * descriptor of it, else -1), or of the flight.
 */
static struct cap_writer *opened(struct rec_output *out, struct cap_writer *w, uint64_t start,
				 int unnamed)
{
	struct open_capture *c = slot_of(out, NULL);

	if (!w || !c) {	/* no slot: a third at once, the caller did not close the last */
		cap_writer__close(w);
		if (unnamed >= 0)
			close(unnamed);
		errno = w ? EBUSY : errno;
		return NULL;
	}
	c->w = w;
	c->start_ns = start;
	c->unnamed = unnamed;
	snprintf(c->path, sizeof(c->path), "%s", unnamed >= 0 ? "" : out->path);
	if (out->o->flight_s)
		out->segs[out->nsegs - 1].w = w;
	if (out->o->rotate)
		prune(out);	/* an earlier run's files, and room for this one */
	return w;
}

/* The user root runs for under sudo (SUDO_UID, SUDO_GID; sudo(8)), not root. */
static bool sudo_ids(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	unsigned long long vu, vg;
	char *end_u, *end_g;

	if (geteuid() || !u || !g || *u < '0' || *u > '9' || *g < '0' || *g > '9')
		return false;
	errno = 0;
	vu = strtoull(u, &end_u, 10);
	vg = strtoull(g, &end_g, 10);
	if (errno || *end_u || *end_g || !vu || vu >= UINT32_MAX || vg >= UINT32_MAX)
		return false;
	*uid = vu;
	*gid = vg;
	return true;
}

/*
 * The -o file. `sudo stkrec` makes it as the user who ran sudo, where that user may make a
 * file (the kernel decides, as for them), so that it is theirs: stkreport needs no root, and a
 * root-owned 0600 capture is one they cannot read. Where they may not (a directory only root
 * writes, a file of root's there), it is root's as without sudo, and out->sudo_user says whose
 * it was meant to be.
 */
static struct cap_writer *create_output_file(struct rec_output *out)
{
	const char *path = out->o->output;
	uid_t uid;
	gid_t gid;
	int fd;

	snprintf(out->path, sizeof(out->path), "%s", path);
	if (!sudo_ids(&uid, &gid))
		return cap_writer__open(path);
	fd = cap_create_output_as(path, true, uid, gid);
	if (fd == -EACCES || fd == -EEXIST || fd == -EPERM) {
		out->sudo_user = getenv("SUDO_USER") ? getenv("SUDO_USER") : getenv("SUDO_UID");
		return cap_writer__open(path);
	}
	return cap_writer__open_fd(fd, path);
}

struct cap_writer *rec_output__create(struct rec_output *out, uint64_t start_ns)
{
	struct cap_writer *w;
	int fd, unnamed = -1, err;

	if (!out->o->rotate && !out->o->flight_s)
		return opened(out, create_output_file(out), start_ns, -1);
	fd = out->o->flight_s ? new_segment(out) : create_file(out, wall_ms(start_ns), &unnamed);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	w = cap_writer__open_fd(fd, NULL);
	if (w)
		return opened(out, w, start_ns, unnamed);
	/* no capture without its header (a full disk): nothing is left of it */
	err = errno;
	if (out->o->flight_s)
		free_segment(&out->segs[--out->nsegs]);
	else if (unnamed >= 0)
		close(unnamed);
	else
		unlink(out->path);
	errno = err;
	return NULL;
}

int rec_output__name(struct rec_output *out, const struct cap_writer *w)
{
	struct open_capture *c = slot_of(out, w);
	int err;

	if (!c || c->unnamed < 0)
		return 0;
	err = name_file(out, c->unnamed, wall_ms(c->start_ns));
	if (err)
		return err;
	close(c->unnamed);
	c->unnamed = -1;
	snprintf(c->path, sizeof(c->path), "%s", out->path);
	return 0;
}

void rec_output__discard(struct rec_output *out, struct cap_writer *w)
{
	struct open_capture *c = slot_of(out, w);
	struct segment *s = segment_of(out, w);

	cap_writer__close(w);
	if (s) {
		free_segment(s);
		memmove(s, s + 1, (out->segs + --out->nsegs - s) * sizeof(*s));
	} else if (c && c->unnamed >= 0) {
		close(c->unnamed);	/* it goes with its last descriptor */
	} else if (c) {
		unlink(c->path);
	}
	if (c)
		c->w = NULL;
}

/*
 * --flight: the segments kept are those with an interval that ended in the last SECS, and then
 * no more than --flight-memory. The one being written counts, but stays.
 */
static void drop_segments(struct rec_output *out, uint64_t now_ns)
{
	uint64_t window = (uint64_t)out->o->flight_s * NS_PER_SEC, mem = 0;
	uint32_t drop = 0;

	for (uint32_t i = 0; i < out->nsegs; i++)
		mem += out->segs[i].size;
	while (drop < out->nsegs && !out->segs[drop].w) {
		const struct segment *s = &out->segs[drop];
		bool old = !s->nspans || s->spans[s->nspans - 1].end + window <= now_ns;

		if (!old && mem <= (uint64_t)out->o->flight_mb << 20)
			break;
		if (!old)
			out->dropped_ns = s->spans[s->nspans - 1].end;
		mem -= s->size;
		free_segment(&out->segs[drop++]);
	}
	if (drop)
		memmove(out->segs, out->segs + drop, (out->nsegs - drop) * sizeof(*out->segs));
	out->nsegs -= drop;
}

void rec_output__interval(struct rec_output *out, const struct cap_writer *w, uint64_t start_ns,
			  uint64_t end_ns)
{
	struct segment *s = segment_of(out, w);

	if (!s)
		return;
	/* without room the segment just counts as old sooner: memory, not correctness */
	if (!rec_grow(&s->spans, s->nspans, &s->spans_cap, sizeof(*s->spans), 16))
		s->spans[s->nspans++] = (struct span){ start_ns, end_ns };
}

void rec_output__close(struct rec_output *out, struct cap_writer *w, uint64_t now_ns)
{
	struct open_capture *c = slot_of(out, w);
	struct segment *s = segment_of(out, w);
	uint64_t size = cap_writer__size(w);	/* the whole file: chunks are written by now */

	cap_writer__close(w);
	if (!c)
		return;
	c->w = NULL;
	if (c->unnamed >= 0) {	/* closed before the caller named it: it keeps its data */
		int err = name_file(out, c->unnamed, wall_ms(c->start_ns));

		if (err)
			rec_err(err, "warning: a capture is lost: it cannot be named %s: %s",
				out->path, strerror(-err));
		snprintf(c->path, sizeof(c->path), "%s", out->path);
		close(c->unnamed);
		c->unnamed = -1;
	}
	if (s) {
		s->w = NULL;
		s->size = size;
		drop_segments(out, now_ns);
		return;
	}
	if (!out->o->rotate)
		return;		/* -o FILE */
	out->files++;
	if (keep(out, c->path, size))
		rec_err(-ENOMEM, "warning: %s will not be removed by --max-files or --max-disk",
			c->path);
	prune(out);
}

bool rec_output__due(struct rec_output *out, const struct cap_writer *w, uint64_t now_ns)
{
	const struct rec_opts *o = out->o;
	const struct open_capture *c = slot_of(out, w);
	/* at the interval end nearest the time: wake-ups jitter by a few ms either way */
	uint64_t age = (c ? now_ns - c->start_ns : 0) + o->interval_s * NS_PER_SEC / 2;

	if (o->flight_s)	/* a quarter of the window a segment: at most a fifth more memory */
		return age >= ((uint64_t)o->flight_s * NS_PER_SEC + 3) / 4;
	return (o->rotate_ns && age >= o->rotate_ns) ||
	       (o->rotate_bytes && cap_writer__size(w) >= o->rotate_bytes);
}

const char *rec_output__sudo_user(const struct rec_output *out)
{
	return out->sudo_user;
}

const char *rec_output__path(const struct rec_output *out)
{
	return out->path;
}

uint32_t rec_output__files(const struct rec_output *out)
{
	return out->files;
}

/* ---- the flight recorder's dump ------------------------------------------------------------- */

/* A dump being written: the intervals that ended after `from`, renumbered from 0. */
struct dump {
	struct cap_writer *w;
	uint64_t from;
	bool meta;		/* written */
	uint64_t first_start;	/* of its first interval */
	uint32_t seq;		/* of the interval being written */
	bool last_written;	/* the segment's last interval chunk read was written */
	uint32_t last_seq;	/* its seq in the segment */
	struct rec_dump *info;
	struct written_id { uint32_t len; uint8_t id[CAP_BUILD_ID_MAX]; } *ids;
	uint32_t nids, ids_cap;	/* objects written: once per build-id and capture */
	struct cap_ksym *ksyms;	/* kernel symbols written since the last KSYMS (strings owned) */
	uint32_t nksyms, ksyms_cap;
	uint8_t *codes;		/* bit per code id written (CODES): stkrec's ids count from 1 */
	uint32_t codes_len;	/* bytes */
};

static void forget_ksyms(struct dump *d)
{
	for (uint32_t i = 0; i < d->nksyms; i++) {
		free(d->ksyms[i].name);
		free(d->ksyms[i].module);
	}
	d->nksyms = 0;
}

/* Remember a symbol written (copied: the segment's records go); without room, it may repeat. */
static void remember_ksym(struct dump *d, const struct cap_ksym *k)
{
	struct cap_ksym c = *k;

	c.name = strdup(k->name ? k->name : "");
	c.module = k->module ? strdup(k->module) : NULL;
	if (c.name && (c.module || !k->module) &&
	    !rec_grow(&d->ksyms, d->nksyms, &d->ksyms_cap, sizeof(*d->ksyms), 256)) {
		d->ksyms[d->nksyms++] = c;
		return;
	}
	free(c.name);
	free(c.module);
}

/* The segment's META with start.mono_ns set to the dump's first interval. */
static int put_meta(struct dump *d, const struct cap_meta *m)
{
	struct cap_record rec = { .type = CAP_CHUNK_META, .meta = *m };
	char start[24];
	int err;

	rec.meta.kv = malloc((m->nkv ? m->nkv : 1) * sizeof(*m->kv));
	if (!rec.meta.kv)
		return -ENOMEM;
	snprintf(start, sizeof(start), "%" PRIu64, d->first_start);
	for (uint32_t i = 0; i < m->nkv; i++) {
		rec.meta.kv[i] = m->kv[i];
		if (!strcmp(m->kv[i].key, "start.mono_ns"))
			rec.meta.kv[i].value = start;
	}
	err = cap_writer__put(d->w, &rec);
	free(rec.meta.kv);
	d->meta = true;
	return err;
}

static bool id_written(struct dump *d, const struct cap_object *obj)
{
	for (uint32_t i = 0; i < d->nids; i++)
		if (d->ids[i].len == obj->build_id_len &&
		    !memcmp(d->ids[i].id, obj->build_id, obj->build_id_len))
			return true;
	if (!rec_grow(&d->ids, d->nids, &d->ids_cap, sizeof(*d->ids), 64)) {
		d->ids[d->nids].len = obj->build_id_len;
		memcpy(d->ids[d->nids++].id, obj->build_id, obj->build_id_len);
	}
	return false;
}

/* format.md 4.8: each object once per capture, though each segment holds the ones it needs. */
static int put_objects(struct dump *d, const struct cap_objects *os)
{
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS };
	int err = 0;

	rec.objects.count = 1;
	for (uint32_t i = 0; i < os->count && !err; i++) {
		if (id_written(d, &os->objs[i]))
			continue;
		rec.objects.objs = &os->objs[i];
		err = cap_writer__put(d->w, &rec);
	}
	return err;
}

/* Code id id written to the dump already; remembered now if not (ids past 2^24 may repeat). */
static bool code_written(struct dump *d, uint32_t id)
{
	uint32_t byte = id / 8, len = d->codes_len;
	bool seen;

	if (byte >= len) {
		uint8_t *p;

		while (len <= byte && len < (1u << 21))
			len = len ? 2 * len : 256;
		if (byte >= len || !(p = realloc(d->codes, len)))
			return false;
		memset(p + d->codes_len, 0, len - d->codes_len);
		d->codes = p;
		d->codes_len = len;
	}
	seen = d->codes[byte] & (1u << id % 8);
	d->codes[byte] |= 1u << id % 8;
	return seen;
}

/* format.md 4.11: each code object's entry once per capture, though each segment holds the
 * ones its stacks name. */
static int put_codes(struct dump *d, const struct cap_codes *cs)
{
	struct cap_record rec = { .type = CAP_CHUNK_CODES };
	int err;

	rec.codes.codes = malloc((cs->count ? cs->count : 1) * sizeof(*cs->codes));
	if (!rec.codes.codes)
		return -ENOMEM;
	for (uint32_t i = 0; i < cs->count; i++)
		if (!code_written(d, cs->codes[i].id))
			rec.codes.codes[rec.codes.count++] = cs->codes[i];
	err = rec.codes.count ? cap_writer__put(d->w, &rec) : 0;
	free(rec.codes.codes);
	return err;
}

static bool ksym_eq(const struct cap_ksym *a, const struct cap_ksym *b)
{
	return a->addr == b->addr && a->size == b->size &&
	       !strcmp(a->name ? a->name : "", b->name ? b->name : "") &&
	       !strcmp(a->module ? a->module : "", b->module ? b->module : "");
}

/* format.md 4.10: a symbol once per capture, and again only when it changed; each segment
 * holds the ones its rows need. */
static int put_ksyms_add(struct dump *d, const struct cap_ksyms *ks, struct cap_ksym *buf)
{
	struct cap_record rec = { .type = CAP_CHUNK_KSYMS_ADD, .ksyms = { ks->flags, 0, buf } };

	for (uint32_t i = 0; i < ks->count; i++) {
		bool seen = false;

		for (uint32_t j = 0; j < d->nksyms && !seen; j++)
			seen = ksym_eq(&d->ksyms[j], &ks->syms[i]);
		if (seen)
			continue;
		buf[rec.ksyms.count++] = ks->syms[i];
		remember_ksym(d, &ks->syms[i]);
	}
	if (!rec.ksyms.count && !(ks->flags & CAP_KSYMS_F_HIDDEN))
		return 0;
	return cap_writer__put(d->w, &rec);
}

/*
 * An interval chunk of a segment: written, renumbered from 0, when it ended after d->from. The
 * parts of a split interval (format.md 3.2) follow one another in one segment with one seq;
 * each segment numbers its intervals from 0.
 */
static int put_interval(struct dump *d, const struct cap_stacks *stacks, uint16_t type,
			const struct cap_interval *iv)
{
	struct cap_record rec = { .type = type };
	bool part = d->last_written && iv->seq == d->last_seq;

	d->last_written = iv->end_ns > d->from;
	d->last_seq = iv->seq;
	if (!d->last_written)
		return 0;
	if (!part && d->info->nintervals++)
		d->seq++;
	cap_stacks__view(stacks, iv, &rec.interval);
	rec.interval.seq = d->seq;
	for (uint32_t i = 0; i < iv->nrows; i++)
		d->info->events += iv->rows[i].count;
	d->info->end_ns = iv->end_ns;
	return cap_writer__put(d->w, &rec);
}

static int put_losses(struct dump *d, const struct cap_losses *l)
{
	struct cap_record rec = { .type = CAP_CHUNK_LOSSES, .losses = *l };

	if (!d->last_written || l->interval_seq != d->last_seq)
		return 0;
	rec.losses.interval_seq = d->seq;
	return cap_writer__put(d->w, &rec);
}

/* One decoded record of a segment into the dump. */
static int copy_record(struct dump *d, const struct cap_stacks *stacks, const struct cap_record *r,
		       struct cap_ksym *buf)
{
	switch (r->type) {
	case CAP_CHUNK_META:
		return d->meta ? 0 : put_meta(d, &r->meta);
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS:
		return put_interval(d, stacks, r->type, &r->interval);
	case CAP_CHUNK_LOSSES:
		return put_losses(d, &r->losses);
	case CAP_CHUNK_OBJECTS:
		return put_objects(d, &r->objects);
	case CAP_CHUNK_KSYMS_ADD:
		return put_ksyms_add(d, &r->ksyms, buf);
	case CAP_CHUNK_CODES:
		return put_codes(d, &r->codes);
	case CAP_CHUNK_KSYMS:
		forget_ksyms(d);	/* a new table: every symbol counts as new after it */
		return cap_writer__put(d->w, r);
	case CAP_CHUNK_END:
		return 0;	/* the dump's own comes last */
	default:		/* PROCS, PERFMAP (repeated lines name as before: 4.9) */
		return cap_writer__put(d->w, r);
	}
}

/* Keep an interval record r for the segment's stacks, which point into it. 0 or -ENOMEM. */
static int hold(struct cap_record ***recs, uint32_t *n, uint32_t *cap, struct cap_record *r)
{
	if (rec_grow(recs, *n, cap, sizeof(**recs), 64))
		return -ENOMEM;
	(*recs)[(*n)++] = r;
	return 0;
}

/*
 * Every record of segment s into the dump, in order. Interval records stay decoded until the
 * segment is done: the segment's stacks (struct cap_stacks) point into them.
 */
static int copy_segment(struct dump *d, const struct segment *s)
{
	struct cap_record **held = NULL, *r;
	uint32_t nheld = 0, cap = 0;
	struct cap_reader *rd;
	struct cap_ksym *buf = NULL;
	struct cap_stacks stacks;
	struct cap_chunk ch;
	uint16_t major;
	void *map;
	int n = 0, err = 0;

	map = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, s->fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	rd = cap_reader__open_mem(map, s->size);
	if (!rd) {
		munmap(map, s->size);
		return -errno;
	}
	cap_reader__version(rd, &major, NULL);
	cap_stacks__init(&stacks, major, NULL);
	d->last_written = false;
	while (!err && (n = cap_reader__next(rd, &ch)) > 0 && !(err = cap_record__decode(&ch, &r))) {
		bool interval = r->type == CAP_CHUNK_INTERVAL || r->type == CAP_CHUNK_EVENTS;

		if (interval) {
			err = hold(&held, &nheld, &cap, r);
			if (err)
				cap_record__free(r);
			else
				err = cap_stacks__add(&stacks, &r->interval);
		} else if (r->type == CAP_CHUNK_KSYMS_ADD) {
			free(buf);
			buf = malloc((r->ksyms.count ? r->ksyms.count : 1) * sizeof(*buf));
			err = buf ? 0 : -ENOMEM;
		}
		if (!err)
			err = copy_record(d, &stacks, r, buf);
		if (!interval)
			cap_record__free(r);
	}
	if (!err && n < 0)
		err = n;
	cap_stacks__release(&stacks);
	for (uint32_t i = 0; i < nheld; i++)
		cap_record__free(held[i]);
	free(held);
	free(buf);
	cap_reader__close(rd);
	munmap(map, s->size);
	return err;
}

/* The first interval that ended after from, in the segments; 0 if none. */
static uint64_t first_start(const struct rec_output *out, uint64_t from, uint32_t *first_seg)
{
	for (uint32_t i = 0; i < out->nsegs; i++)
		for (uint32_t j = 0; j < out->segs[i].nspans; j++)
			if (out->segs[i].spans[j].end > from) {
				*first_seg = i;
				return out->segs[i].spans[j].start;
			}
	return 0;
}

int rec_output__dump(struct rec_output *out, uint64_t now_ns, struct rec_dump *info)
{
	/*
	 * The intervals that ended in the last SECS, to the nearest interval end: a dump at the
	 * end of -D lands on a boundary, where an interval ending a few microseconds either side
	 * of SECS ago would be in or out by chance.
	 */
	uint64_t half = (uint64_t)out->o->interval_s * NS_PER_SEC / 2;
	struct dump d = { .from = now_ns - (uint64_t)out->o->flight_s * NS_PER_SEC + half,
			  .info = info };
	uint32_t first = 0;
	int fd, unnamed = -1, err = 0;

	memset(info, 0, sizeof(*info));
	info->lost_ns = out->dropped_ns > d.from ? out->dropped_ns - d.from : 0;
	d.first_start = first_start(out, d.from, &first);
	if (!d.first_start)
		return 0;
	/* named once written: a collector watching the directory never sees half a dump */
	fd = create_file(out, wall_ms(d.first_start), &unnamed);
	if (fd < 0)
		return fd;
	d.w = cap_writer__open_fd(fd, NULL);
	if (!d.w) {
		err = -errno;
		if (unnamed < 0)
			unlink(out->path);
		goto out;
	}
	for (uint32_t i = first; i < out->nsegs && !err; i++)
		if (!out->segs[i].w)	/* the one being written has no interval yet */
			err = copy_segment(&d, &out->segs[i]);
	if (!err) {
		struct cap_record end = { .type = CAP_CHUNK_END };

		end.end = (struct cap_end){ info->nintervals, info->end_ns, info->events };
		err = cap_writer__put(d.w, &end);
	}
	if (!err)
		err = cap_writer__finish(d.w);
	info->bytes = cap_writer__size(d.w);
	info->start_ns = d.first_start;
	cap_writer__close(d.w);
	/* a dump cut by a full disk is a capture up to its last chunk: kept, and said */
	if (unnamed >= 0) {
		int named = name_file(out, unnamed, wall_ms(d.first_start));

		if (named) {
			err = err ? err : named;
			goto out;
		}
	}
	if (keep(out, out->path, info->bytes) && !err)
		err = -ENOMEM;
	out->files++;
	prune(out);
out:
	if (unnamed >= 0)
		close(unnamed);
	free(d.ids);
	free(d.codes);
	forget_ksyms(&d);
	free(d.ksyms);
	return err;
}
