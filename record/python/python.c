// SPDX-License-Identifier: MIT
/*
 * python.c: CPython for the walker and the capture (docs/bpf.md 10).
 *
 * - Which objects are a CPython runtime and of which version (from their symbols: _PyRuntime,
 *   _PyEval_EvalFrameDefault, PyCode_Type, Py_Version's value in the file), and the layout of
 *   that version: the one table below, the only place that knows CPython's structures.
 * - The code objects BPF met: their qualified names, file names, first lines and line tables,
 *   read once from the process's memory (process_vm_readv, as root), when BPF first tells of
 *   one (STK_NOTIFY_PYCODE, read by a thread of its own: rec_python__watch()) or, failing
 *   that, when a stack names it at the drain. The process is untrusted: every size is
 *   bounded, every pointer checked, a page that is not resident is not read (a read that
 *   faults it in could wait on a file system the process controls).
 * - The capture's side: each code object gets a capture-wide id when a stack first names it;
 *   its CODES entry (format.md 4.11) is written before the rows that need it.
 *
 * A second runtime (Perl, Ruby) is one more such file: its table, its reader, its lang value.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "python.h"

const char *rec_python_frames_name(uint32_t mode)
{
	switch (mode) {
	case REC_PYFRAMES_NATIVE:
		return "native";
	case REC_PYFRAMES_MIXED:
		return "mixed";
	}
	return "python";
}

/* ---- layouts, one entry per CPython version ------------------------------------------------- */

#define NONE 0xffff

/*
 * Offsets read with gdb from Debian 12's python3.11 (3.11.2, with python3.11-dbg's debug info)
 * and from builds of 3.12.1 and 3.13.0: `ptype /o` of PyThreadState, _PyCFrame,
 * _PyInterpreterFrame, PyCodeObject, and _PyRuntimeState's members. 3.12 and 3.13 keep the
 * thread state current in a thread-local variable, not in _PyRuntime: their threads are found
 * in the interpreter's list. 3.13's runtime also describes itself (_Py_DebugOffsets at the start
 * of _PyRuntime); its values agree with this entry. str_ascii and str_compact are
 * sizeof(PyASCIIObject) and sizeof(PyCompactUnicodeObject): a string's characters follow.
 */
static const struct stk_pylayout py_layouts[] = {
	{
		.version = 0x030b,
		.rt_tstate = 0x240, .rt_interp = 0x28, .interp_threads = 0x10,
		.ts_next = 8, .ts_tid = 160, .ts_cframe = 56, .cur_frame = 8, .cf_previous = 16,
		.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_entry = 68,
		.co_firstlineno = 72, .co_argcount = 56, .co_kwonly = 64, .co_flags = 48,
		.co_code = 184, .entry_kind = STK_PYENTRY_FLAG,
		.co_filename = 112, .co_qualname = 128, .co_linetable = 136,
		.str_ascii = 48, .str_compact = 72,
	},
	{
		.version = 0x030c,
		.rt_tstate = NONE, .rt_interp = 0x28, .interp_threads = 0x48,
		.ts_next = 8, .ts_tid = 0x90, .ts_cframe = 0x38, .cur_frame = 0, .cf_previous = 8,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 0x38, .fr_entry = 0x46,
		.co_firstlineno = 0x44, .co_argcount = 0x34, .co_kwonly = 0x3c, .co_flags = 0x30,
		.co_code = 0xc0, .entry_kind = STK_PYENTRY_SHIM, .entry_value = 3,
		.co_filename = 0x70, .co_qualname = 0x80, .co_linetable = 0x88,
		.str_ascii = 40, .str_compact = 56,
	},
	{
		.version = 0x030d,
		.rt_tstate = NONE, .rt_interp = 0x278, .interp_threads = 0x1cb0,
		.ts_next = 8, .ts_tid = 0xa0, .ts_cframe = NONE, .cur_frame = 0x48,
		.cf_previous = NONE,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 0x38, .fr_entry = 0x46,
		.co_firstlineno = 0x44, .co_argcount = 0x34, .co_kwonly = 0x3c, .co_flags = 0x30,
		.co_code = 0xc8, .entry_kind = STK_PYENTRY_SHIM, .entry_value = 3,
		.co_filename = 0x70, .co_qualname = 0x80, .co_linetable = 0x88,
		.str_ascii = 40, .str_compact = 56,
	},
};

static const struct stk_pylayout *layout_of(uint32_t version)
{
	for (size_t i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++)
		if (py_layouts[i].version == version)
			return &py_layouts[i];
	return NULL;
}

/* ---- objects ------------------------------------------------------------------------------ */

/* The value of an object's Py_Version (PY_VERSION_HEX, 3.11+) from its file: 0 if none. */
static uint32_t file_u32_at(Elf *e, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		uint32_t v;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    vaddr < sh.sh_addr || vaddr + 4 > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || vaddr - sh.sh_addr + 4 > d->d_size)
			return 0;
		memcpy(&v, (const char *)d->d_buf + (vaddr - sh.sh_addr), 4);
		return v;
	}
	return 0;
}

/* The symbols of one table (.dynsym or .symtab) that tell a CPython runtime. */
static void scan_symbols(Elf *e, uint32_t type, struct rec_pyobj *o, bool *interp,
			 uint64_t *version_at)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			const char *name;
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value || s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			if (!strcmp(name, "_PyRuntime")) {
				o->runtime = s.st_value;
			} else if (!strcmp(name, "PyCode_Type")) {
				o->code_type = s.st_value;
			} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
				o->eval = s.st_value;
				o->eval_size = s.st_size;
			} else if (!strcmp(name, "Py_Version")) {
				*version_at = s.st_value;
			} else if (!strcmp(name, "Py_BytesMain") || !strcmp(name, "Py_Initialize")) {
				*interp = true;
			}
		}
	}
}

void rec_pyobj_find(Elf *e, struct rec_pyobj *o)
{
	uint64_t version_at = 0;
	bool interp = false;
	uint32_t hex;

	memset(o, 0, sizeof(*o));
	scan_symbols(e, SHT_DYNSYM, o, &interp, &version_at);
	if (!o->runtime || !o->eval)
		scan_symbols(e, SHT_SYMTAB, o, &interp, &version_at);
	if (!o->eval && !interp && !o->runtime)
		return;		/* not an interpreter: REC_PY_NONE */
	hex = version_at ? file_u32_at(e, version_at) : 0;
	o->version = hex >> 16;		/* PY_VERSION_HEX: major, minor, micro, level, serial */
	if (!o->runtime || !o->eval || !o->eval_size || !o->code_type)
		o->status = REC_PY_NO_RUNTIME;
	else if (!layout_of(o->version))
		o->status = REC_PY_VERSION;
	else
		o->status = REC_PY_OK;
}

bool rec_pyobj_proc(const struct rec_pyobj *o, uint64_t load_bias, struct stk_pyproc *out)
{
	const struct stk_pylayout *l = o->status == REC_PY_OK ? layout_of(o->version) : NULL;

	if (!l)
		return false;
	out->runtime = o->runtime + load_bias;
	out->code_type = o->code_type + load_bias;
	out->eval_start = o->eval + load_bias;
	out->eval_end = out->eval_start + o->eval_size;
	out->l = *l;
	return true;
}

/* ---- code objects ------------------------------------------------------------------------- */

/* Bounds of what a code object may make stkrec read: a hostile process chooses the sizes. */
#define MAX_NAME 1024		/* characters of a name or file name */
#define MAX_LINETABLE 65536	/* bytes of a line table */

/* Executables rec_python__exes() looks at: bpf/python.bpf.h py_exes' size. */
#define PY_EXES_MAX 256

struct code {
	uint32_t pid, check;
	uint64_t addr;
	uint32_t id;		/* 0 until a stack names it */
	uint32_t file;		/* the file (rec_python->file) it was last queued for */
	uint32_t put_file;	/* and last written to (0: none yet) */
	struct cap_code rec;	/* name, file, lines (reason: read or not) */
};

/* A process's interpreter, as rec_unwind__proc() wrote it for the walker. */
struct pyproc {
	uint32_t pid;
	uint32_t status;	/* enum rec_py_status, counted when it changes */
	struct stk_pyproc py;	/* runtime 0: none to read code objects with */
};

struct rec_python {
	pthread_mutex_t lock;
	void *codes;		/* tsearch: struct code by (pid, addr, check) */
	void *procs;		/* tsearch: struct pyproc by pid */
	uint32_t ncodes, max;
	uint32_t next_id;
	uint32_t file;		/* the capture file being written: 1, 2, ... (--rotate) */
	struct code **pending;	/* named by a stack, not written to this file yet */
	uint32_t npending, pending_cap;
	struct code full;	/* what every code object past max is named by */
	uint64_t losses[CAP_LOSS__COUNT];	/* since rec_python__losses() */
	struct rec_python_stats stats;
	/* rec_python__watch(): the thread reading BPF's notifications */
	struct ring_buffer *rb;
	pthread_mutex_t rb_lock;	/* rb's consumer: the thread, or rec_python__put() */
	struct rec_worker worker;	/* watch_main() */
	/* rec_python__exes(): BPF's map py_exes, and the executables looked at for it */
	int exes_fd;
	struct stk_pyexe_key exes[PY_EXES_MAX];
	uint32_t nexes;
};

static int cmp_code(const void *a, const void *b)
{
	const struct code *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->check < y->check ? -1 : x->check > y->check;
}

static int cmp_pyproc(const void *a, const void *b)
{
	const struct pyproc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

struct rec_python *rec_python__new(uint32_t max_codes)
{
	struct rec_python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	pthread_mutex_init(&py->lock, NULL);
	pthread_mutex_init(&py->rb_lock, NULL);
	py->exes_fd = -1;
	py->max = max_codes;
	py->file = 1;
	py->full.rec = (struct cap_code){ .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_FULL };
	return py;
}

static void free_names(struct cap_code *c)
{
	free(c->name);
	free(c->file);
	free(c->lines);
	c->name = c->file = NULL;
	c->lines = NULL;
	c->nlines = 0;
}

static void free_code(void *p)
{
	struct code *c = p;

	free_names(&c->rec);
	free(c);
}

void rec_python__free(struct rec_python *py)
{
	if (!py)
		return;
	rec_python__unwatch(py);
	tdestroy(py->codes, free_code);
	tdestroy(py->procs, free);
	free(py->pending);
	pthread_mutex_destroy(&py->lock);
	pthread_mutex_destroy(&py->rb_lock);
	free(py);
}

/* ---- interpreter executables, for processes not read yet (bpf/python.bpf.h py_exes) -------- */

/* The address of e's first executable segment (mm->start_code at load bias 0); false: none. */
static bool text_vaddr(Elf *e, __u64 *vaddr)
{
	size_t n;
	bool found = false;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    (!found || ph.p_vaddr < *vaddr)) {
			*vaddr = ph.p_vaddr;
			found = true;
		}
	}
	return found;
}

/* Is key new to py (then remembered)? False also when PY_EXES_MAX are known: no more room. */
static bool new_exe(struct rec_python *py, const struct stk_pyexe_key *key)
{
	bool fresh;

	pthread_mutex_lock(&py->lock);
	fresh = py->nexes < PY_EXES_MAX;
	for (uint32_t i = 0; fresh && i < py->nexes; i++)
		fresh = memcmp(&py->exes[i], key, sizeof(*key)) != 0;
	if (fresh)
		py->exes[py->nexes++] = *key;
	pthread_mutex_unlock(&py->lock);
	return fresh;
}

/*
 * The interpreter of executable fd into BPF's py_exes, when the runtime is in the file itself
 * (a python linked to libpython has it in the library, whose address BPF cannot know before
 * stkrec reads the process: such a python waits for that read, as before). Once per file, by
 * its identity as the kernel's mm->exe_file has it: inode, and the device encoded as the
 * kernel's dev_t. The file's own symbols say what it is: a copy whose _PyRuntime was renamed,
 * or of an unknown version, gets none.
 */
static void publish_exe(struct rec_python *py, int fd)
{
	struct stk_pyexe_key key = { 0 };
	struct stk_pyexe v = { 0 };
	struct rec_pyobj o;
	struct stat st;
	GElf_Ehdr eh;
	Elf *e;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return;
	key.ino = st.st_ino;
	key.dev = major(st.st_dev) << 20 | minor(st.st_dev);
	if (!new_exe(py, &key))
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || !gelf_getehdr(e, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
	rec_pyobj_find(e, &o);
	/* no room in the map (256 files): that interpreter's processes wait for stkrec's read */
	if (rec_pyobj_proc(&o, 0, &v.py) && text_vaddr(e, &v.text))
		bpf_map_update_elem(py->exes_fd, &key, &v, BPF_ANY);
out:
	elf_end(e);
}

/* The executable of process pid, a Python stkrec read: its later processes need no read. */
static void publish_pid_exe(struct rec_python *py, uint32_t pid)
{
	char path[64];
	int fd;

	if (py->exes_fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	publish_exe(py, fd);
	close(fd);
}

/* Files named python* in dir (a $PATH entry). */
static void publish_dir(struct rec_python *py, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		int fd;

		if (strncmp(de->d_name, "python", 6))
			continue;
		/* not a FIFO's open that waits for a writer: the file is checked to be one */
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		publish_exe(py, fd);
		close(fd);
	}
	if (d)
		closedir(d);
}

int rec_python__exes(struct rec_python *py, int map_fd)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL;

	if (!py)
		return 0;
	py->exes_fd = map_fd;
	dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!dirs)
		return -ENOMEM;
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
		if (*dir == '/')
			publish_dir(py, dir);
	free(dirs);
	return 0;
}

void rec_python__proc(struct rec_python *py, uint32_t pid, const struct rec_pyobj *o,
		      const struct stk_pyproc *pp)
{
	struct pyproc key = { .pid = pid }, *p, **found;
	uint32_t status = o ? o->status : REC_PY_NONE;
	bool first = false;

	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	found = tfind(&key, &py->procs, cmp_pyproc);
	p = found ? *found : NULL;
	if (status == REC_PY_NONE) {
		if (p) {
			tdelete(p, &py->procs, cmp_pyproc);
			free(p);
		}
		goto out;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || !tsearch(p, &py->procs, cmp_pyproc)) {
			free(p);
			goto out;
		}
		p->pid = pid;
	}
	first = p->status != status && status == REC_PY_OK;
	/* a reason once per process (image), not at each read of its mappings */
	if (p->status != status && status == REC_PY_VERSION)
		py->losses[CAP_LOSS_PY_VERSION]++;
	if (p->status != status && status == REC_PY_NO_RUNTIME)
		py->losses[CAP_LOSS_PY_NO_RUNTIME]++;
	p->status = status;
	memset(&p->py, 0, sizeof(p->py));
	if (status == REC_PY_OK && pp)
		p->py = *pp;
out:
	pthread_mutex_unlock(&py->lock);
	if (first)
		publish_pid_exe(py, pid);
}

/* ---- reading the process's memory --------------------------------------------------------- */

/*
 * n bytes at addr of pid into buf, only from resident pages (/proc/PID/pagemap bit 63): a read
 * that has to fault a page in may wait for a FUSE server or a userfaultfd of the process's.
 * 0, -ESRCH (gone), -EFAULT (not resident, not mapped).
 */
static int read_mem(uint32_t pid, int pagemap, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)addr, n };
	uint64_t page, entry;
	ssize_t got;

	if (!n)
		return 0;
	if (addr + n < addr || addr >= (1ull << 56))
		return -EFAULT;
	for (page = addr >> 12; page <= (addr + n - 1) >> 12; page++) {
		if (pread(pagemap, &entry, sizeof(entry), (off_t)(page * 8)) != sizeof(entry))
			return errno == ESRCH ? -ESRCH : -EFAULT;
		if (!(entry >> 63))
			return -EFAULT;
	}
	got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	if (got == (ssize_t)n)
		return 0;
	return got < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

/* UTF-8 of one code point into out (at least 4 bytes); a NUL becomes '?'. */
static size_t utf8_put(uint32_t cp, char *out)
{
	if (!cp) {
		out[0] = '?';
		return 1;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		cp = 0xfffd;	/* no code point, or a lone surrogate */
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static uint32_t head_u32(const uint8_t *head, uint16_t off)
{
	uint32_t v;

	memcpy(&v, head + off, 4);
	return v;
}

static uint64_t head_u64(const uint8_t *head, uint16_t off)
{
	uint64_t v;

	memcpy(&v, head + off, 8);
	return v;
}

/*
 * Where a code object's parts are read: the copy BPF made at its first sight (struct
 * stk_pycode), and for what it lacks, the process, opened at its first read. A read from the
 * process first checks that the code object still has the frame's digest.
 */
struct code_src {
	const struct stk_pylayout *l;
	uint64_t code_type;	/* the process's PyCode_Type (0: unknown, not checked) */
	uint32_t pid, check;
	uint64_t addr;		/* the code object */
	int pagemap;		/* -1 until opened */
	int verified;		/* 0: not yet; 1: the object is the frame's; < 0: -errno */
	uint8_t head[256];	/* the code object's head, once verified */
};

/*
 * The process's pagemap opened and its code object's head read and checked, once: 0 or -errno
 * (-ESTALE: changed).
 */
static int src_process(struct code_src *s)
{
	const uint8_t *head = s->head;
	char path[64];
	int err;

	if (s->verified)
		return s->verified < 0 ? s->verified : 0;
	snprintf(path, sizeof(path), "/proc/%u/pagemap", s->pid);
	s->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	err = s->pagemap < 0 ? -ESRCH :
	      read_mem(s->pid, s->pagemap, s->addr, s->head, s->l->co_code);
	if (!err && ((s->code_type && head_u64(head, 8) != s->code_type) ||
		     stk_py_check(head_u32(head, s->l->co_firstlineno),
				  head_u32(head, s->l->co_argcount), head_u32(head, s->l->co_kwonly),
				  head_u32(head, s->l->co_flags)) != s->check))
		err = -ESTALE;	/* freed, and another object made at its address */
	s->verified = err ? err : 1;
	return err;
}

/*
 * n bytes at offset off of the object at addr, of which BPF copied the first have bytes into
 * copy: those from the copy, the rest from the process. 0 or -errno.
 */
static int src_read(struct code_src *s, const uint8_t *copy, size_t have, uint64_t addr,
		    size_t off, void *buf, size_t n)
{
	size_t from_copy = off < have ? (have - off < n ? have - off : n) : 0;
	int err;

	if (from_copy)
		memcpy(buf, copy + off, from_copy);
	if (from_copy == n)
		return 0;
	err = src_process(s);
	if (err)
		return err;
	return read_mem(s->pid, s->pagemap, addr + off + from_copy, (uint8_t *)buf + from_copy,
			n - from_copy);
}

/*
 * A str object at addr as UTF-8 (a new string), its first have bytes in copy. Compact strings
 * only, which code objects' names are: ASCII (the bytes follow PyASCIIObject), else kind 1, 2
 * or 4 bytes a character after PyCompactUnicodeObject (state: interned 2 bits, kind 3, compact
 * 1, ascii 1). NULL: not one.
 */
static char *read_str(struct code_src *src, uint64_t addr, const uint8_t *copy, size_t have,
		      int *err)
{
	const struct stk_pylayout *l = src->l;
	uint8_t head[72], raw[MAX_NAME * 4];
	uint64_t len;
	uint32_t state, kind;
	char *s;
	size_t n = 0;

	*err = src_read(src, copy, have, addr, 0, head, l->str_ascii);
	if (*err)
		return NULL;
	memcpy(&len, head + 16, 8);
	memcpy(&state, head + 32, 4);
	kind = (state >> 2) & 7;
	*err = -EFAULT;
	if (len > MAX_NAME || !(state & (1u << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;	/* not compact, or no kind: not a name's string */
	if (state & (1u << 6))
		kind = 0;	/* ASCII */
	*err = src_read(src, copy, have, addr, kind ? l->str_compact : l->str_ascii, raw,
			len * (kind ? kind : 1));
	s = *err ? NULL : malloc(len * 4 + 1);
	if (!s)
		return NULL;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t cp;

		if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + i * 2, 2);
			cp = v;
		} else if (kind == 4) {
			memcpy(&cp, raw + i * 4, 4);
		} else {
			cp = raw[i];
			if (!kind && cp >= 0x80)
				cp = 0xfffd;
		}
		n += utf8_put(cp, s + n);
	}
	s[n] = 0;
	return s;
}

/* 3.11+ line tables (Objects/locations.md): 6-bit groups, bit 6 set on all but the last. */
static const uint8_t *lt_varint(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
	uint32_t shift = 0;

	*v = 0;
	while (p < end && shift < 32) {
		*v |= (uint32_t)(*p & 63) << shift;
		shift += 6;
		if (!(*p++ & 64))
			return p;
	}
	return NULL;
}

/* The line delta of the entry at p, whose first byte says its code (bits 3-6). */
static bool lt_delta(const uint8_t *p, const uint8_t *end, int32_t *delta, bool *none)
{
	uint32_t code = (*p >> 3) & 15, v;

	*none = false;
	*delta = 0;
	switch (code) {
	case 15:		/* no location */
		*none = true;
		return true;
	case 13:		/* no column: a signed line delta */
	case 14:		/* long form: the line delta first */
		if (!lt_varint(p + 1, end, &v))
			return false;
		*delta = v & 1 ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
		return true;
	case 11:
	case 12:		/* one line: code - 10 lines on */
		*delta = (int32_t)code - 10;
		return true;
	default:		/* short forms and ONE_LINE0: the same line */
		return true;
	}
}

/*
 * Lines of a 3.11+ location table as runs (start in code units, line), equal lines merged.
 * Each entry covers (first byte & 7) + 1 code units; its other bytes have bit 7 clear.
 */
int rec_python_lines(const uint8_t *lt, size_t len, uint32_t firstline, struct cap_code_line **out,
		     uint32_t *nout)
{
	const uint8_t *p = lt, *end = lt + len;
	struct cap_code_line *v = NULL;
	uint32_t n = 0, cap = 0, at = 0, shown;
	int64_t line = firstline;

	*out = NULL;
	*nout = 0;
	while (p < end) {
		int32_t delta;
		bool none;

		if (!(*p & 0x80) || !lt_delta(p, end, &delta, &none)) {
			free(v);
			return -EBADMSG;
		}
		line += delta;
		shown = none || line < 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		if (!n || v[n - 1].line != shown) {
			if (rec_grow(&v, n, &cap, sizeof(*v), 16)) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct cap_code_line){ at, shown };
		}
		at += (*p & 7) + 1;
		for (p++; p < end && !(*p & 0x80); p++)
			;
	}
	*out = v;
	*nout = n;
	return 0;
}

/*
 * The line table (a bytes object at addr, its first have bytes in copy) as runs into c. A table
 * BPF could not copy whole is read from the process; where that fails, the code object's first
 * line stands for all of it (*cut).
 */
static int read_lines(struct code_src *src, uint64_t addr, const uint8_t *copy, size_t have,
		      struct cap_code *c, bool *cut)
{
	uint8_t head[32], *lt;
	uint64_t len;
	int err;

	*cut = false;
	err = src_read(src, copy, have, addr, 0, head, sizeof(head));
	if (err)
		return err;
	memcpy(&len, head + 16, 8);	/* ob_size; the bytes follow at 32 (ob_sval) */
	if (len > MAX_LINETABLE)
		return -EFAULT;
	lt = malloc(len ? len : 1);
	if (!lt)
		return -ENOMEM;
	err = src_read(src, copy, have, addr, 32, lt, len);
	if (!err)
		err = rec_python_lines(lt, len, c->firstline, &c->lines, &c->nlines);
	free(lt);
	if (err && err != -ENOMEM && have) {
		/* BPF copied a part: the names stand, and the first line for every instruction */
		c->lines = malloc(sizeof(*c->lines));
		if (!c->lines)
			return -ENOMEM;
		c->lines[0] = (struct cap_code_line){ 0, c->firstline };
		c->nlines = 1;
		*cut = true;
		return 0;
	}
	return err == -EBADMSG ? -EFAULT : err;
}

/*
 * The names of code object c: from BPF's copy when there is one (copy, its layout's version
 * not 0), else from the process, whose interpreter is pp (NULL: unknown). c->rec, reason set.
 * *cut: its line table is only its first line (read_lines()).
 */
static void read_code(const struct stk_pyproc *pp, const struct stk_pycode *copy, struct code *c,
		      bool *cut)
{
	static const struct stk_pycode none;
	struct code_src src = { .pid = c->pid, .check = c->check, .addr = c->addr, .pagemap = -1 };
	uint64_t name_at, file_at, lines_at;
	int err;

	*cut = false;
	c->rec.reason = CAP_CODE_UNREADABLE;
	if (!copy || !copy->version)
		copy = NULL;
	src.l = layout_of(copy ? copy->version : pp ? pp->l.version : 0);
	src.code_type = pp ? pp->code_type : 0;
	if (!src.l)
		return;
	if (copy) {
		/* BPF checked the digest and the type when it copied */
		c->rec.firstline = copy->firstline;
		name_at = copy->name_at;
		file_at = copy->file_at;
		lines_at = copy->lines_at;
	} else {
		err = src_process(&src);
		if (err)
			goto out;
		c->rec.firstline = head_u32(src.head, src.l->co_firstlineno);
		name_at = head_u64(src.head, src.l->co_qualname);
		file_at = head_u64(src.head, src.l->co_filename);
		lines_at = head_u64(src.head, src.l->co_linetable);
		copy = &none;
	}
	c->rec.name = read_str(&src, name_at, copy->name, copy->name_len, &err);
	if (!err)
		c->rec.file = read_str(&src, file_at, copy->file, copy->file_len, &err);
	if (!err)
		err = read_lines(&src, lines_at, copy->lines, copy->lines_len, &c->rec, cut);
out:
	if (src.pagemap >= 0)
		close(src.pagemap);
	if (err)
		free_names(&c->rec);
	c->rec.reason = !err ? CAP_CODE_NAMED : err == -ESRCH ? CAP_CODE_GONE :
			err == -ESTALE ? CAP_CODE_CHANGED : CAP_CODE_UNREADABLE;
}

/*
 * The entry of (pid, addr, check), made and read now if new, with BPF's copy of its names
 * (NULL: none); one not named yet, and in no capture yet, is read again when a copy comes.
 * NULL past the table's bound.
 */
static struct code *code_of(struct rec_python *py, uint32_t pid, uint64_t addr, uint32_t check,
			    const struct stk_pycode *copy)
{
	struct code key = { .pid = pid, .addr = addr, .check = check }, *c, **found;
	struct pyproc pkey = { .pid = pid }, **pp;
	const struct stk_pyproc *proc;
	bool cut;

	found = tfind(&key, &py->codes, cmp_code);
	c = found ? *found : NULL;
	/*
	 * A stack may name a code object before the thread reading BPF's copies has it: read from
	 * the process then, the entry is named again from the copy, unless a file has it already
	 * (rec_python__put() takes the copies waiting first).
	 */
	if (c && (c->rec.reason == CAP_CODE_NAMED || c->put_file == py->file || !copy ||
		  !copy->version))
		return c;
	if (c) {
		py->stats.unnamed--;
		if (c->id && !c->put_file)	/* counted by id_of(), in no interval yet */
			py->losses[CAP_LOSS_PY_UNNAMED]--;
		free_names(&c->rec);
		goto read;
	}
	if (py->ncodes >= py->max) {
		py->losses[CAP_LOSS_PY_NAMES_FULL]++;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = key;
	c->rec.lang = CAP_LANG_PYTHON;
	c->rec.addr = addr;
	if (!tsearch(c, &py->codes, cmp_code)) {
		free(c);
		return NULL;
	}
	py->ncodes++;
	py->stats.read++;
read:
	pp = tfind(&pkey, &py->procs, cmp_pyproc);
	proc = pp && (*pp)->py.runtime ? &(*pp)->py : NULL;
	if ((copy && copy->version) || proc)
		read_code(proc, copy, c, &cut);
	else
		c->rec.reason = CAP_CODE_GONE;
	if (c->rec.reason != CAP_CODE_NAMED)
		py->stats.unnamed++;
	else if (cut)
		py->stats.lines_cut++;
	return c;
}

void rec_python__seen(struct rec_python *py, const struct stk_pycode *r)
{
	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	code_of(py, r->n.tgid, r->n.addr, r->n.check, r);
	pthread_mutex_unlock(&py->lock);
}

/* One notification of the ring (bpf/python.bpf.h py_notify): a code object met first. */
static int on_code(void *ctx, void *data, size_t len)
{
	const struct stk_pycode *r = data;

	if (len >= sizeof(*r) && r->n.kind == STK_NOTIFY_PYCODE)
		rec_python__seen(ctx, r);
	return 0;
}

/* The notifications waiting in the ring, by whichever thread asks first. */
static void consume(struct rec_python *py)
{
	pthread_mutex_lock(&py->rb_lock);
	if (py->rb)
		ring_buffer__consume(py->rb);
	pthread_mutex_unlock(&py->rb_lock);
}

static void *watch_main(void *arg)
{
	struct rec_python *py = arg;
	struct pollfd pfd[2] = {
		{ .fd = ring_buffer__epoll_fd(py->rb), .events = POLLIN },
		{ .fd = py->worker.stop_fd, .events = POLLIN },
	};

	while (!(pfd[1].revents & POLLIN))
		if (poll(pfd, 2, -1) > 0)
			consume(py);
	return NULL;
}

int rec_python__watch(struct rec_python *py, int ring_fd)
{
	int err;

	if (!py)
		return 0;
	py->rb = ring_buffer__new(ring_fd, on_code, py, NULL);
	err = !py->rb ? -errno : rec_worker_start(&py->worker, watch_main, py);
	if (err)
		rec_python__unwatch(py);
	return err;
}

void rec_python__unwatch(struct rec_python *py)
{
	if (!py)
		return;
	rec_worker_stop(&py->worker);
	consume(py);	/* what came meanwhile */
	pthread_mutex_lock(&py->rb_lock);
	ring_buffer__free(py->rb);
	py->rb = NULL;
	pthread_mutex_unlock(&py->rb_lock);
}

/*
 * The capture id of c (the full table's entry for NULL), queued for the next CODES record the
 * first time the file being written names it: each file holds the entries its stacks name.
 */
static uint32_t id_of(struct rec_python *py, struct code *c)
{
	if (!c)
		c = &py->full;
	if (c->id && c->file == py->file)
		return c->id;
	if (rec_grow(&py->pending, py->npending, &py->pending_cap, sizeof(*py->pending), 64))
		return 0;
	if (!c->id) {
		c->id = ++py->next_id;
		c->rec.id = c->id;
		if (c->rec.reason != CAP_CODE_NAMED && c != &py->full)
			py->losses[CAP_LOSS_PY_UNNAMED]++;
	}
	c->file = py->file;
	py->pending[py->npending++] = c;
	return c->id;
}

uint32_t rec_python__frames(struct rec_python *py, uint32_t pid, const uint64_t *ips, uint32_t n,
			    uint64_t *out)
{
	uint32_t i, k = 0;

	if (py)
		pthread_mutex_lock(&py->lock);
	for (i = 0; i < n; i++) {
		uint32_t id = 0;

		if (!STK_PYWORD_IS(ips[i])) {
			out[k++] = ips[i];
			continue;
		}
		if (i + 1 == n)
			break;	/* cut in half: never by BPF's walk, which stores both or neither */
		if (py)
			id = id_of(py, code_of(py, pid, ips[i + 1], STK_PYWORD_CHECK(ips[i]), NULL));
		/* no id (no memory): the frame is left out rather than misnamed */
		if (id)
			out[k++] = CAP_CODE_FRAME(id, STK_PYWORD_LASTI(ips[i]));
		i++;
	}
	if (py)
		pthread_mutex_unlock(&py->lock);
	return k;
}

int rec_python__put(struct rec_python *py, struct cap_writer *w)
{
	struct cap_record rec = { .type = CAP_CHUNK_CODES };
	uint32_t i;
	int err = 0;

	if (!py)
		return 0;
	/* BPF's copies of the code objects the rows name are in the ring by now: names first */
	consume(py);
	pthread_mutex_lock(&py->lock);
	if (!py->npending)
		goto out;
	rec.codes.codes = malloc(py->npending * sizeof(*rec.codes.codes));
	if (!rec.codes.codes) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < py->npending; i++) {
		rec.codes.codes[i] = py->pending[i]->rec;
		py->pending[i]->put_file = py->file;
	}
	rec.codes.count = py->npending;
	err = cap_writer__put(w, &rec);
	free(rec.codes.codes);
	if (err)
		goto out;
	/* the names stay: a next file (--rotate) whose stacks name the code writes them again */
	py->stats.written += py->npending;
	py->npending = 0;
out:
	pthread_mutex_unlock(&py->lock);
	return err;
}

void rec_python__new_file(struct rec_python *py)
{
	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	py->file++;
	py->npending = 0;	/* queued for the file closed: queued again when named */
	pthread_mutex_unlock(&py->lock);
}

void rec_python__losses(struct rec_python *py, uint64_t *losses)
{
	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	for (int k = 0; k < CAP_LOSS__COUNT; k++)
		losses[k] += py->losses[k];
	memset(py->losses, 0, sizeof(py->losses));
	pthread_mutex_unlock(&py->lock);
}

void rec_python__stats(struct rec_python *py, struct rec_python_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	*st = py->stats;
	pthread_mutex_unlock(&py->lock);
}
