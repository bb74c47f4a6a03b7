/* SPDX-License-Identifier: GPL-2.0 */
/*
 * python.bpf.h: a CPython thread's frame chain (docs/bpf.md 10), included by stkrec.bpf.c before
 * unwind.bpf.h, which splices the chain into the user stack it walks. One table entry of
 * offsets per CPython version, chosen by stkrec (struct stk_pylayout in the process's
 * unwind_procs entry): this file knows no version. A second runtime (Perl, Ruby) would be one
 * more such file, with its own chain and its own word tag.
 *
 * The chain is read before the native walk: the thread state (the GIL holder's, else the
 * interpreter's thread list searched for the thread's id), then the frames of each activation
 * of the interpreter with its mark on the C stack (struct stk_pyact), each frame's code object
 * checked against PyCode_Type's address and digested (stk_py_check()). Every read is
 * bpf_probe_read_user(): the process is untrusted and a bad pointer is a failed read, counted
 * as the chain's stop.
 */
#ifndef STK_PYTHON_BPF_H
#define STK_PYTHON_BPF_H

const volatile bool cfg_python = false;		/* --python-frames python|mixed */

/* Code objects BPF told stkrec of (py_note_code()), by process */
struct py_code_key {
	__u32 tgid;
	__u32 check;
	__u64 code;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_code_key);
	__type(value, __u8);
} py_codes SEC(".maps");

/*
 * Their notifications (struct stk_pycode: STK_NOTIFY_PYCODE and the names BPF copied), in a
 * ring of their own, which a thread of stkrec's reads at once (record/python/): the names must
 * be had before the process frees the code objects, often within milliseconds of their first
 * sight, while the notify ring's reader may be building a process's unwind tables (150 to 250
 * ms for python3.11 in the 6.1 VM). 2 KiB a record: a new process's first events tell dozens.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} py_notify SEC(".maps");

/*
 * Interpreter executables stkrec identified (struct stk_pyexe), by file: the chain of a process
 * stkrec has not read yet is walked with its executable's (py_exe_proc()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct stk_pyexe_key);
	__type(value, struct stk_pyexe);
} py_exes SEC(".maps");

/* Thread states searched for the thread's own when it does not hold the GIL. */
#define PY_THREADS_MAX 64
/* Code objects whose first sight this CPU remembers (py_note_code()) */
#define PY_SEEN_HINTS 256

/*
 * The frames window: a thread's frames lie in its data stack, each caller's below its callee's
 * (3.11+), so the chain reads up to this many bytes ending at a frame's end, within its page, and
 * finds the frames below in the copy: a bpf_probe_read_user() costs about 100 ns here whatever
 * its size, and a read per frame was half the chain's.
 */
#define PY_FWIN 1024
#define PY_PAGE 4096

/* The chain walk's state, in the scratch slot (no pointers: it is map memory) */
struct pywalk {
	__u64 frame;		/* the next frame to read; 0: the activation's frames are read */
	__u64 cframe;		/* STK_PYENTRY_FLAG: the next activation's _PyCFrame */
	__u64 at;		/* STK_PYENTRY_FLAG: the mark of the activation being read */
	__u64 ts;		/* thread-state search: the one to look at next */
	__u32 tid;
	__u32 found;
	__u32 first;		/* the chain's frames when the activation being read began */
	__u32 pad;
	__u64 fwin_base;	/* the user address of fwin[0] */
	__u32 fwin_len;		/* bytes in fwin; 0: none */
	__u32 pad2;
	__u8 fwin[PY_FWIN];	/* frames of the data stack (py_read_frame()) */
	__u8 buf[STK_PY_READ];	/* the frame read */
	__u8 code[STK_PY_READ];	/* its code object's head */
	struct stk_pyproc py;	/* the interpreter the chain was read with (py_chain()) */
	struct stk_pyproc exe;	/* a process's executable's (py_exe_proc()) */
};

/* What bpf_loop() hands each step (on the BPF stack: pointers) */
struct pywalk_ctx {
	struct pywalk *w;
	struct stk_pychain *out;
	const struct stk_pyproc *py;
};

/*
 * Entry i of an array of n (a power of two) entries: the mask stays in the program, as in
 * frame_index(). Where i was checked against n before, clang drops the mask, and 6.1's verifier,
 * which loses the check's bound when i is spilled to the stack, refuses the access.
 */
static __always_inline __u32 py_index(__u32 i, __u32 n)
{
	asm volatile("" : "+r"(i));
	return i & (n - 1);
}

/*
 * A word of a read buffer of size bytes (at most 256) at byte off: a table offset the verifier
 * must see in range.
 */
static __always_inline __u64 py_u64(const __u8 *buf, __u32 size, __u32 off)
{
	__u64 v = 0;

	off &= 255;
	if (off + 8 <= size)
		__builtin_memcpy(&v, buf + off, 8);
	return v;
}

static __always_inline __u32 py_u32(const __u8 *buf, __u32 size, __u32 off)
{
	__u32 v = 0;

	off &= 255;
	if (off + 4 <= size)
		__builtin_memcpy(&v, buf + off, 4);
	return v;
}

/* The digest (stk_py_check()) of a code object whose head is in buf (size bytes of it). */
static __always_inline __u32 py_digest(const __u8 *buf, __u32 size, const struct stk_pylayout *l)
{
	return stk_py_check(py_u32(buf, size, l->co_firstlineno), py_u32(buf, size, l->co_argcount),
			    py_u32(buf, size, l->co_kwonly), py_u32(buf, size, l->co_flags));
}

static __always_inline __u8 py_u8(const __u8 *buf, __u32 off)
{
	off &= 127;
	return off < STK_PY_READ ? buf[off] : 0;
}

/* The word at user address addr, or 0 when it cannot be read. */
static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* One thread state of the interpreter's list: is it the thread's? (bpf_loop()) */
static long py_thread_step(__u32 i, void *ctx)
{
	struct pywalk_ctx *c = ctx;
	struct pywalk *p = c->w;
	const struct stk_pylayout *l = &c->py->l;

	if (!p->ts)
		return 1;
	if (py_read_ptr(p->ts + l->ts_tid) == p->tid) {
		p->found = 1;
		return 1;
	}
	p->ts = py_read_ptr(p->ts + l->ts_next);
	return 0;
}

/*
 * The thread state of thread tid: the GIL holder's when it is this thread's (3.11 keeps it in
 * _PyRuntime: one read, and most samples of a busy interpreter are of its holder), else found
 * in the first interpreter's list by native_thread_id. Not pthread_getspecific()'s way (the TSS
 * key into glibc's struct pthread): that needs the C library's private layout, which differs
 * between glibc versions and in a musl container. 0: none.
 */
static __always_inline __u64 py_thread_state(struct pywalk_ctx *c)
{
	const struct stk_pylayout *l = &c->py->l;
	struct pywalk *p = c->w;
	__u64 interp;

	if (l->rt_tstate != 0xffff) {
		p->ts = py_read_ptr(c->py->runtime + l->rt_tstate);
		if (p->ts && py_read_ptr(p->ts + l->ts_tid) == p->tid)
			return p->ts;
	}
	interp = py_read_ptr(c->py->runtime + l->rt_interp);
	if (!interp)
		return 0;
	p->ts = py_read_ptr(interp + l->interp_threads);
	p->found = 0;
	bpf_loop(PY_THREADS_MAX, py_thread_step, c, 0);
	return p->found ? p->ts : 0;
}

/* The chain's first problem: why it is not whole (it was COMPLETE until then). */
static __always_inline void py_note(struct pywalk_ctx *c, __u32 stop)
{
	if (c->out->stop == STK_PYSTOP_COMPLETE)
		c->out->stop = stop;
}

static __always_inline long py_end(struct pywalk_ctx *c, __u32 stop)
{
	py_note(c, stop);
	return 1;
}

/* The activation read so far ends, marked at: its frames are the chain's since the last one. */
static __always_inline long py_close(struct pywalk_ctx *c, __u64 at)
{
	struct stk_pychain *out = c->out;
	__u32 k = out->nact;

	if (k >= STK_PY_ACTS)
		return py_end(c, STK_PYSTOP_TRUNCATED);
	out->act[py_index(k, STK_PY_ACTS)] = (struct stk_pyact){ .at = at, .end = out->n };
	out->nact = k + 1;
	c->w->first = out->n;
	return 0;
}

/*
 * A frame of the activation being read could not be read, or holds no code object: 3.11 drops
 * the activation and goes on with the next _PyCFrame (a stale frame pointer, read in the few
 * instructions where an activation's _PyCFrame is linked before its frame is set, spoils only
 * its own frames). 3.12+ finds activations along the frames: the chain ends.
 */
static __always_inline long py_drop(struct pywalk_ctx *c, const struct stk_pylayout *l,
				    __u32 stop)
{
	if (l->entry_kind != STK_PYENTRY_FLAG)
		return py_end(c, stop);
	py_note(c, stop);
	c->out->n = c->w->first;
	c->w->frame = 0;
	return 0;
}

/* 3.11: the next activation from its _PyCFrame: its mark, its innermost frame, its caller's. */
static __always_inline long py_next_cframe(struct pywalk_ctx *c, const struct stk_pylayout *l)
{
	struct pywalk *p = c->w;

	if (!p->cframe)
		return 1;
	/* a _PyCFrame is 24 bytes on the C stack, or in the thread state: 32 can be read */
	if (bpf_probe_read_user(p->buf, 32, (void *)p->cframe))
		return py_end(c, STK_PYSTOP_READ_FAULT);
	p->at = p->cframe;
	p->frame = py_u64(p->buf, STK_PY_READ, l->cur_frame);
	p->cframe = py_u64(p->buf, STK_PY_READ, l->cf_previous);
	p->first = c->out->n;
	return 0;
}

/*
 * The frame at user address at (STK_PY_READ bytes) into p->buf: from the frames window, or a new
 * window ending at the frame's end; the frame alone where that cannot be read. 0 or a negative
 * errno.
 */
static __always_inline long py_read_frame(struct pywalk *p, __u64 at)
{
	__u64 off = at - p->fwin_base, lo, page = at & ~(__u64)(PY_PAGE - 1);
	__u32 len;

	if (off > p->fwin_len || p->fwin_len - off < STK_PY_READ) {
		lo = at >= PY_FWIN ? at + STK_PY_READ - PY_FWIN : at;
		if (lo < page)
			lo = page;
		len = at + STK_PY_READ - lo;
		p->fwin_len = 0;
		if (len > PY_FWIN || len < STK_PY_READ ||
		    bpf_probe_read_user(p->fwin, len, (void *)lo))
			return bpf_probe_read_user(p->buf, STK_PY_READ, (void *)at);
		p->fwin_base = lo;
		p->fwin_len = len;
		off = at - lo;
	}
	if (off > PY_FWIN - STK_PY_READ)
		return -EFAULT;		/* never: for the verifier */
	__builtin_memcpy(p->buf, p->fwin + off, STK_PY_READ);
	return 0;
}

/*
 * Read one frame of the chain into out, or start the next activation (bpf_loop()). 3.11: the
 * frames of each _PyCFrame's activation, from its current frame to the one marked is_entry.
 * 3.12+: the frames along `previous`, each shim frame ending the activation before it.
 */
static long py_frame_step(__u32 i, void *ctx)
{
	struct pywalk_ctx *c = ctx;
	struct pywalk *p = c->w;
	const struct stk_pylayout *l = &c->py->l;
	bool flag = l->entry_kind == STK_PYENTRY_FLAG;
	struct stk_pyframe *f;
	__u32 n = c->out->n;
	__u64 code, instr, at;
	__u8 entry;

	if (!p->frame)
		return flag ? py_next_cframe(c, l) : 1;
	at = p->frame;
	if (py_read_frame(p, at))
		return py_drop(c, l, STK_PYSTOP_READ_FAULT);
	p->frame = py_u64(p->buf, STK_PY_READ, l->fr_previous);
	entry = py_u8(p->buf, l->fr_entry);
	/* the shim on the C stack of the activation that ran the frames before it */
	if (!flag && entry == l->entry_value)
		return py_close(c, at);
	if (n >= STK_PY_FRAMES) {
		if (flag && n > p->first)
			py_close(c, p->at);	/* the frames read of this one */
		return py_end(c, STK_PYSTOP_TRUNCATED);
	}
	code = py_u64(p->buf, STK_PY_READ, l->fr_code);
	instr = py_u64(p->buf, STK_PY_READ, l->fr_instr);
	if (bpf_probe_read_user(p->code, sizeof(p->code), (void *)code) ||
	    py_u64(p->code, STK_PY_READ, 8) != c->py->code_type)	/* ob_type */
		return py_drop(c, l, STK_PYSTOP_BAD_FRAME);
	f = &c->out->f[py_index(n, STK_PY_FRAMES)];
	f->code = code;
	/* before the first instruction (a frame not started yet) the pointer is one unit short */
	instr -= code + l->co_code;
	f->lasti = (__s64)instr >= 0 && instr < (1ull << 31) ? instr / 2 : STK_PY_LASTI_NONE;
	f->check = py_digest(p->code, STK_PY_READ, l);
	c->out->n = n + 1;
	/* 3.11: the activation's first frame is its last here */
	if (flag && (entry || !p->frame)) {
		p->frame = 0;
		return py_close(c, p->at);
	}
	return 0;
}

/*
 * The Python frames of the current thread of process proc into out, innermost first, in
 * activations, with why they end. Global: checked once on its own (see walk_user()); its
 * pointers may be NULL there.
 */
__noinline __u32 py_chain(struct stk_pychain *out, const struct stk_pyproc *py, struct pywalk *p)
{
	struct pywalk_ctx c = { .w = p, .out = out, .py = py };
	const struct stk_pylayout *l;
	__u64 ts, at;

	if (!out || !py || !p)
		return 0;
	out->magic = STK_PYCHAIN_MAGIC;
	out->tid = (__u32)bpf_get_current_pid_tgid();
	out->n = 0;
	out->nact = 0;
	out->stop = STK_PYSTOP_NONE;
	if (!cfg_python || !py->runtime)
		return 0;
	p->py = *py;	/* for the code objects' copies (py_note_chain()) */
	l = &py->l;
	p->tid = out->tid;
	p->fwin_len = 0;
	ts = py_thread_state(&c);
	if (!ts) {
		out->stop = STK_PYSTOP_NO_THREAD;
		return 0;
	}
	at = l->ts_cframe == 0xffff ? ts : py_read_ptr(ts + l->ts_cframe);
	p->first = 0;
	if (l->entry_kind == STK_PYENTRY_FLAG) {
		p->cframe = at;
		p->frame = 0;
	} else {
		p->cframe = 0;
		p->frame = at ? py_read_ptr(at + l->cur_frame) : 0;
	}
	out->stop = STK_PYSTOP_COMPLETE;
	bpf_loop(STK_PY_FRAMES + STK_PY_ACTS + 2, py_frame_step, &c, 0);
	/* the steps ran out before the chain did (dropped activations spent some): it is cut */
	if (p->frame || p->cframe)
		py_note(&c, STK_PYSTOP_TRUNCATED);
	return out->n;
}

/* Bytes of a code object's head read for its names: every offset the layouts give + 8 fits. */
#define PY_CODE_HEAD 160


/*
 * size bytes (at most cap) of the object at addr into dst, of which have are there already
 * (its head): the bytes copied. The process chose size: a cut copy is stkrec's to finish.
 */
static __always_inline __u16 py_copy_rest(__u8 *dst, __u64 addr, __u64 size, __u32 cap,
					  __u32 have)
{
	size = size < cap ? size : cap;
	/*
	 * The bound in the program, as in py_index(): the verifier checks the read's size by it.
	 * Two compares, kept apart: clang made one range compare of them (size - have - 1 below
	 * cap - have), whose bound 6.1's verifier does not carry to size.
	 */
	asm volatile("" : "+r"(size));
	if (size > cap)
		return have;
	asm volatile("" : "+r"(size));
	if (size <= have)
		return have;
	if (bpf_probe_read_user(dst, size, (void *)addr))
		return have;
	return size;
}

/*
 * A str object (a name, a file name) at addr into dst: its head (length at 16, state at 32),
 * then its characters, 1, 2 or 4 bytes each (compact strings: code objects' names are), as
 * many as STK_PYCODE_STR holds. stkrec checks what it decodes (record/python/ read_str()).
 */
static __always_inline __u16 py_copy_str(__u8 *dst, __u64 addr, const struct stk_pylayout *l)
{
	__u64 len;
	__u32 state;

	if (!addr || bpf_probe_read_user(dst, 40, (void *)addr))
		return 0;
	__builtin_memcpy(&len, dst + 16, 8);
	__builtin_memcpy(&state, dst + 32, 4);
	if (len > STK_PYCODE_STR)
		len = STK_PYCODE_STR;
	return py_copy_rest(dst, addr, state & (1u << 6) ? l->str_ascii + len :
				   l->str_compact + len * ((state >> 2) & 7), STK_PYCODE_STR, 40);
}

/* The line table, a bytes object at addr, into dst: its head (ob_size at 16), its bytes at 32. */
static __always_inline __u16 py_copy_bytes(__u8 *dst, __u64 addr)
{
	__u64 len;

	if (!addr || bpf_probe_read_user(dst, 32, (void *)addr))
		return 0;
	__builtin_memcpy(&len, dst + 16, 8);
	if (len > STK_PYCODE_LINES)
		len = STK_PYCODE_LINES;
	return py_copy_rest(dst, addr, 32 + len, STK_PYCODE_LINES, 32);
}

/*
 * Tell stkrec of code object (code, check) of process tgid, whose interpreter is py, with what
 * names it (struct stk_pycode), copied now, in the task that runs it: a short-lived process is
 * often gone, or has freed the object, by the time stkrec's thread could read it (20 runs of a
 * 20 ms script: all 21 code objects unnamed). Only when the object at code still has the
 * frame's digest and code type: else nothing is copied and stkrec's own read says why. Seven
 * reads at a code object's first sight, never per event. Global: checked once, whichever walk
 * calls it. False: the ring was full.
 */
__noinline bool py_send_code(__u32 tgid, __u64 code, __u32 check, const struct stk_pyproc *py)
{
	struct stk_pycode *r;
	const struct stk_pylayout *l;
	__u8 *head;

	if (!py)
		return false;
	r = bpf_ringbuf_reserve(&py_notify, sizeof(*r), 0);
	if (!r) {
		stat_add(STK_STAT_NOTIFY_DROPPED);
		return false;
	}
	r->n.tgid = tgid;
	r->n.kind = STK_NOTIFY_PYCODE;
	r->n.addr = code;
	r->n.ts_ns = bpf_ktime_get_ns();
	r->n.check = check;
	r->n.pad = 0;
	r->version = 0;
	r->name_len = r->file_len = r->lines_len = 0;
	r->firstline = 0;
	r->pad = 0;
	r->name_at = r->file_at = r->lines_at = 0;
	l = &py->l;
	/* the code object's head goes where its line table will: the BPF stack has no room */
	head = r->lines;
	if (!bpf_probe_read_user(head, PY_CODE_HEAD, (void *)code) &&
	    py_u64(head, PY_CODE_HEAD, 8) == py->code_type &&	/* ob_type */
	    py_digest(head, PY_CODE_HEAD, l) == (check & STK_PY_CHECK_MASK)) {
		r->version = l->version;
		r->firstline = py_u32(head, PY_CODE_HEAD, l->co_firstlineno);
		r->name_at = py_u64(head, PY_CODE_HEAD, l->co_qualname);
		r->file_at = py_u64(head, PY_CODE_HEAD, l->co_filename);
		r->lines_at = py_u64(head, PY_CODE_HEAD, l->co_linetable);
		r->name_len = py_copy_str(r->name, r->name_at, l);
		r->file_len = py_copy_str(r->file, r->file_at, l);
		r->lines_len = py_copy_bytes(r->lines, r->lines_at);
	}
	bpf_ringbuf_submit(r, 0);
	return true;
}

/*
 * Tell stkrec of a code object of process tgid this CPU has not seen lately (py_seen: its hints,
 * [PY_SEEN_HINTS]), unless BPF told it already (py_send_code()). The per-CPU hints spare most
 * events the LRU lookup; a code object the LRU forgot is told again, and stkrec reads it once
 * anyway.
 */
static __always_inline void py_note_code(__u32 tgid, __u64 *py_seen, const struct stk_pyframe *f,
					 const struct stk_pyproc *py)
{
	struct py_code_key key = { .tgid = tgid, .check = f->check & STK_PY_CHECK_MASK,
				   .code = f->code };
	__u64 h = hash_frame(hash_frame(key.code, key.check), key.tgid) | 1;
	__u32 slot = (h >> 7) & (PY_SEEN_HINTS - 1);
	__u8 one = 1;

	if (py_seen[slot] == h)
		return;
	py_seen[slot] = h;
	if (bpf_map_lookup_elem(&py_codes, &key) ||
	    bpf_map_update_elem(&py_codes, &key, &one, BPF_NOEXIST))
		return;
	if (!py_send_code(key.tgid, key.code, key.check, py)) {
		/* told later, when there is room: by this CPU too */
		bpf_map_delete_elem(&py_codes, &key);
		py_seen[slot] = 0;
	}
}

struct py_note_ctx {
	const struct stk_pychain *chain;
	const struct stk_pyproc *py;
	__u64 *py_seen;
	__u32 tgid;
};

static long py_note_step(__u32 i, void *ctx)
{
	struct py_note_ctx *c = ctx;

	if (i >= c->chain->n)
		return 1;
	py_note_code(c->tgid, c->py_seen, &c->chain->f[py_index(i, STK_PY_FRAMES)], c->py);
	return 0;
}

/*
 * Tell stkrec of every code object of a chain whose event it walks itself (a deferred event),
 * read with the interpreter pw->py: that walk may come late, after the process freed them.
 */
static __always_inline void py_note_chain(__u32 tgid, const struct stk_pychain *chain,
					  __u64 *py_seen, const struct pywalk *pw)
{
	struct py_note_ctx c = { .chain = chain, .py = &pw->py, .py_seen = py_seen, .tgid = tgid };

	bpf_loop(STK_PY_FRAMES, py_note_step, &c, 0);
}

/*
 * The interpreter of the current process from its executable's template (map py_exes) into
 * p->exe, for a process stkrec has not read yet: its first events, which a process that lives
 * 20 ms has all of before stkrec's read (100 to 250 ms). The executable is mm->exe_file, by
 * inode; its load bias is mm->start_code minus the template's text address (0 for an EXEC
 * file). False: none. Global: inline, it grew walk_user()'s frame by 64 bytes, and 6.1, which
 * counts the frames of the deepest calls together, refused on_kprobe ("combined stack size of 6
 * calls is 544"); here its frame is below walk_user() beside walk_step()'s, which is larger.
 */
__noinline bool py_exe_proc(struct pywalk *p)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct stk_pyexe_key key = {};	/* on the stack: 6.1 takes no other memory as a key */
	const struct stk_pyexe *e;
	struct inode *ino;
	__u64 bias;

	if (!p)
		return false;
	ino = BPF_CORE_READ(task, mm, exe_file, f_inode);
	if (!ino)
		return false;
	key.ino = BPF_CORE_READ(ino, i_ino);
	key.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	e = bpf_map_lookup_elem(&py_exes, &key);
	if (!e)
		return false;
	bias = BPF_CORE_READ(task, mm, start_code) - e->text;
	p->exe = e->py;
	p->exe.runtime += bias;
	p->exe.code_type += bias;
	p->exe.eval_start += bias;
	p->exe.eval_end += bias;
	return true;
}

/* Is pc (a return address unless exact) in the interpreter's frame-evaluation function? */
static __always_inline bool py_in_eval(const struct stk_pyproc *py, __u64 pc, bool exact)
{
	__u64 at = exact ? pc : pc - 1;

	return py->eval_start && at >= py->eval_start && at < py->eval_end;
}

#endif /* STK_PYTHON_BPF_H */
