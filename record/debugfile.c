// SPDX-License-Identifier: MIT
/*
 * debugfile.c: the separate debug file of an object, on the recording host. A stripped object
 * (Debian's libc, most distribution binaries) keeps only .dynsym: its local functions
 * (start_thread, __libc_start_call_main) are named only by the .symtab of its debug file, which
 * a debug package installs under /usr/lib/debug and debuginfod leaves in its client cache.
 * stkrec embeds those symbols (objects.c), so that a report is the same on a host without the
 * debug files (docs/format.md 4.8).
 *
 * Where, in this order (stkreport looks in the same places, report/sym_find.c):
 *   ROOT/.build-id/xx/rest.debug                  the object's GNU build-id
 *   DIR/LINK, DIR/.debug/LINK, ROOT/DIR/LINK      its .gnu_debuglink name (gdb's directories)
 *   CACHE/BUILD-ID/debuginfo                      debuginfod client caches
 * ROOT is /usr/lib/debug, DIR the object's directory. A candidate is used only when it is a
 * regular file of at most DEBUG_MAX bytes with a .symtab and the object's build-id; found by its
 * debuglink name, a debug file without a build-id needs the link's CRC32 instead.
 *
 * Files others may write are read as such: never a FIFO or device, never blocking, read with
 * pread (ELF_C_READ), never mapped, so that a file truncated while it is read cannot fault
 * stkrec. Symbolic links are followed only under ROOT, which root owns (Fedora's .build-id
 * entries are links into it); a user's directory or debuginfod cache must hold the file itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <sys/stat.h>

#include "rec.h"

/* libc's debug file is 4 MiB; a large C++ program's can be a few hundred. */
#define DEBUG_MAX (2ull << 30)

static void set_dir(char *dst, const char *a, const char *b)
{
	int n = snprintf(dst, PATH_MAX, "%s%s", a, b ? b : "");

	if (n < 0 || n >= PATH_MAX)
		dst[0] = 0;	/* too long to be a directory anyone uses: none */
}

static void add_cache(struct rec_debug_dirs *d, const char *a, const char *b)
{
	char dir[PATH_MAX];

	if (!a || !*a)
		return;
	set_dir(dir, a, b);
	for (int i = 0; i < REC_DEBUG_CACHES; i++) {
		if (!strcmp(d->cache[i], dir))
			return;
		if (!d->cache[i][0]) {
			memcpy(d->cache[i], dir, sizeof(dir));
			return;
		}
	}
}

void rec_debug_dirs_default(struct rec_debug_dirs *d)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const struct passwd *pw = getpwuid(0);

	memset(d, 0, sizeof(*d));
	set_dir(d->root, "/usr/lib/debug", NULL);
	/* the cache libdebuginfod would use in stkrec's environment (its own order)... */
	if (env && *env)
		add_cache(d, env, NULL);
	else if ((env = getenv("XDG_CACHE_HOME")) && *env)
		add_cache(d, env, "/debuginfod_client");
	else
		add_cache(d, getenv("HOME"), "/.cache/debuginfod_client");
	/* ...and root's, where a `sudo debuginfod-find` put files */
	add_cache(d, pw && pw->pw_dir ? pw->pw_dir : "/root", "/.cache/debuginfod_client");
}

static bool has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return true;
	return false;
}

/* Is file the debug file of w? The open descriptor and its ELF, or -ENOENT. */
static int try_file(const char *file, bool follow, const struct rec_debug_want *w, bool by_link,
		    Elf **out)
{
	int fd = cap_open_regular(file, follow);
	const void *id;
	struct stat st;
	ssize_t n;
	uint32_t crc;
	Elf *e = NULL;
	bool ok = false;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !st.st_size || (uint64_t)st.st_size > DEBUG_MAX)
		goto out;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !has_symtab(e))
		goto out;
	/* another build-id is another build, whatever its name; without one, the link's CRC */
	n = dwelf_elf_gnu_build_id(e, &id);
	if (n > 0)
		ok = n == (ssize_t)w->build_id_len && !memcmp(id, w->build_id, n);
	else if (by_link)
		ok = !cap_file_crc32(fd, st.st_size, &crc) && crc == w->crc;
out:
	if (ok) {
		*out = e;
		return fd;
	}
	if (e)
		elf_end(e);
	close(fd);
	return -ENOENT;
}

static void hex(const uint8_t *id, uint32_t len, char *out)
{
	for (uint32_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = 0;
}

/* A file name as gdb takes a debuglink: no directory part, not "." or "..". */
static bool link_ok(const char *link)
{
	return link && *link && !strchr(link, '/') && strcmp(link, ".") && strcmp(link, "..");
}

int rec_debug_open(const struct rec_debug_dirs *d, const struct rec_debug_want *w, Elf **e)
{
	char file[PATH_MAX], id[2 * CAP_BUILD_ID_MAX + 1], dir[PATH_MAX];
	const char *slash = w->path ? strrchr(w->path, '/') : NULL;
	int fd, n;

	*e = NULL;
	if (w->build_id_len > CAP_BUILD_ID_MAX)
		return -ENOENT;
	hex(w->build_id, w->build_id_len, id);
	if (w->build_id_len >= 2 && d->root[0]) {
		n = snprintf(file, sizeof(file), "%s/.build-id/%.2s/%s.debug", d->root, id, id + 2);
		if (n > 0 && n < (int)sizeof(file) && (fd = try_file(file, true, w, false, e)) >= 0)
			return fd;
	}
	if (link_ok(w->debuglink) && slash && w->path[0] == '/' &&
	    (size_t)(slash - w->path) < sizeof(dir)) {
		memcpy(dir, w->path, slash - w->path);
		dir[slash - w->path] = 0;
		for (int i = 0; i < 3; i++) {
			const char *root = i == 2 ? d->root : "", *sub = i == 1 ? "/.debug" : "";

			if (i == 2 && !root[0])
				break;
			n = snprintf(file, sizeof(file), "%s%s%s/%s", root, dir, sub, w->debuglink);
			/* only ROOT is root's: a link beside the object is the object owner's */
			if (n > 0 && n < (int)sizeof(file) &&
			    (fd = try_file(file, i == 2, w, true, e)) >= 0)
				return fd;
		}
	}
	for (int i = 0; w->build_id_len && i < REC_DEBUG_CACHES; i++) {
		if (!d->cache[i][0])
			continue;
		n = snprintf(file, sizeof(file), "%s/%s/debuginfo", d->cache[i], id);
		if (n > 0 && n < (int)sizeof(file) &&
		    (fd = try_file(file, false, w, false, e)) >= 0)
			return fd;
	}
	return -ENOENT;
}
