/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unwind.bpf.h: the user-stack walker of --unwind cfi|auto (docs/bpf.md 7), included by
 * stkrec.bpf.c. It starts from the user registers of the event and steps outwards, one frame
 * per bpf_loop() iteration: find the mapping the pc is in (the process's table in
 * unwind_procs), the row of that mapping's unwind table that covers the pc (unwind_chunks), and
 * apply the row's rule to get the caller's pc, sp, rbp and rbx. Where a mapping has no table
 * (JIT, an object without .eh_frame) or a pc has no row, --unwind auto takes a frame-pointer step
 * instead. Every stack ends with a reason (enum stk_stop); a frame that cannot be checked is
 * left out, never emitted as garbage.
 */
#ifndef STK_UNWIND_BPF_H
#define STK_UNWIND_BPF_H

const volatile __u32 cfg_unwind = STK_UNWIND_FP;	/* enum stk_unwind */

/* The registers a user-stack walk starts from (stkrec.bpf.c user_regs()). */
struct uregs {
	__u64 pc, sp, bp;
	__u64 di;	/* a vfork leaf's return address (STK_CFA_RA_RDI) */
	__u64 bx;	/* for a CFA from rbx (STK_CFA_RBX) */
	__u64 cx;	/* an exception return's (STK_CFA_RCX, STK_CFA_RA_RCX) */
	__u64 in_syscall;	/* 1: the task is in a system call, pc follows its instruction */
};

/*
 * The rows of every table, in chunks: arrays stkrec creates as the tables need them and copies
 * tables into through mmap (record/unwind/unwind.c), each table inside one chunk. Creating the
 * whole --unwind-memory at load cost 20 ms of kernel time and its size in memory for the 0.5 MiB a
 * system-wide start uses. BPF_F_INNER_MAP lets the chunks differ in size (a table larger than
 * the usual chunk gets one of its own); it also means a lookup is a helper call, not inlined.
 */
struct urow_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);		/* the template only: chunks have their own sizes */
	/* sizes, not types: BTF of a map reached only through __array() gets the struct as a
	 * forward declaration, whose size libbpf cannot know */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct stk_urow));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);		/* sized from --unwind-memory before load */
	__type(key, __u32);
	__array(values, struct urow_chunk);
} unwind_chunks SEC(".maps");

/*
 * tgid -> executable mappings. Not preallocated: an update from user space then swaps in a new
 * element, and a program holding the old one keeps reading a whole, consistent value.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stk_uproc);
} unwind_procs SEC(".maps");

/*
 * tgid -> its image (struct stk_image): the time of its last exec, or of its fork when it is a
 * new process since (the image stamp of struct stk_key, kept with --unwind fp too), and the
 * image's mm. A re-read asked for by an event of the old image may read the new one, where the
 * address it asks about means nothing: it must not settle the process (record/unwind/unwind.c
 * rec_unwind__proc()). Not an LRU: events read it rarely (seen_last keeps their stamp), so on
 * a host that forks a lot the LRU evicted the stamp of a process exec'ing 500 times a second,
 * its events then had none (0) or, read while the element was reused, another process's, and
 * were named with another image (tests/e2e/execstorm.sh). on_exit() deletes it: a process that
 * exits is stamped again only if its pid is reused, by its fork.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stk_image);
} exec_ns SEC(".maps");

/* Offsets in the ucontext a signal frame leaves at rsp (struct sigcontext, x86-64 ABI). */
#define SIGFRAME_RBP 120
#define SIGFRAME_RBX 128
#define SIGFRAME_RSP 160
#define SIGFRAME_RIP 168

/*
 * An index into out->ips the verifier can see is in range. clang drops a mask it can prove
 * redundant (and folds our bounds checks into one compare of a copy, which 6.1's verifier does
 * not trace back to the index): the empty asm hides the value from clang, so the mask stays.
 */
static __always_inline __u32 frame_index(__u32 n)
{
	asm volatile("" : "+r"(n));
	return n & (STK_MAX_DEPTH - 1);
}

/*
 * The walk copies the user stack a page at a time, from the event's sp to the end of its page
 * and then each next page a frame needs, and reads the frames from the copy: a
 * bpf_probe_read_user() costs about the same for 8 bytes as for a page (the call, the
 * fault-safe copy's setup, the speculation barrier), and with a 1 KiB copy python3's walks
 * still made 3.9 reads more each. A copy ends at its page's end: a page that is not there (past a
 * stack's top) fails its own copy only.
 */
#define UWIN_PAGE 4096		/* x86-64's */
#define UWIN_WORDS (UWIN_PAGE / 8)

/*
 * The walk's state. It lives in the per-CPU scratch slot, not on the BPF stack: the verifier
 * does not track what a map value holds, so every bpf_loop() iteration of walk_step() starts in
 * the same verifier state (the frame count on the stack would differ each time, and the
 * verifier would unroll all of them).
 */
struct uwalk {
	__u64 pc, sp, bp;
	__u64 di;		/* the leaf's rdi (STK_CFA_RA_RDI) */
	__u64 cx;		/* the leaf's rcx (STK_CFA_RCX, STK_CFA_RA_RCX) */
	/*
	 * rbx of the frame at pc: bx, or when bx_at is not 0 the word there, where a callee frame
	 * saved it. Read only when a STK_CFA_RBX row needs it: few walks do, every frame that
	 * pushes rbx would pay a read. bx_lost: a frame saved it where its row cannot say.
	 */
	__u64 bx, bx_at;
	bool bx_lost;
	__u64 hash;
	__u64 hash_before;	/* before the last frame: signal_step() rewrites that frame */
	struct stk_umap m;	/* the mapping the last pc was in (a copy) */
	__u32 n;		/* words in out (a Python frame takes two) */
	__u32 nat;		/* native frames in out */
	__u32 py_act;		/* the next activation of the Python chain to match (py_match()) */
	__u32 py_i, py_end;	/* the frames of the chain being spliced (py_emit()) */
	__u64 py_sp;		/* the interpreter activation stored last: its sp */
	bool py_pending;	/* its Python frames are yet to be matched */
	bool py_emit;		/* splicing an activation's Python frames */
	bool py_met;		/* an interpreter activation was met */
	__u32 stop;		/* enum stk_stop, set when the walk ends */
	__u32 tgid;
	bool waits;		/* stopped only because stkrec has not read a mapping yet */
	bool exact;		/* pc is the interrupted instruction, not a return address */
	bool syscall;		/* the leaf's pc follows a syscall instruction (walk_step()) */
	bool entry;		/* the leaf is a function's first instruction (uprobe) */
	bool guessed;		/* frame 1 is a guess a known mapping must confirm (leaf_guess()) */
	__u64 win_base;		/* the user address of win[0] */
	__u32 win_len;		/* bytes in win, to the end of win_base's page; 0: none */
	__u64 win[UWIN_WORDS];	/* a page of the user stack (read_words()); not zeroed */
};

/*
 * Rows found by earlier walks on this CPU, each with the pcs it covers: a cache of find_urow()
 * by (table, pc / 16), checked before use. Most events repeat the frames of earlier ones (a
 * probe in a loop, a sampled program's outer frames). A hit reads its entry alone; a row read
 * from its chunk is a helper call (the chunks are inner maps of many sizes), and a binary
 * search of libc's table reads 15. stkrec only adds tables (record/unwind/unwind.c), so a
 * table's first row and chunk name it for the whole run: an entry is never stale. One cache
 * per nesting depth: a program nested on the CPU would tear the entries of the one it
 * interrupted.
 */
#define UROW_HINTS 1024

struct urow_hint {
	__u32 table;		/* the table's first row in its chunk + 1; 0: empty */
	__u32 chunk;
	__u32 lo, end;		/* the row covers [lo, end); end 0: up to 2^32 (the last row) */
	struct stk_urow row;
};

struct urow_cache {
	struct urow_hint e[UROW_HINTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STK_NEST_MAX);
	__type(key, __u32);
	__type(value, struct urow_cache);
} urow_caches SEC(".maps");

/* What bpf_loop() hands each step: pointers only (they cannot live in a map value). */
struct uwalk_ctx {
	struct uwalk *w;
	struct stk_stack *out;
	struct stk_uproc *proc;
	struct urow_cache *cache;	/* the CPU's, at the walk's nesting depth */
	const struct stk_pychain *chain;	/* the thread's Python frames, NULL: none */
	__u64 *py_seen;		/* [PY_SEEN_HINTS]: code objects notified (py_note_code()) */
};

/*
 * a < b as 0 or 1 without a branch: the borrow out of a - b (Hacker's Delight 2-13). Not the
 * sign of a - b: the vsyscall page's start is above 2^63, and a pc below it then read as above.
 */
static __always_inline __u64 below(__u64 a, __u64 b)
{
	return ((~a & b) | ((~a | b) & (a - b))) >> 63;
}

/*
 * Find the mapping w->pc is in and copy it to w->m. Consecutive frames are mostly in the same
 * object, so the last mapping found (the copy) is tried first; else a binary search of the
 * mappings (stkrec writes them sorted by start, not overlapping). The search has no branch: a
 * bpf_loop() scan called back once per mapping passed, 10 a python3 walk, and where the
 * SRSO mitigation is on (AMD Zen) each call's return is dear; a branch per halving would
 * multiply the verifier's paths. UMAP_STEPS halvings take STK_MAX_UMAPS to one.
 */
#define UMAP_STEPS 9
_Static_assert(1 << UMAP_STEPS == STK_MAX_UMAPS, "a search of every mapping");

static __always_inline bool find_umap(struct uwalk_ctx *c)
{
	const struct stk_uproc *p = c->proc;
	struct uwalk *w = c->w;
	const struct stk_umap *m;
	__u32 base = 0, len = p->n, half, ge;
	__u64 pc = w->pc;

	if (pc >= w->m.start && pc < w->m.end)
		return true;
	if (!len)
		return false;
	if (len > STK_MAX_UMAPS)
		len = STK_MAX_UMAPS;
	for (int i = 0; i < UMAP_STEPS; i++) {
		half = len / 2;
		m = &p->maps[(base + half) & (STK_MAX_UMAPS - 1)];
		ge = below(pc, m->start) ^ 1;
		asm volatile("" : "+r"(ge));	/* clang would make a branch of the select */
		base += half & -ge;
		len -= half;
	}
	m = &p->maps[base & (STK_MAX_UMAPS - 1)];
	if (pc < m->start || pc >= m->end)
		return false;
	w->m = *m;
	return true;
}

/*
 * The binary search over rows stops after these many halvings: the verifier needs a bound. 2^25
 * rows are 256 MiB of one table: more than any object has.
 */
#define UROW_STEPS 25

/* A binary search over one table's rows: the last row whose pc is <= rel is at lo. */
struct usearch {
	void *chunk;		/* the array of unwind_chunks holding the table */
	__u32 lo, hi;		/* the row is in [lo, hi) */
	__u32 first;		/* the table's first row in the chunk */
	__u32 rel;
};

/*
 * One halving (bpf_loop(): a callback is verified once, an inline loop's paths multiply, and
 * inline, its state took the stack bytes that made 6.1's verifier refuse on_sample's calls,
 * their stacks together over 512 bytes). The row cache spares most searches.
 */
static long urow_step(__u32 i, void *ctx)
{
	struct usearch *s = ctx;
	const struct stk_urow *row;
	__u32 mid, idx;

	if (s->hi - s->lo <= 1)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	idx = s->first + mid;
	row = bpf_map_lookup_elem(s->chunk, &idx);
	if (!row)
		return 1;
	if (row->pc <= s->rel)
		s->lo = mid;
	else
		s->hi = mid;
	return 0;
}

/*
 * Find the last row of m's table whose pc is <= rel and fill h with it and the pcs it covers:
 * true, or false when rel is below the first row. The chunk's map pointer rides to the
 * callback in the search state on the stack, where the verifier keeps its type.
 */
static __always_inline bool search_urow(const struct stk_umap *m, __u32 rel, struct urow_hint *h)
{
	struct usearch s = { .lo = 0, .hi = m->nrows, .first = m->first, .rel = rel };
	const struct stk_urow *row;
	__u32 chunk = m->chunk, idx;

	/* stkrec fills a chunk before it writes a mapping naming it: none means no rows */
	s.chunk = bpf_map_lookup_elem(&unwind_chunks, &chunk);
	if (!s.chunk)
		return false;
	bpf_loop(UROW_STEPS, urow_step, &s, 0);
	h->end = 0;
	if (s.lo + 1 < m->nrows) {
		idx = s.first + s.lo + 1;
		row = bpf_map_lookup_elem(s.chunk, &idx);
		if (!row)
			return false;
		h->end = row->pc;
	}
	idx = s.first + s.lo;
	row = bpf_map_lookup_elem(s.chunk, &idx);
	if (!row || row->pc > rel)
		return false;
	h->lo = row->pc;
	h->row = *row;
	return true;
}

/*
 * The last row of m's table whose pc is <= rel, or NULL (below the first row): from the CPU's
 * cache when it holds it, else searched into the cache. cache: never NULL (a per-CPU array of
 * STK_NEST_MAX), but the verifier must see it checked.
 */
static __always_inline const struct stk_urow *find_urow(struct urow_cache *cache,
							const struct stk_umap *m, __u64 rel)
{
	struct urow_hint *h;

	if ((rel >> 32) || !cache)
		return NULL;
	h = &cache->e[(((__u32)rel >> 4) ^ (m->first * 0x9e3779b1u)) & (UROW_HINTS - 1)];
	if (h->table == m->first + 1 && h->chunk == m->chunk &&
	    (__u32)rel - h->lo < h->end - h->lo)
		return &h->row;
	h->table = 0;		/* emptied first: a failed search leaves no half of an entry */
	if (!search_urow(m, rel, h))
		return NULL;
	h->chunk = m->chunk;
	h->table = m->first + 1;
	return &h->row;
}

/* The word at byte off of the copy (read_words() checked that it holds it). */
static __always_inline __u64 win_word(const struct uwalk *w, __u64 off)
{
	__u32 i = off / 8;

	asm volatile("" : "+r"(i));	/* keep the mask: see frame_index() */
	return w->win[i & (UWIN_WORDS - 1)];
}

/* Copy the user stack from addr to the end of its page into w's window: 0 or a negative errno. */
static __always_inline long fill_window(struct uwalk *w, __u64 addr)
{
	__u32 len = UWIN_PAGE - (addr & (UWIN_PAGE - 1));	/* 1 to UWIN_PAGE */
	long err = bpf_probe_read_user(w->win, len, (void *)addr);

	w->win_base = addr;
	w->win_len = err ? 0 : len;
	return err;
}

/* Does w's window hold the word at addr? */
static __always_inline bool in_window(const struct uwalk *w, __u64 addr)
{
	__u64 off = addr - w->win_base;	/* huge when addr is below: out of the copy too */

	return !(off & 7) && off < w->win_len && off + 8 <= w->win_len;
}

/*
 * The word of the user stack at addr into dst: from the walk's copy, which moves to addr's page
 * when addr is above it (a walk goes up the stack), else read. 0 or a negative errno, as
 * bpf_probe_read_user().
 */
static __always_inline long read_word(struct uwalk *w, __u64 *dst, __u64 addr)
{
	if (!in_window(w, addr) && !(addr & 7) && addr >= w->win_base + w->win_len)
		fill_window(w, addr);
	if (!in_window(w, addr))
		return bpf_probe_read_user(dst, 8, (void *)addr);
	*dst = win_word(w, addr - w->win_base);
	return 0;
}

/* Words (1 or 2, a constant) at addr into dst, as read_word(): a pair may straddle two pages. */
static __always_inline long read_words(struct uwalk *w, __u64 *dst, __u32 words, __u64 addr)
{
	long err = read_word(w, dst, addr);

	if (!err && words > 1)
		err = read_word(w, dst + 1, addr + 8);
	return err;
}

static __always_inline long walk_end(struct uwalk *w, __u32 stop)
{
	w->stop = stop;
	return 1;	/* bpf_loop(): stop iterating */
}

/*
 * pc is in no mapping stkrec wrote for this process: a library mapped since, unless a re-read
 * already found nothing new (settled). Ask stkrec once to read the process again; until it
 * has, the walk waits (the event is deferred: bpf/stkrec.bpf.c defer_event()).
 */
static __always_inline void ask_maps(struct uwalk_ctx *c)
{
	if (c->proc->settled)
		return;
	c->w->waits = true;
	if (c->proc->asked)
		return;
	c->proc->asked = 1;	/* until stkrec writes the re-read mappings */
	send_notify(c->w->tgid, STK_NOTIFY_MAPS, c->w->pc);
}

/* The walk is at the event's own pc: the leaf, as the registers gave it. */
static __always_inline bool at_leaf(const struct uwalk *w)
{
	return w->nat == 1 && w->exact;
}

static __always_inline long step_to(struct uwalk *w, __u64 pc, __u64 sp, __u64 bp)
{
	if (!pc)
		return walk_end(w, STK_STOP_COMPLETE);	/* a zero return address ends the chain */
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->exact = false;
	w->syscall = false;
	return 0;
}

/*
 * The sampled leaf has no CFI and its rbp is no frame pointer: most often it is a function that
 * has pushed nothing yet, sampled while the kernel faults in the page of its first instruction
 * (a library's _init, GMP's assembly routines). Its return address is then at rsp: take it as a
 * guess, which walk_step() drops unless it is in a known mapping.
 */
static __always_inline long leaf_guess(struct uwalk *w)
{
	__u64 ra;

	if (!at_leaf(w))
		return walk_end(w, STK_STOP_BAD_FRAME);
	if (read_words(w, &ra, 1, w->sp))
		return walk_end(w, STK_STOP_READ_FAULT);
	w->guessed = true;
	return step_to(w, ra, w->sp + 8, w->bp);
}

/* A frame-pointer step: the frame record {caller's rbp, return address} is at rbp. */
static __always_inline long fp_step(struct uwalk *w, __u32 stop_if_no_fp)
{
	__u64 rec[2];

	if (cfg_unwind != STK_UNWIND_AUTO)
		return walk_end(w, stop_if_no_fp);
	/*
	 * rbp 0 marks the outermost frame (the ABI; _start clears it, as the kernel leaves it),
	 * but in a leaf without CFI it is as likely a register code without frame pointers
	 * zeroed (GMP's __gmpn_invert_limb in cc1): the leaf is guessed, not taken as the end
	 */
	if (!w->bp && !at_leaf(w))
		return walk_end(w, STK_STOP_COMPLETE);
	/* rbp must point up the stack (a leaf's may equal rsp), aligned: else it is no fp */
	if (!w->bp || w->bp < w->sp || (w->bp & 7))
		return leaf_guess(w);
	/*
	 * Nor is it where nothing can be read, in a leaf: there rbp may hold any number (GMP's
	 * __gmpn_divrem_1 keeps a limb in it), and one in eight is aligned and above rsp. Such
	 * leaves of cc1 ended as 'stack memory not readable'.
	 */
	if (read_words(w, rec, 2, w->bp))
		return at_leaf(w) ? leaf_guess(w) : walk_end(w, STK_STOP_READ_FAULT);
	w->bx_lost = true;	/* code without CFI may have saved rbx anywhere */
	return step_to(w, rec[1], w->bp + 16, rec[0]);
}

/* The caller's rbx by the row's rule (enum stk_rbx_rule); slot is rbp's, CFA + 8 * rbp_off. */
static __always_inline void restore_rbx(struct uwalk *w, __u32 rule, __u64 slot)
{
	if (rule == STK_RBX_BELOW_RBP)
		slot -= 8;
	/* a slot below the frame's rsp: the epilogue popped it, rbx holds the caller's already */
	if (rule == STK_RBX_SAME || (rule != STK_RBX_LOST && slot < w->sp))
		return;
	w->bx_lost = rule == STK_RBX_LOST;
	w->bx_at = slot;
}

/* The caller's frame from the CFA: its return address at CFA - 8, rbp and rbx as the row says. */
static __always_inline long cfa_step(struct uwalk *w, const struct stk_urow *row, __u64 cfa)
{
	__u32 rule = STK_UROW_RBP(row->kind);
	__u64 two[2], ra, bp = w->bp;
	__s64 off = (__s64)row->rbp_off * 8;

	if (cfa <= w->sp)
		return walk_end(w, STK_STOP_BAD_FRAME);	/* the caller's frame is above ours */
	restore_rbx(w, STK_UROW_RBX(row->kind), cfa + off);
	/*
	 * rbp's slot below the frame's rsp: the epilogue popped it, rbp holds the caller's already.
	 * Not read from the red zone: a deferred event's copy starts at rsp
	 * (record/unwind/unwind.c).
	 */
	if (rule == STK_RBP_AT_CFA && cfa + off < w->sp)
		rule = STK_RBP_SAME;
	if (rule == STK_RBP_AT_CFA && off == -16) {
		/* push rbp first, the usual prologue: one read gets both words */
		if (read_words(w, two, 2, cfa - 16))
			return walk_end(w, STK_STOP_READ_FAULT);
		return step_to(w, two[1], cfa, two[0]);
	}
	if (read_words(w, &ra, 1, cfa - 8))
		return walk_end(w, STK_STOP_READ_FAULT);
	if (rule == STK_RBP_AT_CFA && read_words(w, &bp, 1, cfa + off))
		return walk_end(w, STK_STOP_READ_FAULT);
	if (rule == STK_RBP_AT_RBP && read_words(w, &bp, 1, w->bp + off))
		return walk_end(w, STK_STOP_READ_FAULT);
	return step_to(w, ra, cfa, bp);
}

/*
 * A signal frame: the handler returned into the trampoline, whose rsp points at the ucontext
 * the kernel saved. The next pc is the interrupted instruction itself, not a return address.
 * A stored non-leaf frame is read as a return address (the report names address - 1): the
 * trampoline's frame, its first byte, becomes first byte + 1, and so does the interrupted pc
 * (walk_step()), so both are named as what they are.
 */
static __always_inline long signal_step(struct uwalk_ctx *c)
{
	struct uwalk *w = c->w;
	__u64 regs[(SIGFRAME_RIP - SIGFRAME_RBP) / 8 + 1];

	/* the frame walk_step() just stored, unless exact: that one is stored as it is named */
	if (!w->exact) {
		c->out->ips[frame_index(w->n - 1)] = w->pc + 1;
		w->hash = hash_frame(w->hash_before, w->pc + 1);
	}
	if (bpf_probe_read_user(regs, sizeof(regs), (void *)(w->sp + SIGFRAME_RBP)))
		return walk_end(w, STK_STOP_READ_FAULT);
	if (step_to(w, regs[(SIGFRAME_RIP - SIGFRAME_RBP) / 8],
		    regs[(SIGFRAME_RSP - SIGFRAME_RBP) / 8], regs[0]))
		return 1;
	w->bx = regs[(SIGFRAME_RBX - SIGFRAME_RBP) / 8];
	w->bx_at = 0;
	w->bx_lost = false;
	w->exact = true;
	return 0;
}

/*
 * This frame's rbx into *bx: the event's, or the word where a callee frame saved it. 0, or a
 * negative errno: -ENOENT when a frame further in saved it where its row cannot say.
 */
static __always_inline long frame_rbx(struct uwalk *w, __u64 *bx)
{
	if (w->bx_lost)
		return -ENOENT;
	*bx = w->bx;
	return w->bx_at ? read_words(w, bx, 1, w->bx_at) : 0;
}

/*
 * The rules that find a CFA compute it in the switch and share one cfa_step(): it is inlined,
 * and a copy per rule made the verifier walk 3,800 more instructions in on_sample (6.18).
 */
static __always_inline long row_step(struct uwalk_ctx *c, const struct stk_urow *row)
{
	struct uwalk *w = c->w;
	__u64 cfa;
	long err;

	switch (STK_UROW_CFA(row->kind)) {
	case STK_CFA_END:
		return walk_end(w, STK_STOP_COMPLETE);
	case STK_CFA_RSP:
		cfa = w->sp + row->cfa_off;
		break;
	case STK_CFA_RSP8:
		cfa = w->sp + (__u64)row->cfa_off * 8;
		break;
	case STK_CFA_RBP:
		cfa = w->bp + row->cfa_off;
		break;
	case STK_CFA_PLT:
		/* the PLT's CFI expression: one more word pushed past the entry's 11th byte */
		cfa = w->sp + 8 + ((w->pc & 15) >= row->cfa_off ? 8 : 0);
		break;
	case STK_CFA_SIGNAL:
		return signal_step(c);
	case STK_CFA_RBP_DEREF:
		if (read_words(w, &cfa, 1, w->bp + (__s16)row->cfa_off))
			return walk_end(w, STK_STOP_READ_FAULT);
		break;
	case STK_CFA_RBX:
		err = frame_rbx(w, &cfa);
		if (err)
			return walk_end(w, err == -ENOENT ? STK_STOP_UNSUPPORTED : STK_STOP_READ_FAULT);
		cfa += row->cfa_off;
		break;
	case STK_CFA_GAP:
		return fp_step(w, STK_STOP_NO_CFI);
	case STK_CFA_RCX:
		/* the event's rcx is the leaf's, but in a system call, which clobbers it */
		if (!at_leaf(w) || w->syscall)
			return walk_end(w, STK_STOP_UNSUPPORTED);
		cfa = w->cx + row->cfa_off;
		break;
	case STK_CFA_RA_RDI:
	case STK_CFA_RA_RCX:
		/* the event's registers are the leaf's (walk_step() stored it, so n is 1) */
		if (!at_leaf(w) || (STK_UROW_CFA(row->kind) == STK_CFA_RA_RCX && w->syscall))
			return walk_end(w, STK_STOP_UNSUPPORTED);
		return step_to(w, STK_UROW_CFA(row->kind) == STK_CFA_RA_RDI ? w->di : w->cx,
			       w->sp + row->cfa_off, w->bp);
	default:
		return walk_end(w, STK_STOP_UNSUPPORTED);
	}
	return cfa_step(w, row, cfa);
}

/*
 * The interpreter activation stored last has its stack frame in [py_sp, sp): sp is its CFA
 * now, its caller's sp. The chain's activation whose mark (its _PyCFrame or shim frame) lies
 * there is its, and its Python frames follow it (py_emit()). A mark below is of an activation
 * the native walk did not meet: skipped, one per step. A mark above is a caller's: this
 * activation runs no Python frame (in its prologue before it links its frame, in its epilogue
 * after it unlinked it), where pairing activations by their rank named the caller's frames.
 * Returns true when it took the step.
 */
static __always_inline bool py_match(struct uwalk_ctx *c)
{
	struct uwalk *w = c->w;
	const struct stk_pyact *a;
	__u32 j = w->py_act;

	if (!c->chain || j >= c->chain->nact || j >= STK_PY_ACTS) {
		w->py_pending = false;
		return false;
	}
	a = &c->chain->act[py_index(j, STK_PY_ACTS)];
	if (a->at < w->py_sp) {
		w->py_act = j + 1;
		return true;
	}
	w->py_pending = false;
	if (a->at >= w->sp)
		return false;
	w->py_act = j + 1;
	w->py_i = j ? c->chain->act[py_index(j - 1, STK_PY_ACTS)].end : 0;
	w->py_end = a->end;
	w->py_emit = w->py_i < w->py_end;
	return false;
}

/*
 * One Python frame of the activation being spliced (walk_step()): two words, STK_PYWORD(check,
 * lasti) and the code object's address.
 */
static __always_inline long py_emit(struct uwalk_ctx *c)
{
	struct uwalk *w = c->w;
	const struct stk_pyframe *f;
	__u32 i = w->py_i, n = w->n;
	__u64 word;

	/* no chain: never, as py_emit is set only with one, but the verifier checks that path */
	if (!c->chain || i >= w->py_end || i >= STK_PY_FRAMES) {
		w->py_emit = false;
		return 0;
	}
	if (n + 2 > cfg_depth || n + 2 > STK_MAX_DEPTH)
		return walk_end(w, STK_STOP_TRUNCATED);
	f = &c->chain->f[py_index(i, STK_PY_FRAMES)];
	word = STK_PYWORD(f->check, f->lasti);
	c->out->ips[frame_index(n)] = word;
	c->out->ips[frame_index(n + 1)] = f->code;
	w->hash = hash_frame(hash_frame(w->hash, word), f->code);
	w->n = n + 2;
	w->py_i = i + 1;
	w->py_emit = i + 1 < w->py_end;
	py_note_code(c->w->tgid, c->py_seen, f, &c->proc->py);
	return 0;
}

/* One frame: emit the pc, then find the caller's. Called by bpf_loop(). */
static long walk_step(__u32 i, void *ctx)
{
	struct uwalk_ctx *c = ctx;
	struct uwalk *w = c->w;
	const struct stk_urow *row;
	__u32 n = w->n, nat = w->nat;
	bool known;
	__u64 ip;

	if (n >= cfg_depth || n >= STK_MAX_DEPTH)
		return walk_end(w, STK_STOP_TRUNCATED);
	if (w->py_pending && py_match(c))
		return 0;
	if (w->py_emit)
		return py_emit(c);
	known = find_umap(c);
	/* The leaf is real wherever it is; a caller outside every known mapping is unchecked. */
	if (!known && nat) {
		if (STK_MISS_ASKS(nat, w->guessed, w->pc))
			ask_maps(c);
		return walk_end(w, STK_MISS_STOP(nat, w->guessed, w->bp, w->pc));
	}
	/* an interrupted pc above the leaf (after a signal frame): stored + 1, see signal_step() */
	ip = w->exact && nat ? w->pc + 1 : w->pc;
	c->out->ips[frame_index(n)] = ip;
	w->n = n + 1;
	w->nat = nat + 1;
	w->hash_before = w->hash;
	w->hash = hash_frame(w->hash, ip);
	/*
	 * An activation of the interpreter: the Python frames it runs follow it, innermost first,
	 * once its step found its CFA (py_match()), so that read root first they run in it and
	 * call what is inside.
	 */
	if (c->chain && py_in_eval(&c->proc->py, w->pc, w->exact)) {
		w->py_pending = true;
		w->py_sp = w->sp;
		w->py_met = true;
	}
	if (!known) {
		ask_maps(c);
		return walk_end(w, STK_STOP_NO_MAPPING);
	}
	/* At a function's first instruction only the return address is pushed: CFA = rsp + 8. */
	if (!nat && w->entry) {
		struct stk_urow entry = {
			.kind = STK_UROW_KIND(STK_CFA_RSP, STK_RBP_SAME, STK_RBX_SAME)
		};

		return cfa_step(w, &entry, w->sp + 8);
	}
	if (w->m.flags & STK_UMAP_F_LIMIT)
		return walk_end(w, STK_STOP_TABLE_LIMIT);
	if (!w->m.nrows)
		return fp_step(w, STK_STOP_NO_CFI);
	/*
	 * A return address may be one past the last instruction of its function (a call to a
	 * noreturn function): look the caller's call instruction up instead. So may a leaf's pc in
	 * a system call: the signal trampoline ends with its rt_sigreturn syscall, and a stack taken
	 * in that call (its tracepoint; on 6.18 samples in restore_altstack() too) found no row,
	 * and ended as a bad frame.
	 */
	row = find_urow(c->cache, &w->m,
			(w->exact && !w->syscall ? w->pc : w->pc - 1) - w->m.bias);
	if (!row)
		return fp_step(w, STK_STOP_NO_CFI);
	return row_step(c, row);
}

/*
 * Walk the user stack from the registers r into out, with w as scratch state; level: the
 * program's nesting depth on the CPU (its row cache). Returns the stack's hash; out->nr and
 * out->stop are set.
 */
static __always_inline __u64 walk_user_stack(__u32 tgid, const struct uregs *r, bool entry,
					     struct uwalk *w, __u32 level, struct stk_stack *out,
					     struct stk_pychain *chain, struct pywalk *pw,
					     __u64 *py_seen)
{
	struct uwalk_ctx c = { .w = w, .out = out, .py_seen = py_seen };
	__u64 pc = r->pc;

	__builtin_memset(w, 0, offsetof(struct uwalk, win));
	w->pc = pc;
	w->sp = r->sp;
	w->bp = r->bp;
	w->di = r->di;
	w->cx = r->cx;
	w->bx = r->bx;
	w->hash = cfg_hash_seed;
	w->tgid = tgid;
	w->exact = true;
	w->syscall = r->in_syscall;
	w->entry = entry;
	chain->n = 0;
	chain->nact = 0;
	chain->stop = STK_PYSTOP_NONE;
	c.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	c.cache = bpf_map_lookup_elem(&urow_caches, &level);
	if (c.proc) {
		/* the Python frames first: the walk splices them where the interpreter runs */
		if (cfg_python && c.proc->py.runtime) {
			py_chain(chain, &c.proc->py, pw);
			c.chain = chain;
		}
		/* only a walk reads the copy: a process not read yet has its stack deferred */
		fill_window(w, r->sp);
		bpf_loop(STK_MAX_DEPTH + 1, walk_step, &c, 0);
	} else {
		/* Not read yet (its first event notifies user space): the leaf alone. */
		out->ips[0] = pc;
		w->n = 1;
		w->nat = 1;
		w->hash = hash_frame(w->hash, pc);
		w->stop = STK_STOP_PROC_UNKNOWN;
		w->waits = true;
		/* its Python frames from its executable's interpreter: the deferred walk splices them */
		if (cfg_python && py_exe_proc(pw))
			py_chain(chain, &pw->exe, pw);
	}
	out->nr = w->n;
	out->stop = w->stop;
	/* the chain's end matters where an activation was met: else it holds no frame of it */
	out->pystop = w->py_met ? chain->stop : STK_PYSTOP_NONE;
	return stack_hash_end(w->hash, w->n, w->stop | out->pystop << 16);
}

#endif /* STK_UNWIND_BPF_H */
