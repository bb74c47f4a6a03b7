// SPDX-License-Identifier: MIT
/*
 * objects.c: the object files behind executable mappings, opened when a process is first read
 * and held open by descriptor until their OBJECTS record is written, so a binary that is deleted,
 * replaced, or lives only in a container's mount namespace is still read from the right inode.
 *
 * Identity: the GNU build-id, or for an object without one a pseudo id (CRC32C of the first and
 * last 4 KiB and the size; format.md, CAP_OBJ_F_PSEUDO_ID). The vdso is the same for every
 * process of one kernel: stkrec reads its own once (getauxval(AT_SYSINFO_EHDR)).
 *
 * What an OBJECTS record holds (meta key `objects`):
 *   symtabs (default)   segments, function symbols, debuglink of every object with hits; the
 *                       whole bytes (under a limit) of the vdso, and of what cannot be found
 *                       again (memfd, deleted) when they tell more than the symbols do
 *                       (whole_tells_more())
 *   none (--no-symtabs) only what cannot be found again: the vdso, memfd, deleted and
 *                       namespace-only objects, as above
 *   whole (--embed-objects) every object with hits whole (under the limit), symbols too
 * Whenever a record holds symbols they are the object's .symtab, or when it has none its .dynsym
 * and the .symtab of its debug file on this host (elfobj_debug_open(), symbolize/debugfile.c,
 * CAP_OBJ_F_DEBUGFILE): the names this host's debug files give are in the capture, and a report
 * does not depend on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "proc.h"

/*
 * Whole files up to this size are embedded; one chunk decompresses to at most
 * CAP_MAX_CHUNK_RAW (64 MiB), which must also hold the symbol table. Larger: symbols only.
 */
#define WHOLE_MAX (48u << 20)
#define PSEUDO_SPAN 4096u

struct rec_object {
	uint64_t dev, inode;
	int fd;			/* -1: unreadable, or closed once written */
	uint32_t kind;		/* enum cap_map_kind */
	uint32_t map_flags;	/* CAP_MAP_F_DELETED | _NS_PATH | _PSEUDO_ID | _NO_BUILD_ID */
	uint32_t build_id_len;
	uint8_t build_id[CAP_BUILD_ID_MAX];
	char *path;
	uint8_t *image;		/* the vdso: a copy of stkrec's own */
	size_t image_len;
	bool queued;		/* handed out by rec_procs__hit_objects() */
	bool table_due;		/* an ELF file whose table is built when first asked for */
	struct rec_utable *utable;	/* CFI table for the BPF walker, or NULL */
};

struct written_id {
	uint32_t len;
	uint8_t id[CAP_BUILD_ID_MAX];
};

struct rec_objects {
	void *by_inode;		/* tsearch tree of struct rec_object, by (dev, inode) */
	void *written;		/* tsearch tree of struct written_id */
	struct rec_object *vdso;
	struct rec_unwind *unwind;	/* builds the walker's tables (NULL: --unwind fp) */
	struct elfobj_debug_dirs debug;	/* where debug files are */
	bool keep_open;		/* written again in later files: descriptors stay open */
	bool warned;
};

static int cmp_object(const void *a, const void *b)
{
	const struct rec_object *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

static int cmp_written(const void *a, const void *b)
{
	const struct written_id *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->id, y->id, x->len);
}

static void free_object(void *p)
{
	struct rec_object *obj = p;

	if (!obj)
		return;
	if (obj->fd >= 0)
		close(obj->fd);
	free(obj->path);
	free(obj->image);
	free(obj);
}

static struct rec_object *object_new(uint64_t dev, uint64_t inode, uint32_t kind, const char *path)
{
	struct rec_object *obj = calloc(1, sizeof(*obj));

	if (!obj)
		return NULL;
	obj->dev = dev;
	obj->inode = inode;
	obj->kind = kind;
	obj->fd = -1;
	obj->path = strdup(path);
	if (!obj->path) {
		free(obj);
		return NULL;
	}
	return obj;
}

/* The vdso image of this process: one [vdso] line of /proc/self/maps. */
static struct rec_object *read_vdso(struct rec_unwind *unwind)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512], path[PATH_MAX];
	struct cap_mapping m;
	struct rec_object *obj = NULL;
	FILE *f;
	Elf *e;

	if (!base)
		return NULL;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return NULL;
	while (!obj && fgets(line, sizeof(line), f)) {
		if (rec_maps_line(line, &m, path, sizeof(path)) != 1 || m.kind != CAP_MAP_VDSO ||
		    m.start != base)
			continue;
		obj = object_new(0, 0, CAP_MAP_VDSO, "[vdso]");
		if (!obj)
			break;
		obj->image_len = m.end - m.start;
		obj->image = malloc(obj->image_len);
		if (!obj->image) {
			free_object(obj);
			obj = NULL;
			break;
		}
		memcpy(obj->image, (const void *)base, obj->image_len);
	}
	fclose(f);
	if (!obj)
		return NULL;
	e = elf_memory((char *)obj->image, obj->image_len);
	obj->build_id_len = elfobj_build_id(e, obj->build_id);
	obj->utable = rec_unwind__table(unwind, e, obj->build_id, obj->build_id_len);
	if (e)
		elf_end(e);
	if (!obj->build_id_len)
		obj->map_flags |= CAP_MAP_F_NO_BUILD_ID;
	return obj;
}

/* One descriptor per object until it is written: allow as many as the hard limit lets us. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max && rl.rlim_cur < 65536) {
		rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct rec_objects *rec_objects__new(struct rec_unwind *unwind)
{
	struct rec_objects *os = calloc(1, sizeof(*os));

	if (!os)
		return NULL;
	elf_version(EV_CURRENT);
	raise_fd_limit();
	os->unwind = unwind;
	elfobj_debug_dirs_default(&os->debug);
	os->vdso = read_vdso(unwind);	/* NULL on an exotic system: vdso frames stay unnamed */
	return os;
}

void rec_objects__set_debug_dirs(struct rec_objects *os, const struct elfobj_debug_dirs *d)
{
	os->debug = *d;
}

void rec_objects__free(struct rec_objects *os)
{
	if (!os)
		return;
	tdestroy(os->by_inode, free_object);
	tdestroy(os->written, free);
	free_object(os->vdso);
	free(os);
}

/* ---- opening ------------------------------------------------------------------------------ */

/* path inside root, if it is the file with this dev/inode; -1 otherwise. */
static int open_checked(const char *root, const char *path, uint64_t dev, uint64_t inode)
{
	struct stat st;
	int fd;

	fd = cap_open_in_root(root, path);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_dev != dev || st.st_ino != inode) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * map_files/START-END is the mapped inode itself, whatever happened to its path (deleted,
 * renamed over, another mount namespace, a memfd); it needs root. The path inside /proc/PID/root
 * is the fallback, accepted only when dev/inode match the maps line. A process gone already
 * (known from the kernel's mmap records) has neither: its path on the host is accepted when
 * dev/inode match, which also says the process could read that file (it mapped it).
 */
static int open_mapping(uint32_t pid, const struct cap_mapping *m)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	/* a regular file only: an executable mapping of a device must not be read through */
	fd = cap_open_regular(path, true);
	if (fd >= 0 || m->kind != CAP_MAP_FILE)
		return fd < 0 ? -1 : fd;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	fd = open_checked(path, m->path, m->dev, m->inode);
	return fd >= 0 ? fd : open_checked("/", m->path, m->dev, m->inode);
}

/* A content hash for objects without a GNU build-id: head, tail, size. */
static void pseudo_id(int fd, struct rec_object *obj)
{
	uint8_t buf[PSEUDO_SPAN];
	struct stat st;
	uint32_t head, tail;
	uint64_t size;
	ssize_t n;

	if (fstat(fd, &st))
		return;
	size = st.st_size;
	n = pread(fd, buf, sizeof(buf), 0);
	head = cap_crc32c(0, buf, n > 0 ? (size_t)n : 0);
	n = pread(fd, buf, sizeof(buf), size > PSEUDO_SPAN ? (off_t)(size - PSEUDO_SPAN) : 0);
	tail = cap_crc32c(0, buf, n > 0 ? (size_t)n : 0);
	memcpy(obj->build_id, &head, 4);
	memcpy(obj->build_id + 4, &tail, 4);
	for (int i = 0; i < 8; i++)
		obj->build_id[8 + i] = size >> (8 * i);	/* little-endian, as the format */
	obj->build_id_len = 16;
	obj->map_flags |= CAP_MAP_F_PSEUDO_ID;
}

/*
 * Build-id (or pseudo id). The unwind table waits until a walker asks for it: cc1's 700,000 rows
 * took 57-350 ms to build here, and the next process of a batch of notifications, read only
 * after it, may exit meanwhile (rec_procs__hold).
 */
static void identify(struct rec_object *obj)
{
	Elf *e = elf_begin(obj->fd, ELF_C_READ_MMAP, NULL);

	obj->build_id_len = elfobj_build_id(e, obj->build_id);
	if (!obj->build_id_len)
		pseudo_id(obj->fd, obj);
	obj->table_due = e && elf_kind(e) == ELF_K_ELF;
	if (e)
		elf_end(e);
}

/* obj's unwind table, if it is still due, from the descriptor held until obj is written. */
static void build_table(struct rec_objects *os, struct rec_object *obj)
{
	Elf *e;

	if (!obj->table_due || obj->fd < 0 || !os->unwind)
		return;
	obj->table_due = false;
	e = elf_begin(obj->fd, ELF_C_READ_MMAP, NULL);
	obj->utable = rec_unwind__table(os->unwind, e, obj->build_id, obj->build_id_len);
	if (e)
		elf_end(e);
}

/* The host path names another file (or none): the path is valid only in the process's root. */
static bool host_path_differs(const struct cap_mapping *m)
{
	struct stat st;

	return stat(m->path, &st) || st.st_dev != m->dev || st.st_ino != m->inode;
}

static struct rec_object *open_object(struct rec_objects *os, uint32_t pid,
				      const struct cap_mapping *m, bool other_ns)
{
	struct rec_object *obj = object_new(m->dev, m->inode, m->kind, m->path);

	if (!obj)
		return NULL;
	obj->map_flags = m->flags & CAP_MAP_F_DELETED;
	if (other_ns && m->kind == CAP_MAP_FILE && host_path_differs(m))
		obj->map_flags |= CAP_MAP_F_NS_PATH;
	obj->fd = open_mapping(pid, m);
	if (obj->fd >= 0)
		identify(obj);
	if (!obj->build_id_len)
		obj->map_flags |= CAP_MAP_F_NO_BUILD_ID;
	return obj;
}

struct rec_object *rec_objects__get(struct rec_objects *os, uint32_t pid, struct cap_mapping *m,
				    bool other_ns)
{
	struct rec_object key = { .dev = m->dev, .inode = m->inode }, *obj = NULL, **found;

	if (m->kind == CAP_MAP_VDSO) {
		/* A 32-bit process has another vdso: the size tells them apart. */
		if (os->vdso && m->end - m->start == os->vdso->image_len)
			obj = os->vdso;
	} else if (m->kind == CAP_MAP_FILE || m->kind == CAP_MAP_MEMFD) {
		found = tfind(&key, &os->by_inode, cmp_object);
		obj = found ? *found : open_object(os, pid, m, other_ns);
		/* Cached also when unreadable: the same (dev, inode) will not become readable. */
		if (obj && !found && !tsearch(obj, &os->by_inode, cmp_object)) {
			free_object(obj);
			obj = NULL;
		}
	}
	if (!obj) {
		m->flags |= CAP_MAP_F_NO_BUILD_ID;
		return NULL;
	}
	/* Deleted since first read: now it cannot be found again (embed_level(), if not yet
	 * written). */
	if (m->flags & CAP_MAP_F_DELETED)
		obj->map_flags |= CAP_MAP_F_DELETED;
	m->flags |= obj->map_flags & ~CAP_MAP_F_DELETED;
	memcpy(m->build_id, obj->build_id, obj->build_id_len);
	m->build_id_len = obj->build_id_len;
	return obj->build_id_len ? obj : NULL;
}

struct rec_utable *rec_object__utable(struct rec_objects *os, struct rec_object *obj)
{
	if (!obj)
		return NULL;
	build_table(os, obj);
	return obj->utable;
}

/*
 * No link left: deleted, or renamed over, since it was mapped. /proc/PID/maps says so only when
 * read after that, and a process that exits first is not read again: the descriptor stkrec holds
 * still knows. Asked when it is queued for writing (under the reader's lock, before the
 * descriptor is closed), so its mappings' records say DELETED too (rec_object__deleted()).
 */
static void note_unlinked(struct rec_object *obj)
{
	struct stat st;

	if (obj->fd >= 0 && !fstat(obj->fd, &st) && !st.st_nlink)
		obj->map_flags |= CAP_MAP_F_DELETED;
}

bool rec_object__deleted(const struct rec_object *obj)
{
	return obj && (obj->map_flags & CAP_MAP_F_DELETED);
}

bool rec_object__queue(struct rec_objects *os, struct rec_object *obj)
{
	if (obj->queued)
		return false;
	note_unlinked(obj);
	/* the descriptor is closed once obj is written: a walker may still ask for its table */
	build_table(os, obj);
	obj->queued = true;
	return true;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* A separate debug file, open while the record borrows its names. */
struct debug_file {
	int fd;
	Elf *e;
};

static void debug_file_close(struct debug_file *d)
{
	if (d->e)
		elf_end(d->e);
	if (d->fd >= 0)
		close(d->fd);
	d->e = NULL;
	d->fd = -1;
}

/* The debug file of obj on this host (e: obj's ELF) into dbg, or none (dbg->fd < 0). */
static void open_debug_file(const struct rec_objects *os, const struct rec_object *obj, Elf *e,
			    struct debug_file *dbg)
{
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(e, &crc);
	struct elfobj_debug_want w = { .debuglink = link, .crc = crc };

	/* a namespace path names another file (or none) here; a memfd or the vdso none at all */
	if (obj->kind == CAP_MAP_FILE && !(obj->map_flags & CAP_MAP_F_NS_PATH))
		w.path = obj->path;
	/* a pseudo id is stkrec's own: no debug file carries it */
	if (!(obj->map_flags & CAP_MAP_F_PSEUDO_ID)) {
		w.build_id = obj->build_id;
		w.build_id_len = obj->build_id_len;
	}
	dbg->fd = elfobj_debug_open(&os->debug, &w, &dbg->e);
}

/*
 * o's function symbols, one per address (format.md 4.8; flags say where they came from): e's
 * .symtab; without one its .dynsym, and unless dbg is NULL the .symtab of its debug file on this
 * host too, left open in dbg (it lends the names); and e's PLT stubs, whose names l keeps: its
 * caller clears it once o is written.
 */
static int read_symbols(const struct rec_objects *os, const struct rec_object *obj, Elf *e,
			struct debug_file *dbg, struct elfobj_syms *l, struct cap_object *o)
{
	GElf_Shdr shdr;
	int n;

	elfobj_syms_clear(l);
	o->flags &= ~(CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DYNSYM | CAP_OBJ_F_DEBUGFILE);
	n = elfobj_syms_add(l, e, SHT_SYMTAB, 0);
	if (n > 0)
		o->flags |= CAP_OBJ_F_SYMTAB;
	if (!n) {
		n = elfobj_syms_add(l, e, SHT_DYNSYM, 0);
		if (elfobj_section(e, SHT_DYNSYM, &shdr))
			o->flags |= CAP_OBJ_F_DYNSYM;
	}
	/* stripped: its debug file names the local functions .dynsym lacks; a debug file is read
	 * into memory (ELF_C_READ): a table over a chunk is not read, it would not fit anyway */
	if (n >= 0 && dbg && !(o->flags & CAP_OBJ_F_SYMTAB)) {
		open_debug_file(os, obj, e, dbg);
		if (dbg->fd >= 0 && (n = elfobj_syms_add(l, dbg->e, SHT_SYMTAB, CAP_MAX_CHUNK_RAW)) > 0)
			o->flags |= CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DEBUGFILE;
	}
	/* the PLT stubs, from e's relocations (a debug file has no bytes of them) */
	if (n >= 0 && elfobj_syms_add_plt(l, e) < 0)
		n = -ENOMEM;
	if (n >= 0) {
		elfobj_syms_unique(l);
		o->syms = calloc(l->n ? l->n : 1, sizeof(*o->syms));
	}
	if (n < 0 || !o->syms)
		return n < 0 ? n : -ENOMEM;
	for (uint32_t i = 0; i < l->n; i++)
		/* lent by e, the debug file or l, which outlive the record */
		o->syms[i] = (struct cap_symbol){ l->v[i].addr, l->v[i].c.size, (char *)l->v[i].c.name };
	o->nsyms = l->n;
	return 0;
}

static int read_segments(Elf *e, struct cap_object *o)
{
	struct elfobj_segment *segs;
	int err = elfobj_segments(e, &segs, &o->nsegs);

	if (err)
		return err;
	o->segs = calloc(o->nsegs ? o->nsegs : 1, sizeof(*o->segs));
	for (uint32_t i = 0; o->segs && i < o->nsegs; i++)
		o->segs[i] = (struct cap_segment){ segs[i].offset, segs[i].vaddr, segs[i].filesz,
						   segs[i].memsz };
	free(segs);
	return o->segs ? 0 : -ENOMEM;
}

/* EMBED_LOST: whole when whole_tells_more(), else symbols */
enum embed { EMBED_NOTHING, EMBED_SYMBOLS, EMBED_LOST, EMBED_WHOLE };

/* What the options ask for this object (see the top of the file). */
static enum embed embed_level(const struct rec_object *obj, const struct rec_opts *opts)
{
	bool lost_later = obj->kind == CAP_MAP_MEMFD || (obj->map_flags & CAP_MAP_F_DELETED);

	/* the vdso is a few pages: always whole */
	if (opts->embed_objects || obj->kind == CAP_MAP_VDSO)
		return EMBED_WHOLE;
	if (lost_later)
		return EMBED_LOST;
	if (opts->no_symtabs && !(obj->map_flags & CAP_MAP_F_NS_PATH))
		return EMBED_NOTHING;
	return EMBED_SYMBOLS;
}

/*
 * Whether an object that cannot be found again needs its bytes in the capture (e: its ELF, o: its
 * record with segments and symbols read). A report names frames from the record's symbols as it
 * would from the bytes (symbolize/symbolize.c reads the same .symtab, else .dynsym, one name per
 * address), so only what the record lacks counts: DWARF (source lines, inline chains),
 * MiniDebugInfo (the local functions .dynsym lacks), or anything at all when the record holds no
 * function symbol. An agent's 1.5 MB memfd executable with a .symtab and no DWARF then costs its
 * symbols only (format.md 4.8).
 */
static bool whole_tells_more(Elf *e, const struct cap_object *o)
{
	uint32_t functions = 0;
	GElf_Shdr shdr;

	/* a PLT stub's name is the relocations', not a function's */
	for (uint32_t i = 0; i < o->nsyms && !functions; i++)
		functions += !cap_symbol_is_plt(o->syms[i].name);
	/* symbols are read only from an ELF: none read, e may be NULL or not one */
	return !functions || elfobj_has_dwarf(e) || elfobj_section_named(e, ".gnu_debugdata", &shdr);
}

static uint8_t *read_whole(const struct rec_object *obj, uint64_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (obj->image) {
		*len = obj->image_len;
		return obj->image;
	}
	if (fstat(obj->fd, &st) || !st.st_size || (uint64_t)st.st_size > WHOLE_MAX)
		return NULL;
	buf = malloc(st.st_size);
	if (!buf)
		return NULL;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(obj->fd, buf + got, st.st_size - got, got);

		if (n <= 0) {
			free(buf);
			return NULL;
		}
		got += n;
	}
	*len = got;
	return buf;
}

static bool already_written(struct rec_objects *os, const struct rec_object *obj)
{
	struct written_id *w = calloc(1, sizeof(*w)), **found;

	if (!w)
		return false;
	w->len = obj->build_id_len;
	memcpy(w->id, obj->build_id, w->len);
	found = tsearch(w, &os->written, cmp_written);
	if (found && *found != w) {
		free(w);
		return true;
	}
	if (!found)
		free(w);
	return false;
}

/* Some format errors concern one object only (over the chunk limit): skip it, say so once. */
static int object_error(struct rec_objects *os, const struct rec_object *obj, int err)
{
	if (err != -ENOTSUP && err != -EOVERFLOW && err != -EINVAL)
		return err;
	if (!os->warned && err != -ENOTSUP)
		rec_err(err, "warning: cannot embed %s: %s", obj->path, strerror(-err));
	os->warned = true;
	return 0;
}

static int put_object(struct rec_objects *os, struct rec_object *obj, const struct rec_opts *opts,
		      struct cap_writer *w)
{
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS };
	struct cap_object o = { 0 };
	struct debug_file dbg = { .fd = -1 };
	struct elfobj_syms syms = { 0 };	/* the names o->syms has of its own */
	enum embed level = embed_level(obj, opts);
	Elf *e = NULL;
	int err = 0;

	if (level == EMBED_NOTHING || (obj->fd < 0 && !obj->image) || already_written(os, obj))
		return 0;
	o.build_id_len = obj->build_id_len;
	memcpy(o.build_id, obj->build_id, obj->build_id_len);
	if (obj->map_flags & CAP_MAP_F_PSEUDO_ID)
		o.flags |= CAP_OBJ_F_PSEUDO_ID;
	o.path = obj->path;
	o.debuglink = "";
	e = obj->image ? elf_memory((char *)obj->image, obj->image_len) :
			 elf_begin(obj->fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		GElf_Word crc;
		const char *link = dwelf_elf_gnu_debuglink(e, &crc);

		o.debuglink = link ? (char *)link : "";
		err = read_segments(e, &o);
		if (!err)
			err = read_symbols(os, obj, e, &dbg, &syms, &o);
	}
	if (level == EMBED_LOST)
		level = whole_tells_more(e, &o) ? EMBED_WHOLE : EMBED_SYMBOLS;
	if (!err && level == EMBED_WHOLE) {
		o.data = read_whole(obj, &o.data_len);
		if (o.data)
			o.flags |= CAP_OBJ_F_WHOLE;
	}
	rec.objects.count = 1;
	rec.objects.objs = &o;
	if (!err)
		err = cap_writer__put(w, &rec);
	/* over a chunk (nothing was written): without the bytes (format.md 4.8), then without the
	 * debug file's symbols */
	if (err == -EOVERFLOW && o.data) {
		if (o.data != obj->image)
			free(o.data);
		o.data = NULL;
		o.data_len = 0;
		o.flags &= ~CAP_OBJ_F_WHOLE;
		err = cap_writer__put(w, &rec);
	}
	if (err == -EOVERFLOW && (o.flags & CAP_OBJ_F_DEBUGFILE)) {
		free(o.syms);
		o.syms = NULL;
		o.nsyms = 0;
		err = read_symbols(os, obj, e, NULL, &syms, &o);
		if (!err)
			err = cap_writer__put(w, &rec);
	}
	err = object_error(os, obj, err);
	if (o.data != obj->image)
		free(o.data);
	free(o.segs);
	free(o.syms);
	elfobj_syms_clear(&syms);
	debug_file_close(&dbg);
	if (e)
		elf_end(e);
	return err;
}

int rec_objects__put(struct rec_objects *os, struct rec_object *const *objs, uint32_t n,
		     const struct rec_opts *opts, struct cap_writer *w)
{
	int err = 0;

	for (uint32_t i = 0; i < n && !err; i++) {
		err = put_object(os, objs[i], opts, w);
		/* Written (or not wanted): the descriptor has done its job, unless a later file
		 * needs the object again. */
		if (objs[i]->fd >= 0 && !os->keep_open) {
			close(objs[i]->fd);
			objs[i]->fd = -1;
		}
	}
	return err;
}

void rec_objects__keep_open(struct rec_objects *os)
{
	os->keep_open = true;
}

static void unqueue(const void *node, VISIT which, void *ctx)
{
	if (which == postorder || which == leaf)
		(*(struct rec_object *const *)node)->queued = false;
}

void rec_objects__new_file(struct rec_objects *os)
{
	tdestroy(os->written, free);
	os->written = NULL;
	twalk_r(os->by_inode, unqueue, NULL);
	if (os->vdso)
		os->vdso->queued = false;
}

const char *rec_objects_mode(const struct rec_opts *opts)
{
	return opts->embed_objects ? "whole" : opts->no_symtabs ? "none" : "symtabs";
}
