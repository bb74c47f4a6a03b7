/* SPDX-License-Identifier: MIT */
/*
 * python.h: python/, CPython for the walker and the capture (docs/bpf.md 10): which objects are
 * an interpreter and their layout (the one table of versions), the code objects BPF met, read
 * from the process once, and their CODES records. unwind/ tells it each process's interpreter,
 * write/ turns Python frames into capture ids with it. It needs only base/.
 */
#ifndef STK_REC_PYTHON_H
#define STK_REC_PYTHON_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "stk/abi.h"
#include "stk/capture.h"

#include "../base/base.h"

/* --python-frames: what stkreport shows by default; native records no Python frame. */
enum rec_pyframes {
	REC_PYFRAMES_NATIVE = 0,
	REC_PYFRAMES_PYTHON = 1,	/* Python frames in place of the interpreter's (default) */
	REC_PYFRAMES_MIXED = 2,		/* both */
};
/* "native", "python" or "mixed": --python-frames's spelling and the meta key python_frames. */
const char *rec_python_frames_name(uint32_t mode);

/* What an object's symbols say of it (rec_pyobj_find()). */
enum rec_py_status {
	REC_PY_NONE = 0,	/* not an interpreter */
	REC_PY_OK,		/* a CPython whose layout the table has */
	REC_PY_VERSION,		/* a CPython of a version the table lacks (or none said) */
	REC_PY_NO_RUNTIME,	/* an interpreter without _PyRuntime (or the other symbols) */
};

/* A CPython runtime in an object file: ELF virtual addresses of its symbols. */
struct rec_pyobj {
	uint32_t status;	/* enum rec_py_status */
	uint32_t version;	/* major << 8 | minor, from Py_Version (0: none) */
	uint64_t runtime, code_type, eval, eval_size;
};

/* Look for a CPython runtime in e (.dynsym, then .symtab). */
void rec_pyobj_find(Elf *e, struct rec_pyobj *o);
/* The walker's view of o loaded at load_bias (address - ELF virtual address); false: not OK. */
bool rec_pyobj_proc(const struct rec_pyobj *o, uint64_t load_bias, struct stk_pyproc *out);
/*
 * A 3.11+ location table (co_linetable) as line runs: start (code units) and line, equal
 * neighbours merged, 0 for no line. *out is malloc'ed. 0, -EBADMSG, -ENOMEM.
 */
int rec_python_lines(const uint8_t *lt, size_t len, uint32_t firstline, struct cap_code_line **out,
		     uint32_t *nout);

/* The code objects of every Python process, their names and capture ids. Thread-safe. */
struct rec_python;
struct rec_python_stats {
	uint64_t read;		/* code objects read */
	uint64_t unnamed;	/* of which could not be named */
	uint64_t lines_cut;	/* named, but with their first line for every instruction: the
				 * line table neither BPF's copy nor the process gave whole */
	uint64_t written;	/* CODES entries written */
};

/* At most max_codes code objects (--python-names). NULL with errno set. */
struct rec_python *rec_python__new(uint32_t max_codes);
void rec_python__free(struct rec_python *py);
/*
 * Give BPF (its map py_exes, map_fd) the interpreter of each executable whose runtime is in the
 * file itself, for the processes stkrec has not read yet (docs/bpf.md 10): those named python*
 * in $PATH's directories now, and later the executable of each Python process stkrec reads.
 * 0 or -ENOMEM (py NULL: nothing to do).
 */
int rec_python__exes(struct rec_python *py, int map_fd);
/*
 * pid's interpreter as the walker was given it (o: its object's status, counted once per
 * process when not OK; NULL, or pp without runtime: none).
 */
void rec_python__proc(struct rec_python *py, uint32_t pid, const struct rec_pyobj *o,
		      const struct stk_pyproc *pp);
/*
 * BPF met a code object first (r: STK_NOTIFY_PYCODE with the process, address and digest, and
 * what BPF copied of its names): name it now, from the copy, and from the process for what the
 * copy lacks.
 */
void rec_python__seen(struct rec_python *py, const struct stk_pycode *r);
/*
 * Read BPF's STK_NOTIFY_PYCODE messages from the ring buffer map ring_fd on a thread of py's
 * own, as they come (rec_python__seen()). 0 or -errno (py NULL: nothing to do).
 */
int rec_python__watch(struct rec_python *py, int ring_fd);
/* Stop that thread, after the messages still in the ring (rec_python__free() does too). */
void rec_python__unwatch(struct rec_python *py);
/*
 * A user stack of pid as BPF (or the deferred walk) stored it into out (n words at most): each
 * Python frame's two words become one CAP_CODE_FRAME of the code object's capture id (read now
 * if it was not). Returns the words in out. py NULL: Python frames are left out.
 */
uint32_t rec_python__frames(struct rec_python *py, uint32_t pid, const uint64_t *ips, uint32_t n,
			    uint64_t *out);
/* The CODES record of the ids given out since the last call, before the rows naming them. */
int rec_python__put(struct rec_python *py, struct cap_writer *w);
/* A new capture file: the entries its stacks name are written to it again (format.md 4.11). */
void rec_python__new_file(struct rec_python *py);
/* Add the losses counted since the last call (processes, code objects) to losses. */
void rec_python__losses(struct rec_python *py, uint64_t *losses);
void rec_python__stats(struct rec_python *py, struct rec_python_stats *st);

#endif /* STK_REC_PYTHON_H */
