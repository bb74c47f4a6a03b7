// SPDX-License-Identifier: MIT
/*
 * run.c: stkreport after option parsing: load, symbolize and merge, print, summarise, and name
 * any damage once, where the file and offset are known.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/*
 * The reader refuses a newer major version before telling us which one; the version sits at a
 * frozen place of the file header (format.md 2: magic[8], major u16 LE, minor u16 LE).
 */
static void print_newer(const char *path)
{
	unsigned char h[12];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, h, sizeof(h));
		close(fd);
	}
	if (n == (ssize_t)sizeof(h))
		fprintf(stderr, "stkreport: %s: capture format %u.%u is newer than this stkreport "
			"(%d.x)\n", path, h[8] | h[9] << 8, h[10] | h[11] << 8, CAP_MAJOR);
	else
		fprintf(stderr,
			"stkreport: %s: capture format is newer than this stkreport (%d.x)\n", path,
			CAP_MAJOR);
}

static int open_error(const char *path, int err)
{
	switch (err) {
	case EINVAL:
		fprintf(stderr, "stkreport: %s: not a capture file (bad magic)\n", path);
		break;
	case ENODATA:
		fprintf(stderr, "stkreport: %s: not a capture file (shorter than its header)\n",
			path);
		break;
	case ENOTSUP:
		print_newer(path);
		break;
	case EBADMSG:
		fprintf(stderr, "stkreport: %s: file header: %s\n", path, strerror(err));
		break;
	default:
		fprintf(stderr, "stkreport: %s: %s\n", path, strerror(err));
	}
	return -err;
}

/* Warning or error for a capture whose walk ended early. Returns the exit error. */
static int report_damage(const char *path, const struct rep_capture *c)
{
	switch (c->how) {
	case REP_END_TRUNCATED:
		/* expected after kill -9 or a full disk: what was read is a valid report */
		fprintf(stderr,
			"stkreport: %s: truncated after interval %u (chunk %u at 0x%llx)\n", path,
			c->nintervals, c->err_chunk, (unsigned long long)c->err_offset);
		return 0;
	case REP_END_ERROR:
		fprintf(stderr, "stkreport: %s: chunk %u at 0x%llx: %s\n", path, c->err_chunk,
			(unsigned long long)c->err_offset, strerror(-c->err));
		return c->err;
	default:
		return 0;
	}
}

int rep_run(const struct rep_opts *o)
{
	struct rep_model m = { 0 };
	struct rep_capture *c;
	const struct emitter *e;
	int err;

	c = rep_capture__load(o->input);
	if (!c)
		return open_error(o->input, errno);
	e = rep_pick_emitter(o, rep_capture_is_profile(c));
	err = rep_emit(stdout, c, o, e, &m);
	if (err) {
		fprintf(stderr, "stkreport: %s: %s\n", err == -EIO ? "standard output" : o->input,
			strerror(-err));
		goto out;
	}
	if (!o->quiet)
		rep_summary(stderr, o->input, c, &m);
	err = report_damage(o->input, c);
out:
	rep_model__clear(&m);
	rep_capture__free(c);
	return err;
}

int rep_fuzz_one(const void *buf, size_t len, FILE *sink)
{
	/* option sets that together reach every branch of every emitter */
	static const struct rep_opts variants[] = {
		{ .quiet = true },
		{ .perpid = true, .delimited = true, .offset = true, .verbose = true },
		{ .timestamp = true, .annotations = true, .kernel_only = true },
		{ .user_only = true, .delimited = true, .tree_min_pct = 1 },
	};
	const struct emitter *const *e;
	struct rep_capture *c;
	unsigned int i;
	int err = 0;

	c = rep_capture__load_mem(buf, len);
	if (!c)
		return errno == ENOMEM ? -ENOMEM : 0;
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]) && !err; i++) {
		struct rep_opts o = variants[i];

		o.input = "fuzz";
		o.no_objects = true;
		for (e = rep_emitters; *e && !err; e++) {
			struct rep_model m = { 0 };

			err = rep_emit(sink, c, &o, *e, &m);
			if (!err && i == 0)
				rep_summary(sink, o.input, c, &m);
			rep_model__clear(&m);
		}
	}
	rep_capture__free(c);
	return err == -EIO ? 0 : err;
}
