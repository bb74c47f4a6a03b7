// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/proc/objects.c, symbolize/debugfile.c and perfmap.c: perf-map lines,
 * build-ids and pseudo
 * ids of the objects behind this test's own mappings, the vdso, and the OBJECTS record written for
 * them; for a stripped copy of this program, the symbols of its debug file added to the record
 * when the debug file is where it belongs and carries the right build-id or CRC, and only then;
 * for copies deleted while mapped, the whole bytes only when they tell more than the symbols
 * (the copies are made with the binutils' strip and objcopy; skipped without them).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../test.h"
#include "../../record/rec.h"

__attribute__((noinline)) int rec_objects_test_marker(int x)
{
	return x * 3 + 1;
}

/* A local function: in a stripped copy, only the debug file's .symtab names it. */
static __attribute__((noinline, used)) int rec_objects_local_marker(int x)
{
	return x * 5 + 2;
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
	(void)T_EQ_INT("test_rec_perfmap_line_blank_name", 0,
		       rec_perfmap_line("1000 20 \r\n", &start, &size, buf, sizeof(buf)));
	r = rec_perfmap_line("\t0x7F00000010aB\t0X1f   v8::Foo\r\n", &start, &size, buf,
			     sizeof(buf));
	(void)T_EQ_INT("test_rec_perfmap_line_0x_tabs_rc", 1, r);
	(void)T_EQ_U64("test_rec_perfmap_line_0x_start", 0x7f00000010abull, start);
	(void)T_EQ_U64("test_rec_perfmap_line_0x_size", 0x1f, size);
	(void)T_EQ_STR("test_rec_perfmap_line_0x_name", "v8::Foo", r == 1 ? name : "(rc 0)");
	r = rec_perfmap_line("ffffffffffffffff 1 top\n", &start, &size, buf, sizeof(buf));
	(void)T_EQ_U64("test_rec_perfmap_line_16_digits", ~0ull, r == 1 ? start : 0);
	(void)T_EQ_INT("test_rec_perfmap_line_17_digits", 0,
		       rec_perfmap_line("10000000000000000 1 big\n", &start, &size, buf,
					sizeof(buf)));
	(void)T_EQ_INT("test_rec_perfmap_line_glued_name", 0,
		       rec_perfmap_line("1000 20name\n", &start, &size, buf, sizeof(buf)));
	(void)T_EQ_INT("test_rec_perfmap_line_sign", 0,
		       rec_perfmap_line("-1000 20 neg\n", &start, &size, buf, sizeof(buf)));
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

/* The next OBJECTS record r holds (the caller frees it), or NULL at its end. */
static struct cap_record *next_objects(struct cap_reader *r)
{
	struct cap_record *rec;
	struct cap_chunk c;

	while (r && cap_reader__next(r, &c) == 1)
		if (c.type == CAP_CHUNK_OBJECTS && !cap_record__decode(&c, &rec))
			return rec;
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
	while ((rec = next_objects(r))) {
		found++;
		o = find_object(rec, strrchr(exe, '/'));
		if (o)
			break;	/* rec holds o */
		cap_record__free(rec);
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


/* ---- debug files of stripped objects (symbolize/debugfile.c) ------------------------------ */

static char dbg_tmp[] = "/tmp/rec_objects_dbg.XXXXXX";

/* What the OBJECTS record of one object says. */
struct written {
	bool found;
	uint32_t flags;
	bool global, local;	/* names rec_objects_test_marker, rec_objects_local_marker */
	bool sorted;
	uint64_t data_len;
};

/*
 * Map the file at path executable here and write its OBJECTS record with a new rec_objects
 * looking for debug files in dirs (root and cache relative to dbg_tmp, "" for none), as opts
 * ask. lost: the file is deleted once it is open, as a binary deleted while it runs.
 */
static struct written write_record(const char *path, const char *root, const char *cache,
				   bool lost, const struct rec_opts *opts)
{
	struct written out = { 0 };
	char mapped[PATH_MAX], cap[PATH_MAX];
	struct elfobj_debug_dirs dirs = { 0 };
	struct rec_objects *os = rec_objects__new(NULL);
	struct cap_writer *w = NULL;
	struct cap_reader *r = NULL;
	struct cap_record *rec = NULL;
	struct rec_object *obj;
	struct cap_mapping m;
	struct stat st;
	void *p = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (*root)
		snprintf(dirs.root, sizeof(dirs.root), "%s/%s", dbg_tmp, root);
	if (*cache)
		snprintf(dirs.cache[0], sizeof(dirs.cache[0]), "%s/%s", dbg_tmp, cache);
	snprintf(cap, sizeof(cap), "%s/cap.stk", dbg_tmp);
	if (!os || fd < 0 || fstat(fd, &st) ||
	    (p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)) == MAP_FAILED ||
	    !own_mapping((uintptr_t)p, &m, mapped, sizeof(mapped)))
		goto out;
	rec_objects__set_debug_dirs(os, &dirs);
	obj = rec_objects__get(os, getpid(), &m, false);
	if (lost)
		unlink(path);
	unlink(cap);
	w = cap_writer__open(cap);
	/* queued as rec_procs__hit_objects() does: that asks whether the file is deleted */
	if (!obj || !w || !rec_object__queue(os, obj) || rec_objects__put(os, &obj, 1, opts, w))
		goto out;
	cap_writer__close(w);
	w = NULL;
	r = cap_reader__open(cap);
	while (!out.found && (rec = next_objects(r))) {
		for (uint32_t i = 0; i < rec->objects.count; i++) {
			const struct cap_object *o = &rec->objects.objs[i];

			if (strcmp(o->path, path))
				continue;
			out.found = true;
			out.flags = o->flags;
			out.data_len = o->data_len;
			out.sorted = true;
			for (uint32_t k = 0; k < o->nsyms; k++) {
				out.global |= !strcmp(o->syms[k].name, "rec_objects_test_marker");
				out.local |= !strcmp(o->syms[k].name, "rec_objects_local_marker");
				out.sorted &= !k || o->syms[k].addr > o->syms[k - 1].addr;
			}
		}
		cap_record__free(rec);
		rec = NULL;
	}
out:
	cap_reader__close(r);
	cap_writer__close(w);
	if (p != MAP_FAILED)
		munmap(p, st.st_size);
	if (fd >= 0)
		close(fd);
	rec_objects__free(os);
	return out;
}

static struct written record_of(const char *path, const char *root, const char *cache)
{
	return write_record(path, root, cache, false, &(struct rec_opts){ 0 });
}

#define F_UNION (CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DYNSYM | CAP_OBJ_F_DEBUGFILE)

/* A record that holds the debug file's symbols (name), or one that must not (name_not). */
static void expect_debug(const char *name, struct written got, bool want)
{
	if (!T_CHECK(name, got.found, "no OBJECTS record"))
		return;
	got.flags &= ~CAP_OBJ_F_PSEUDO_ID;	/* the copies without a build-id */
	if (want)
		T_CHECK(name, got.flags == F_UNION && got.global && got.local && got.sorted,
			"flags %#x (want %#x), global %d, local %d, sorted %d", got.flags, F_UNION,
			got.global, got.local, got.sorted);
	else
		T_CHECK(name, got.flags == CAP_OBJ_F_DYNSYM && !got.local,
			"flags %#x (want .dynsym only), local %d", got.flags, got.local);
}

/* The record of a copy of this program made by cmd (a shell command writing "$f") in dbg_tmp,
 * deleted once open (or as opts ask): whole (its size in data_len) or symbols only. */
static void expect_lost(const char *name, const char *cmd, bool whole, const struct rec_opts *opts)
{
	char path[PATH_MAX];
	struct written got;
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dbg_tmp, name);
	if (sh("cd %s && f=%s && %s", dbg_tmp, name, cmd) || stat(path, &st)) {
		printf("skip %s: '%s' failed\n", name, cmd);
		return;
	}
	got = write_record(path, "empty", "", !opts->embed_objects, opts);
	if (!T_CHECK(name, got.found, "no OBJECTS record"))
		return;
	if (whole)
		T_CHECK(name, got.data_len == (uint64_t)st.st_size && (got.flags & CAP_OBJ_F_WHOLE),
			"want whole (%jd bytes), got data_len %ju, flags %#x", (intmax_t)st.st_size,
			(uintmax_t)got.data_len, got.flags);
	else
		T_CHECK(name, !got.data_len && !(got.flags & CAP_OBJ_F_WHOLE) &&
			(got.flags & CAP_OBJ_F_SYMTAB) && got.global && got.local && got.sorted,
			"want symbols only, got data_len %ju, flags %#x, global %d, local %d, "
			"sorted %d", (uintmax_t)got.data_len, got.flags, got.global, got.local,
			got.sorted);
}

/*
 * Objects that cannot be found again (here: deleted while mapped; memfd and " (deleted)" take the
 * same path, embed_level()) are embedded whole only when the bytes tell a report more than the
 * record's symbols: DWARF, .gnu_debugdata, or no function symbol at all. --embed-objects: always.
 */
static void test_lost_objects(const char *exe)
{
	const struct rec_opts dflt = { 0 }, all = { .embed_objects = true };
	char nodebug[PATH_MAX + 64], noid[PATH_MAX + 96], copy[PATH_MAX + 16];
	char debugdata[PATH_MAX + 96], stripped[PATH_MAX + 16];

	snprintf(nodebug, sizeof(nodebug), "objcopy --strip-debug %s \"$f\"", exe);
	snprintf(noid, sizeof(noid),
		 "objcopy --strip-debug --remove-section .note.gnu.build-id %s \"$f\"", exe);
	snprintf(copy, sizeof(copy), "cp %s \"$f\"", exe);
	/* the recorder only looks for the section: any bytes will do */
	snprintf(debugdata, sizeof(debugdata),
		 "printf xz >dd.bin && objcopy --strip-debug --add-section .gnu_debugdata=dd.bin "
		 "%s \"$f\"", exe);
	snprintf(stripped, sizeof(stripped), "strip -o \"$f\" %s", exe);

	/* a .symtab, no DWARF: the symbols name every frame the bytes would */
	expect_lost("test_rec_lost_symtab_only", nodebug, false, &dflt);
	/* the same without a build-id (a pseudo id keys the record) */
	expect_lost("test_rec_lost_no_build_id", noid, false, &dflt);
	/* DWARF: source lines and inline chains come from the bytes */
	if (sh("readelf -S %s | grep -q ' .debug_info'", exe))
		printf("skip test_rec_lost_dwarf: %s has no .debug_info\n", exe);
	else
		expect_lost("test_rec_lost_dwarf", copy, true, &dflt);
	expect_lost("test_rec_lost_debugdata", debugdata, true, &dflt);
	/* no function symbol (an executable's .dynsym holds only undefined ones): keep the bytes */
	expect_lost("test_rec_lost_no_symbols", stripped, true, &dflt);
	/* --embed-objects: every object whole, found again or not */
	expect_lost("test_rec_lost_embed_objects", nodebug, true, &all);
}

static void test_debug_files(void)
{
	char exe[PATH_MAX], hex[2 * CAP_BUILD_ID_MAX + 1], other[PATH_MAX];
	char plain[PATH_MAX], linked[PATH_MAX], noid[PATH_MAX], symlinked[PATH_MAX];
	struct rec_objects *os = rec_objects__new(NULL);
	struct cap_mapping m;
	char mpath[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	if (!os || !mkdtemp(dbg_tmp) ||
	    !own_mapping((uintptr_t)rec_objects_test_marker, &m, mpath, sizeof(mpath)) ||
	    !rec_objects__get(os, getpid(), &m, false) || !m.build_id_len) {
		T_FAIL("test_rec_debug_setup", "no build-id of this program: %s", strerror(errno));
		rec_objects__free(os);
		return;
	}
	rec_objects__free(os);
	for (uint32_t i = 0; i < m.build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", m.build_id[i]);
	/* a program with a .symtab of another build (from the repository's top, as tests/run) */
	if (!realpath("tests/golden/elf/golden.elf", other)) {
		printf("skip test_rec_debug_files: tests/golden/elf/golden.elf not found (run from "
		       "the repository's top)\n");
		goto out;
	}
	snprintf(plain, sizeof(plain), "%s/plain", dbg_tmp);
	snprintf(linked, sizeof(linked), "%s/bin/linked", dbg_tmp);
	snprintf(noid, sizeof(noid), "%s/noid/noid", dbg_tmp);
	snprintf(symlinked, sizeof(symlinked), "%s/sym/symlinked", dbg_tmp);
	if (sh("cd %s && mkdir -p empty root/.build-id/%.2s bad/.build-id/%.2s cache/%s bin noid "
	       "sym && strip -o plain %s && objcopy --only-keep-debug %s full.debug && "
	       "cp full.debug root/.build-id/%.2s/%s.debug && cp full.debug cache/%s/debuginfo && "
	       "objcopy --only-keep-debug %s bad/.build-id/%.2s/%s.debug && "
	       "cp full.debug bin/linked.debug && objcopy --add-gnu-debuglink=bin/linked.debug "
	       "plain bin/linked && "
	       "objcopy --remove-section .note.gnu.build-id full.debug noid/noid.debug && "
	       "objcopy --remove-section .note.gnu.build-id --add-gnu-debuglink=noid/noid.debug "
	       "plain noid/noid && "
	       "ln -s ../full.debug sym/full.debug && "
	       "objcopy --add-gnu-debuglink=full.debug plain sym/symlinked",
	       dbg_tmp, hex, hex, hex, exe, exe, hex, hex + 2, hex, other, hex, hex + 2)) {
		printf("skip test_rec_debug_files: strip/objcopy failed\n");
		goto out;
	}

	expect_debug("test_rec_debug_none", record_of(plain, "empty", ""), false);
	expect_debug("test_rec_debug_build_id_path", record_of(plain, "root", ""), true);
	expect_debug("test_rec_debug_other_build", record_of(plain, "bad", ""), false);
	expect_debug("test_rec_debug_cache", record_of(plain, "empty", "cache"), true);
	expect_debug("test_rec_debug_debuglink_beside", record_of(linked, "empty", ""), true);
	/* no build-id on either side: the link's CRC decides */
	expect_debug("test_rec_debug_debuglink_crc", record_of(noid, "empty", ""), true);
	sh("printf x >> %s/noid/noid.debug", dbg_tmp);
	expect_debug("test_rec_debug_debuglink_crc_mismatch", record_of(noid, "empty", ""), false);
	/* beside the object a link is the object owner's: never followed; under the root it is */
	expect_debug("test_rec_debug_symlink_beside_refused", record_of(symlinked, "empty", ""),
		     false);
	sh("cd %s && rm root/.build-id/%.2s/%s.debug && ln -s ../../../full.debug "
	   "root/.build-id/%.2s/%s.debug", dbg_tmp, hex, hex + 2, hex, hex + 2);
	expect_debug("test_rec_debug_symlink_in_root", record_of(plain, "root", ""), true);
	/* an object with its own .symtab: the debug file adds nothing */
	T_EQ_INT("test_rec_debug_own_symtab", CAP_OBJ_F_SYMTAB,
		 record_of(exe, "root", "").flags);
	test_lost_objects(exe);
out:
	sh("rm -rf %s", dbg_tmp);
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
	test_debug_files();
	(void)rec_objects_test_marker(1);
	(void)rec_objects_local_marker(1);
	T_EXIT();
}
