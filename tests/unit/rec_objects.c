// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/objects.c and perfmap.c: perf-map lines, build-ids and pseudo ids of the
 * objects behind this test's own mappings, the vdso, and the OBJECTS record written for them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "../test.h"
#include "../../record/rec.h"

__attribute__((noinline)) int rec_objects_test_marker(int x)
{
	return x * 3 + 1;
}

static void test_perfmap_line(void)
{
	uint64_t start = 0, size = 0;
	char buf[64];
	const char *name = buf;	/* a pointer: T_EQ_STR tests it for NULL */
	int r;

	r = rec_perfmap_line("7f0000001040 12 jit_stub\n", &start, &size, buf, sizeof(buf));
	(void)T_EQ_INT("test_rec_perfmap_line_rc", 1, r);
	(void)T_EQ_U64("test_rec_perfmap_line_start", 0x7f0000001040ull, start);
	(void)T_EQ_U64("test_rec_perfmap_line_size", 0x12, size);
	(void)T_EQ_STR("test_rec_perfmap_line_name", "jit_stub", name);
	r = rec_perfmap_line("3a00 40 LazyCompile:*foo bar.js:1\n", &start, &size, buf,
			     sizeof(buf));
	(void)T_EQ_STR("test_rec_perfmap_line_spaces", "LazyCompile:*foo bar.js:1",
		       r == 1 ? name : "(rc 0)");
	(void)T_EQ_INT("test_rec_perfmap_line_garbage", 0,
		       rec_perfmap_line("hello world\n", &start, &size, buf, sizeof(buf)));
	(void)T_EQ_INT("test_rec_perfmap_line_no_name", 0,
		       rec_perfmap_line("1000 20\n", &start, &size, buf, sizeof(buf)));
}

/* The executable mapping of this process that contains addr, from /proc/self/maps. */
static int own_mapping(uintptr_t addr, struct cap_mapping *m, char *path, size_t psz)
{
	char line[PATH_MAX + 256];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = rec_maps_line(line, m, path, psz) == 1 && addr >= m->start &&
			addr < m->end;
	if (f)
		fclose(f);
	m->path = path;
	return found;
}

static void test_build_ids(struct rec_objects *os)
{
	char path[PATH_MAX];
	struct cap_mapping m;
	struct rec_object *obj;

	if (!own_mapping((uintptr_t)rec_objects_test_marker, &m, path, sizeof(path))) {
		T_FAIL("test_rec_objects_own_mapping", "no mapping of the test binary");
		return;
	}
	obj = rec_objects__get(os, getpid(), &m, false);
	(void)T_CHECK("test_rec_objects_exe_object", obj != NULL, "no object for %s", path);
	(void)T_EQ_INT("test_rec_objects_exe_build_id_len", 20, m.build_id_len);
	(void)T_EQ_INT("test_rec_objects_exe_flags", 0, m.flags);
	(void)T_CHECK("test_rec_objects_cached", rec_objects__get(os, getpid(), &m, false) == obj,
		      "a second lookup opened the object again");
	if (own_mapping(getauxval(AT_SYSINFO_EHDR), &m, path, sizeof(path))) {
		(void)T_CHECK("test_rec_objects_vdso", rec_objects__get(os, getpid(), &m, false),
			      "no object for the vdso");
		(void)T_CHECK("test_rec_objects_vdso_build_id", m.build_id_len > 0,
			      "the vdso mapping got no build-id");
	}
}

/* An executable mapping of a file without a GNU build-id: head, tail and size identify it. */
static void test_pseudo_id(struct rec_objects *os)
{
	char tmpl[] = "/tmp/rec_objects.XXXXXX", path[PATH_MAX];
	static uint8_t buf[3 * 4096];
	struct cap_mapping m;
	uint32_t head, tail;
	void *p = MAP_FAILED;
	int fd = mkstemp(tmpl);

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
	    (p = mmap(NULL, sizeof(buf), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		printf("skip test_rec_objects_pseudo_id: cannot map a file executable here\n");
		goto out;
	}
	if (!own_mapping((uintptr_t)p, &m, path, sizeof(path))) {
		T_FAIL("test_rec_objects_pseudo_id", "mapping not found");
		goto out;
	}
	rec_objects__get(os, getpid(), &m, false);
	head = cap_crc32c(0, buf, 4096);
	tail = cap_crc32c(0, buf + sizeof(buf) - 4096, 4096);
	(void)T_EQ_INT("test_rec_objects_pseudo_flag", CAP_MAP_F_PSEUDO_ID,
		       m.flags & (CAP_MAP_F_PSEUDO_ID | CAP_MAP_F_NO_BUILD_ID));
	(void)T_EQ_INT("test_rec_objects_pseudo_len", 16, m.build_id_len);
	(void)T_CHECK("test_rec_objects_pseudo_bytes",
		      !memcmp(m.build_id, &head, 4) && !memcmp(m.build_id + 4, &tail, 4) &&
			      m.build_id[8] == (sizeof(buf) & 0xff) &&
			      m.build_id[9] == (sizeof(buf) >> 8),
		      "expected crc32c(head), crc32c(tail), size (LE)");
out:
	if (p != MAP_FAILED)
		munmap(p, sizeof(buf));
	if (fd >= 0) {
		close(fd);
		unlink(tmpl);
	}
}

static const struct cap_object *find_object(const struct cap_record *rec, const char *suffix)
{
	for (uint32_t i = 0; i < rec->objects.count; i++) {
		const char *path = rec->objects.objs[i].path;
		size_t n = strlen(path), k = strlen(suffix);

		if (n >= k && !strcmp(path + n - k, suffix))
			return &rec->objects.objs[i];
	}
	return NULL;
}

/* Write the OBJECTS record of the test binary and read it back. */
static void test_put(struct rec_objects *os)
{
	char tmpl[] = "/tmp/rec_objects_cap.XXXXXX", path[PATH_MAX], exe[PATH_MAX];
	const struct cap_object *o = NULL;
	struct rec_opts opts = { 0 };
	struct cap_record *rec = NULL;
	struct cap_reader *r = NULL;
	struct cap_writer *w = NULL;
	struct rec_object *obj;
	struct cap_mapping m;
	struct cap_chunk c;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd = mkstemp(tmpl), err, found = 0;

	exe[n > 0 ? n : 0] = 0;
	if (fd < 0 || !own_mapping((uintptr_t)rec_objects_test_marker, &m, path, sizeof(path)))
		goto fail;
	close(fd);
	obj = rec_objects__get(os, getpid(), &m, false);
	w = cap_writer__open(tmpl);
	if (!obj || !w)
		goto fail;
	err = rec_objects__put(os, &obj, 1, &opts, w);
	if (err == -ENOTSUP) {
		printf("skip test_rec_objects_put: format/ cannot write OBJECTS yet\n");
		goto out;
	}
	(void)T_EQ_INT("test_rec_objects_put_rc", 0, err);
	(void)T_EQ_INT("test_rec_objects_put_again_rc", 0, rec_objects__put(os, &obj, 1, &opts, w));
	cap_writer__close(w);
	w = NULL;
	r = cap_reader__open(tmpl);
	while (r && cap_reader__next(r, &c) == 1) {
		if (c.type != CAP_CHUNK_OBJECTS || cap_record__decode(&c, &rec))
			continue;
		found++;
		o = o ? o : find_object(rec, strrchr(exe, '/'));
		if (o)
			break;
		cap_record__free(rec);
		rec = NULL;
	}
	(void)T_EQ_INT("test_rec_objects_put_once", 1, found);
	if (!T_CHECK("test_rec_objects_put_found", o != NULL, "no object record for %s", exe))
		goto out;
	(void)T_CHECK("test_rec_objects_put_symtab", o->flags & CAP_OBJ_F_SYMTAB, "flags %#x",
		      o->flags);
	(void)T_CHECK("test_rec_objects_put_segments", o->nsegs >= 2, "%u PT_LOAD segments",
		      o->nsegs);
	(void)T_EQ_U64("test_rec_objects_put_not_whole", 0, o->data_len);
	found = 0;
	for (uint32_t i = 0; i < o->nsyms; i++) {
		found |= !strcmp(o->syms[i].name, "rec_objects_test_marker");
		if (i && o->syms[i].addr <= o->syms[i - 1].addr)
			T_FAIL("test_rec_objects_put_sorted", "symbol %u not after %u", i, i - 1);
	}
	(void)T_CHECK("test_rec_objects_put_marker", found, "rec_objects_test_marker missing");
	goto out;
fail:
	T_FAIL("test_rec_objects_put", "setup failed: %s", strerror(errno));
out:
	cap_record__free(rec);
	cap_reader__close(r);
	cap_writer__close(w);
	unlink(tmpl);
}

int main(void)
{
	struct rec_objects *os = rec_objects__new(NULL);

	test_perfmap_line();
	if (!os) {
		T_FAIL("test_rec_objects_new", "%s", strerror(errno));
		T_EXIT();
	}
	test_build_ids(os);
	test_pseudo_id(os);
	test_put(os);
	rec_objects__free(os);
	(void)rec_objects_test_marker(1);
	T_EXIT();
}
