// SPDX-License-Identifier: MIT
/*
 * sym_find.c: finding an object's file and its separate debug file offline, plus debuginfod
 * (see sym_internal.h). The debug file candidates are stkrec's too (elfobj_debug_search(),
 * symbolize/debugfile.c), with --symfs and the --debug-dir roots added. Every candidate is opened
 * and its GNU build-id compared with the recorded one: a file with another build-id is another
 * build of the object, whose addresses mean something else, and is never used; the caller needs
 * "mismatch" apart from "absent". libdebuginfod does the network part (through sym_dbgd_api():
 * the static stkreport loads it only when a report first asks a server).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stk/elfobj.h>

#include "stk/escape.h"
#include "sym_internal.h"

struct sym_finder {
	/* copies of the options' strings: the caller's may be gone once __new returns (a copy of
	 * stkreport's options on the stack was, and --debug-dir crashed every report) */
	char *symfs;			/* NULL when not given */
	char **debug_dirs;
	int ndebug_dirs;
	char **real;			/* realpath() of symfs, then of each debug dir */
	const struct sym_dbgd_api *dbgd_api;	/* NULL until first needed */
	debuginfod_client *dbgd;	/* NULL until first needed */
	bool dbgd_off;			/* DEBUGINFOD_URLS unset, or the server failed once */
	bool tty;			/* stderr is a terminal: show download progress */
	bool progress_shown;
	const char *current;		/* module being downloaded, for the progress line */
	struct sym_debug_budget *debug;	/* .gnu_debugdata of candidates is read within it */
	struct elfobj_debug_dirs dirs;	/* symfs, debug dirs and the system's root */
};

/* The symfs and debug-dir roots, copied; -ENOMEM. */
static int copy_roots(struct sym_finder *f, const struct sym_user_opts *o)
{
	int n = o->debug_dirs && o->ndebug_dirs > 0 ? o->ndebug_dirs : 0;

	if (o->symfs && *o->symfs && !(f->symfs = strdup(o->symfs)))
		return -ENOMEM;
	f->debug_dirs = calloc(n + 1, sizeof(*f->debug_dirs));
	f->real = calloc(1 + n, sizeof(*f->real));
	if (!f->debug_dirs || !f->real)
		return -ENOMEM;
	for (; f->ndebug_dirs < n; f->ndebug_dirs++)
		if (!(f->debug_dirs[f->ndebug_dirs] = strdup(o->debug_dirs[f->ndebug_dirs])))
			return -ENOMEM;
	return 0;
}

struct sym_finder *sym_finder__new(const struct sym_user_opts *o)
{
	struct sym_finder *f = calloc(1, sizeof(*f));
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!f)
		return NULL;
	f->dbgd_off = !urls || !*urls;
	f->debug = o->debug;
	f->tty = isatty(STDERR_FILENO);
	if (copy_roots(f, o)) {
		sym_finder__free(f);
		errno = ENOMEM;
		return NULL;
	}
	if (f->symfs)
		f->real[0] = realpath(f->symfs, NULL);
	for (int i = 0; i < f->ndebug_dirs; i++)
		f->real[1 + i] = realpath(f->debug_dirs[i], NULL);
	/* debuginfod's caches are its own business here: it is asked (dbgd_fetch) when enabled */
	strcpy(f->dirs.root, ELFOBJ_DEBUG_ROOT);
	f->dirs.symfs = f->symfs;
	f->dirs.dirs = (const char *const *)f->debug_dirs;
	f->dirs.ndirs = f->ndebug_dirs;
	return f;
}

void sym_finder__free(struct sym_finder *f)
{
	if (!f)
		return;
	if (f->dbgd)
		f->dbgd_api->end(f->dbgd);
	for (int i = 0; f->real && i < 1 + f->ndebug_dirs; i++)
		free(f->real[i]);
	for (int i = 0; f->debug_dirs && i < f->ndebug_dirs; i++)
		free(f->debug_dirs[i]);
	free(f->debug_dirs);
	free(f->symfs);
	free(f->real);
	free(f);
}

/* ---- which paths a capture may make us open ------------------------------------------------- */

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || (n == 1 && dir[0] == '/'));
}

/*
 * A path recorded in a capture: absolute, normalized (no ".", "..", "//"), and not in the kernel's
 * file systems (/proc/self/mem, a device). Anything else was not written by stkrec.
 */
static bool recorded_path_ok(const char *path)
{
	const char *p;

	if (path[0] != '/' || under(path, "/proc") || under(path, "/dev") || under(path, "/sys"))
		return false;
	for (p = path; (p = strchr(p, '/')); p++) {
		if (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2])) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || !p[3])))
			return false;
	}
	return true;
}

/*
 * A candidate under --symfs or a --debug-dir must resolve inside it: a symlink in a copied file
 * system must not lead the report to /etc or /proc. Candidates elsewhere pass.
 */
static bool stays_in_its_root(const struct sym_finder *f, const char *file)
{
	for (int i = 0; i < 1 + f->ndebug_dirs; i++) {
		const char *root = i ? f->debug_dirs[i - 1] : f->symfs;
		size_t n = root ? strlen(root) : 0;
		char *real;
		bool ok;

		if (!n || strncmp(file, root, n) || (file[n] != '/' && root[n - 1] != '/'))
			continue;
		real = f->real[i] ? realpath(file, NULL) : NULL;
		ok = real && under(real, f->real[i]);
		free(real);
		return ok;
	}
	return true;
}

/* Open one candidate: SYM_OK (*out set), SYM_R_NOT_FOUND or SYM_R_BUILD_ID. */
static enum sym_reason try_file(struct sym_finder *f, const char *file, const struct sym_want *w,
			       struct sym_elf **out)
{
	struct sym_elf *e;

	if (!stays_in_its_root(f, file))
		return SYM_R_NOT_FOUND;
	e = sym_elf__open_debug(file, f->debug);
	if (!e)
		return SYM_R_NOT_FOUND;
	if (!sym_elf__build_id_is(e, w->build_id, w->build_id_len)) {
		sym_elf__close(e);
		return SYM_R_BUILD_ID;
	}
	*out = e;
	return SYM_OK;
}

/* A mismatch anywhere says more than "not found" elsewhere. */
static enum sym_reason worse(enum sym_reason a, enum sym_reason b)
{
	return a == SYM_R_BUILD_ID || b == SYM_R_BUILD_ID ? SYM_R_BUILD_ID : SYM_R_NOT_FOUND;
}

static char *join(const char *dir, const char *path)
{
	char *s;

	if (asprintf(&s, "%s%s%s", dir, path[0] == '/' ? "" : "/", path) < 0)
		return NULL;
	return s;
}

/* ---- debuginfod ---------------------------------------------------------------------------- */

static int progress(debuginfod_client *c, long done, long total)
{
	/* only called once sym_dbgd_api() returned the functions, and it lends them for good */
	struct sym_finder *f = sym_dbgd_api()->get_user_data(c);

	if (!f->tty)
		return 0;
	f->progress_shown = true;
	/* the name is the recorded object's: escaped, as every name from a capture (escape.h) */
	fputs("\rstkreport: debuginfod: downloading ", stderr);
	rep_fputs_escaped(stderr, f->current, 0);
	if (total > 0)
		fprintf(stderr, ": %ld/%ld KiB\033[K", done >> 10, total >> 10);
	else
		fputs("...\033[K", stderr);
	return 0;	/* go on */
}

static debuginfod_client *dbgd_client(struct sym_finder *f)
{
	if (f->dbgd_off)
		return NULL;
	if (f->dbgd)
		return f->dbgd;
	/*
	 * libdebuginfod reads its limits from the environment only. Its default is to wait 90 s
	 * for a stalled connection, per object and retry: a dead or blackholed server would hang
	 * the report. A user's own setting is kept.
	 */
	setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, "5", 0);
	setenv(DEBUGINFOD_RETRY_LIMIT_ENV_VAR, "0", 0);
	f->dbgd_api = sym_dbgd_api();
	f->dbgd = f->dbgd_api ? f->dbgd_api->begin() : NULL;
	if (!f->dbgd) {
		f->dbgd_off = true;
		return NULL;
	}
	f->dbgd_api->set_user_data(f->dbgd, f);
	f->dbgd_api->set_progressfn(f->dbgd, progress);
	return f->dbgd;
}

/* Ask debuginfod for the debug file (or the executable) of w. Returns the cached file's path
 * (malloc'ed) or NULL. */
static char *dbgd_fetch(struct sym_finder *f, const struct sym_want *w, bool executable)
{
	debuginfod_client *c = w->build_id_len ? dbgd_client(f) : NULL;
	const char *slash;
	char *path = NULL, *copy;
	int fd;

	if (!c)
		return NULL;
	slash = strrchr(w->path, '/');
	f->current = slash ? slash + 1 : w->path;
	f->progress_shown = false;
	fd = (executable ? f->dbgd_api->find_executable
			 : f->dbgd_api->find_debuginfo)(c, w->build_id, w->build_id_len, &path);
	if (f->progress_shown)
		fputs("\r\033[K", stderr);
	if (fd >= 0) {
		close(fd);
		/* the caller frees with free(); the path is the library's (sym_dbgd_api) */
		copy = path ? strdup(path) : NULL;
		f->dbgd_api->free(path);
		return copy;
	}
	/* -ENOENT: the server does not have it. Anything else (refused, timed out, unreachable)
	 * would happen again for every object: stop asking. */
	if (fd != -ENOENT) {
		fprintf(stderr, "stkreport: debuginfod: %s; not asking it again\n", strerror(-fd));
		f->dbgd_off = true;
	}
	f->dbgd_api->free(path);
	return NULL;
}

/* ---- the object itself --------------------------------------------------------------------- */

enum sym_reason sym_finder__object(struct sym_finder *f, const struct sym_want *w,
				   struct sym_elf **out, char **found_path)
{
	enum sym_reason r = SYM_R_NOT_FOUND;
	char *file;
	int i;

	*out = NULL;
	*found_path = NULL;
	if (!recorded_path_ok(w->path))
		return r;
	/* --symfs, then --debug-dir roots holding a copy of the tree, then the recorded path */
	for (i = -1; i < f->ndebug_dirs; i++) {
		const char *root = i < 0 ? f->symfs : f->debug_dirs[i];

		if (!root)
			continue;
		file = join(root, w->path);
		if (!file)
			return r;
		r = worse(r, try_file(f, file, w, out));
		if (*out) {
			*found_path = file;
			return SYM_OK;
		}
		free(file);
	}
	r = worse(r, try_file(f, w->path, w, out));
	if (*out) {
		*found_path = strdup(w->path);
		return SYM_OK;
	}
	file = dbgd_fetch(f, w, true);
	if (file) {
		r = worse(r, try_file(f, file, w, out));
		if (*out) {
			*found_path = file;
			return SYM_OK;
		}
		free(file);
	}
	return r;
}

/* ---- separate debug files ------------------------------------------------------------------ */

struct debug_search {
	struct sym_finder *f;
	const struct sym_want *w;
	bool need_dwarf;
	struct sym_elf *best;		/* a match with a full symbol table but no DWARF */
	char *best_path;
	struct sym_elf *hit;		/* a match good enough to stop */
	char *hit_path;
};

/* CRC32 of a whole file, as .gnu_debuglink records it. */
static int file_crc(const char *file, uint32_t *crc)
{
	struct stat st;
	int fd = cap_open_regular(file, true), err;

	if (fd < 0)
		return fd;
	err = fstat(fd, &st) ? -errno : cap_file_crc32(fd, st.st_size, crc);
	close(fd);
	return err;
}

/* Consider one candidate; takes file (malloc'ed). Returns true when the search can stop. */
static bool consider(struct debug_search *s, char *file, bool check_crc)
{
	struct sym_elf *e = NULL;
	uint32_t crc;

	if (!file)
		return false;
	if (try_file(s->f, file, s->w, &e) != SYM_OK)
		goto skip;
	if (check_crc && s->w->has_crc && (file_crc(file, &crc) || crc != s->w->debuglink_crc))
		goto skip;
	if (s->need_dwarf ? e->has_dwarf : e->full_symtab) {
		s->hit = e;
		s->hit_path = file;
		return true;
	}
	if (e->full_symtab && !s->best) {
		s->best = e;
		s->best_path = file;
		return false;
	}
skip:
	sym_elf__close(e);
	free(file);
	return false;
}

/* elfobj_debug_search()'s callback: 1 when the search can stop. */
static int try_debug(void *arg, const char *file, unsigned int kind)
{
	struct debug_search *s = arg;

	return consider(s, strdup(file), kind & ELFOBJ_CAND_LINK);
}

int sym_finder__debug(struct sym_finder *f, const struct sym_want *w, bool need_dwarf,
		      struct sym_elf **out, char **found_path)
{
	struct debug_search s = { .f = f, .w = w, .need_dwarf = need_dwarf };
	/* a debuglink is followed beside a path stkrec wrote, never to /proc or through ".." */
	struct elfobj_debug_want dw = { w->path, w->build_id, w->build_id_len,
					recorded_path_ok(w->path) ? w->debuglink : NULL,
					w->debuglink_crc };

	*out = NULL;
	*found_path = NULL;
	if (!elfobj_debug_search(&f->dirs, &dw, try_debug, &s) && !s.best)
		consider(&s, dbgd_fetch(f, w, false), false);
	if (s.hit) {
		sym_elf__close(s.best);
		free(s.best_path);
		*out = s.hit;
		*found_path = s.hit_path;
		return 0;
	}
	if (s.best) {
		*out = s.best;
		*found_path = s.best_path;
		return 0;
	}
	return -ENOENT;
}
