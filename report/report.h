/* SPDX-License-Identifier: MIT */
/*
 * report.h: stkreport's internal API: options, the loaded capture, the symbolized model that
 * every emitter prints, and the run entry points (also used by the fuzzer).
 *
 *   rep_capture__load*()   walk the chunks (load.c): meta, kallsyms, processes, intervals, losses
 *   rep_model__begin/add/finish()  symbolize and merge rows into displayed stacks, a capture
 *                          at a time (agg.c); --pprof, --sql and --clickhouse take them so too
 *   rep_emit__*()          print the model with the emitter the options select (emit_*.c)
 *   rep_summary()          the stderr summary (summary.c)
 */
#ifndef REP_REPORT_H
#define REP_REPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <stk/capture.h>

#include "stk/escape.h"
#include "stk/htab.h"
#include "stk/symbolize.h"

/* --by: what keeps merged captures' stacks apart (issue 3). */
enum rep_by {
	REP_BY_NONE = 0,
	REP_BY_HOST,
	REP_BY_CAPTURE,
	REP_BY_PID,
	REP_BY_COMM,
	REP_BY_PROBE,
	REP_BY_INTERVAL,
};

/*
 * a + b, held at UINT64_MAX instead of wrapping: a capture from elsewhere may hold counts that
 * add past 64 bits. Every sum of counts is at most its capture's total, so the total's flag
 * (rep_capture.saturated, said in the summary) covers them all.
 */
static inline uint64_t rep_count_add(uint64_t a, uint64_t b, bool *saturated)
{
	uint64_t sum;

	if (!__builtin_add_overflow(a, b, &sum))
		return sum;
	if (saturated)
		*saturated = true;
	return UINT64_MAX;
}

#define REP_MAX_DEBUG_DIRS 8

/*
 * Bytes of a name, object path or source file a frame carries (stkreport(1), LIMITS): longer
 * ones are cut to end with "..." in this many bytes (resolve.c), so that what a report prints
 * and does per frame is bounded whatever the capture holds.
 */
#define REP_MAX_NAME 4096u
/* Bytes of a frame's text (rep_frame_render()): an address, a name, a file, a module. */
#define REP_MAX_FRAME_TEXT (3 * REP_MAX_NAME + 128)
/*
 * s when it holds at most REP_MAX_NAME bytes, else its first bytes up to a UTF-8 boundary and
 * "..." in REP_MAX_NAME bytes, written into buf (resolve.c). NULL for NULL. At most
 * REP_MAX_NAME + 1 bytes of s are read.
 */
const char *rep_cut_name(const char *s, char buf[REP_MAX_NAME + 1]);

/*
 * Default budgets of a run (stkreport(1), --max-memory and --max-debug; format.md 2, "Limits"):
 * the bytes every capture decodes to, with the tables and symbol tables made from them; and the
 * debug data read for source lines, inlined functions and MiniDebugInfo (struct
 * sym_debug_budget). docs/stkreport.1 says why these values.
 */
#define REP_MAX_MEMORY_MB 2048u
#define REP_MAX_DEBUG_MB 1024u
#define REP_MAX_BUDGET_MB (1u << 24)	/* 16 TiB: a larger value is a usage error */

/* One end of --time. An interval (or event) is kept when it overlaps [from, to]. */
enum rep_time_kind {
	REP_TIME_NONE = 0,	/* open end */
	REP_TIME_REL,		/* ns from the capture's start (start.mono_ns) */
	REP_TIME_WALL,		/* ns since the epoch ("2026-11-22T10:00:00", local time) */
	REP_TIME_TOD,		/* ns since local midnight ("10:00:00") of the capture's start day */
};

struct rep_time_bound {
	enum rep_time_kind kind;
	int64_t ns;
};

/* --python-frames (format.md 4.11): which of a mixed stack's frames the outputs show. */
enum rep_pyframes {
	REP_PYFRAMES_DEFAULT = 0,	/* the capture's meta python_frames, else python */
	REP_PYFRAMES_NATIVE,		/* native frames only, the interpreter's included */
	REP_PYFRAMES_PYTHON,		/* interpreter frames in place of the interpreter's own */
	REP_PYFRAMES_MIXED,		/* both */
};

/* "native", "python", "mixed": the value; anything else REP_PYFRAMES_DEFAULT. */
enum rep_pyframes rep_pyframes_parse(const char *s);

struct rep_opts {
	const char *input;	/* the first capture (inputs[0]) */
	const char **inputs;	/* every capture given, in order (argv strings) */
	int ninputs;
	const char *symfs;	/* --symfs DIR, or NULL */
	const char *debug_dirs[REP_MAX_DEBUG_DIRS];	/* --debug-dir DIR (repeatable) */
	int ndebug_dirs;
	bool lines;		/* -l, --lines: file:line after names */
	bool inlines;		/* --inline: frames for inlined functions (also with -l) */
	bool no_inline;		/* no frames for inlined functions: --no-inline, or neither -l
				 * nor --inline given (rep_parse_opts sets it) */
	enum rep_pyframes python_frames;	/* --python-frames (rep_run() resolves DEFAULT) */
	bool no_python_lines;	/* --no-python-lines: interpreter frames without their line */
	bool no_demangle;	/* --no-demangle: raw C++/Rust names */
	/* analysis (issue 3) */
	const char *sql;	/* --sql QUERY */
	bool csv;		/* --csv: SQL result as CSV */
	bool json;		/* --json: SQL result, or stacks, as JSON */
	const char *sqlite_out;	/* --sqlite OUT.db */
	bool diff;		/* --diff BEFORE AFTER (inputs[0], inputs[1]) */
	bool normalize;		/* --normalize: scale by duration and period */
	enum rep_by by;		/* --by */
	uint32_t *pids;		/* --pid PID[,PID..] */
	uint32_t npids;
	const char *comm;	/* --comm NAME */
	const char *probe;	/* --probe ID or SPEC (as in the summary) */
	struct rep_time_bound time_from, time_to;	/* --time FROM,TO (either may be empty) */
	const char *grep;	/* --grep REGEX: stacks with a matching frame */
	uint32_t max_depth;	/* --max-depth N: frames kept per side (0 = all) */
	const char *pprof_out;	/* --pprof OUT.pb.gz */
	const char *clickhouse;	/* --clickhouse URL */
	const char *svg_out;	/* --svg OUT.svg */
	const char *svg_title;	/* --title TEXT (--svg) */
	double svg_width;	/* --width PX (--svg), 0: 1200 */
	bool svg_inverted;	/* --inverted (--svg): icicle graph */
	bool perpid;		/* -P */
	bool delimited;		/* -d */
	bool offset;		/* -s */
	bool verbose;		/* -v */
	bool kernel_only;	/* -K */
	bool user_only;		/* -U */
	bool folded;		/* -f */
	bool annotations;	/* -a */
	bool timestamp;		/* -T */
	bool address;		/* -A: the raw address column (bcc profile -A) */
	bool address_stacks;	/* --address-stacks: one entry per stack of addresses (bcc) */
	bool old_layout;	/* --old-layout: profile captures as bcc profile before 0.33 */
	bool tree;		/* --tree */
	bool quiet;		/* -q */
	double tree_min_pct;	/* --tree-min PCT: hide tree nodes under PCT % of the total */
	bool no_objects;	/* never open object files (fuzzing); no option sets it */
	uint32_t max_memory_mb;	/* --max-memory MB (rep_parse_opts sets the default) */
	uint32_t max_debug_mb;	/* --max-debug MB */
	/* the run's budgets, set by rep_run() from the two above (NULL: no limit); shared by every
	 * capture and symbolizer of the run */
	struct cap_budget *memory;
	struct sym_debug_budget *debug;
	/* set (non-zero) by main.c's SIGINT handler during --sql: the query stops; may be NULL */
	volatile sig_atomic_t *interrupted;
};

/*
 * Parse argv. Returns 0 (run), 1 (help or version printed: exit 0), or -EINVAL after printing a
 * usage error on stderr.
 */
int rep_parse_opts(int argc, char **argv, struct rep_opts *opts);
/* Free what rep_parse_opts() allocated (inputs, pids). */
void rep_opts__free(struct rep_opts *opts);

/* ---- the loaded capture (load.c) ----------------------------------------------------------- */

/* How reading ended. */
enum rep_end {
	REP_END_CLEAN,		/* closing record found, nothing after it failed */
	REP_END_UNCLOSED,	/* clean end of file without a closing record (recorder killed) */
	REP_END_TRUNCATED,	/* file ends inside a chunk */
	REP_END_ERROR,		/* checksum error, malformed or unknown mandatory chunk */
};

struct rep_interval {
	struct cap_interval *iv;		/* into its record */
	const struct cap_stacks *stacks;	/* its capture's: rows' stacks (rep_row_stack()) */
	bool events;				/* an EVENTS chunk: rows are single events */
	const struct cap_process **procs;	/* per row: the process record in force, or NULL */
	uint32_t ksyms;		/* index into rep_capture.ksyms: the table in force, or UINT32_MAX */
	/* which interval of the capture this chunk is, from 0: the parts of a split interval
	 * (format.md 3.2, 2.2: chunks with one seq) share it; below rep_capture.nseqs */
	uint32_t index;
};

struct rep_capture {
	uint16_t major, minor;
	struct cap_meta *meta;		/* NULL when the capture has no meta chunk */
	/* kernel symbol tables (format.md 4.10): a new one where KSYMS or KSYMS_ADD records change
	 * names that intervals read before could have, in file order; owned, strings lent by recs */
	struct cap_ksyms **ksyms;
	uint32_t nksyms;
	/* one per INTERVAL or EVENTS chunk, in file order; a split interval is several of them */
	struct rep_interval *intervals;
	uint32_t nintervals, intervals_cap;
	uint32_t nseqs;			/* intervals as the file counts them: a split one once */
	struct cap_stacks stacks;	/* the stacks rows refer to (4.0: the file's, format.md 4.4) */
	uint64_t losses[CAP_LOSS__COUNT];
	uint64_t *cpu_dropped;		/* per-event mode: drops per CPU, summed over the file */
	uint32_t ncpus;
	bool has_events;		/* an EVENTS chunk was read (per-event capture) */
	const struct cap_object **objects;	/* embedded objects, file order */
	uint32_t nobjects, objects_cap;
	const struct cap_perfmap **perfmaps;	/* JIT symbols, file order */
	uint32_t nperfmaps, perfmaps_cap;
	const struct cap_code **codes;	/* 3.1: interpreter code objects, sorted by id */
	uint32_t ncodes, codes_cap;
	bool has_end;
	struct cap_end end;
	uint64_t events;		/* sum of the row counts read (rep_count_add()) */
	bool saturated;			/* events reached UINT64_MAX: counts are held there */
	enum rep_end how;
	int err;			/* REP_END_TRUNCATED / REP_END_ERROR: the reader's error */
	uint32_t err_chunk;
	uint64_t err_offset;
	/* owned records, freed by __free */
	struct cap_record **recs;
	uint32_t nrecs, recs_cap;
	/* the run's memory budget (NULL: none), borrowed: the records, the reader's buffer and
	 * charged bytes of the tables above are taken from it until __free */
	struct cap_budget *budget;
	uint64_t charged;
};

/*
 * Walk a capture, taking what it keeps from budget b (NULL: no limit; borrowed until __free).
 * Errors while walking are data (->how, ->err...), going over the budget too (-EFBIG at the
 * chunk that did); only a failure to open (ENOENT, EINVAL not a capture, ENOTSUP newer version,
 * ENODATA too short) or ENOMEM make these return NULL with errno set.
 */
struct rep_capture *rep_capture__load(const char *path, struct cap_budget *b);
struct rep_capture *rep_capture__load_mem(const void *buf, size_t len, struct cap_budget *b);
void rep_capture__free(struct rep_capture *c);

/*
 * The kernel symbol table a walk builds from KSYMS and KSYMS_ADD records (ktable.c, format.md
 * 4.10), where a record of m symbols costs O(m log n). The symbols are the records' (borrowed
 * until __free); the nodes are taken from budget b (NULL: no limit).
 */
struct rep_ktable;

struct rep_ktable *rep_ktable__new(struct cap_budget *b);
void rep_ktable__free(struct rep_ktable *t);
/* The table becomes rec's (a KSYMS record, sorted). 0, -EFBIG, -ENOMEM (then partly filled). */
int rep_ktable__set(struct rep_ktable *t, const struct cap_ksyms *rec);
/* Whether adding rec (a KSYMS_ADD record) would change a name an address has in t. */
bool rep_ktable__add_changes(const struct rep_ktable *t, const struct cap_ksyms *rec);
/* Add rec's symbols, each replacing those it overlaps. 0, -EFBIG, -ENOMEM. */
int rep_ktable__add(struct rep_ktable *t, const struct cap_ksyms *rec);
uint32_t rep_ktable__count(const struct rep_ktable *t);
uint32_t rep_ktable__flags(const struct rep_ktable *t);
/* The symbols in address order into out[0..count). */
void rep_ktable__copy(const struct rep_ktable *t, struct cap_ksym *out);

/* The kernel (or user) stack of row r of ri, NULL for none. Lent for the life of the capture. */
static inline const struct cap_stack *rep_row_stack(const struct rep_interval *ri, uint32_t r,
						    bool user)
{
	const struct cap_row *row = &ri->iv->rows[r];

	return cap_stacks__get(ri->stacks, ri->iv, user, user ? row->ustack : row->kstack);
}

/* Integer value of a metadata key: false when absent or not a decimal number. */
bool rep_capture_meta_i64(const struct rep_capture *c, const char *key, int64_t *v);
/* Wall time (ns since the epoch) of a CLOCK_MONOTONIC time, from the meta clock pair. */
bool rep_capture_wall_ns(const struct rep_capture *c, uint64_t mono_ns, int64_t *wall);
/* When recording started (CLOCK_MONOTONIC): meta start.mono_ns, else the first interval's start.
 * False when neither is there. */
bool rep_capture_start_ns(const struct rep_capture *c, int64_t *ns);
/* When recording ended: the end record's time, else the last interval's end. False without. */
bool rep_capture_end_ns(const struct rep_capture *c, uint64_t *ns);
/* The spec of probe id as META lists it, or NULL. Lent for the life of c. */
const char *rep_capture_probe_spec(const struct rep_capture *c, uint32_t id);
/* meta weight=us: an off-CPU capture, whose row counts are microseconds (stkrec --offcpu). */
bool rep_capture_weight_us(const struct rep_capture *c);

/* The user-space symbolizer the options ask for, fed with c's embedded objects (load.c). */
struct sym_user *rep_sym_user__new(const struct rep_capture *c, const struct rep_opts *o);

/* How the walk ended, as --sql's and --clickhouse's captures.state say it: clean, unclosed,
 * truncated or damaged. */
const char *rep_capture_state(enum rep_end how);

/* Whether the capture prints in profile's layout: sampling and off-CPU captures (meta mode). */
bool rep_capture_is_profile(const struct rep_capture *c);

/* ---- the symbolized model (agg.c) ---------------------------------------------------------- */

#define REP_STACK_F_KLOST 0x1u	/* kernel stack requested but lost */
#define REP_STACK_F_ULOST 0x2u
#define REP_STACK_F_HAS_K 0x4u	/* the row had a kernel stack */
#define REP_STACK_F_HAS_U 0x8u

/*
 * One frame of the model: a symbolized address, or one function inlined at it. Interned by its
 * displayed text: the record of the frame whose text has string id T is frames[T], so a stack's
 * frame ids are both text ids (rep_strtab__str(&m->strs, id)) and frame ids (rep_model_frame()).
 * Strings live in the model's string table.
 */
#define REP_FRAME_F_KERNEL 0x1u		/* a kernel frame */
#define REP_FRAME_F_INLINED 0x2u	/* a function inlined into the next frame of the stack */
#define REP_FRAME_F_USED 0x4u		/* the slot holds a frame (not every string id is one) */
#define REP_FRAME_F_ESCAPE 0x8u		/* its text holds a byte text outputs escape, ';' included
					 * (escape.h): checked once per frame, not per line */
#define REP_FRAME_F_PYTHON 0x10u	/* an interpreter frame (Python): addr is its code object's,
					 * offset its instruction's (CAP_CODE_OFF_NONE: none) */

struct rep_frame {
	const char *name;	/* NULL when unnamed: reason says why */
	uint64_t offset;	/* raw address - symbol start (0 for inlined frames) */
	const char *module;	/* basename of the object, "[vdso]"..., NULL if none */
	const char *module_path;	/* recorded path of the object, NULL if none */
	uint64_t module_offset;	/* file offset of the address in module */
	uint64_t addr;		/* raw address of the first occurrence (exact with -v) */
	const char *file;	/* source file (with -l), NULL when unknown */
	uint32_t line;		/* 0 when unknown */
	uint32_t reason;	/* enum sym_reason */
	uint32_t flags;		/* REP_FRAME_F_* */
	uint32_t text;		/* string id of its text (= its id) */
};

struct rep_model_cfg;

/*
 * Text of a frame as the layouts print it (stkreport(1), "Frames"): name[+0xOFF with -s]
 * [ (FILE:LINE) with -l][ (inlined)][_[k] with -a], "[unknown]" with " (module+0xOFF)" under -v,
 * the raw address column first (cfg->addr_column), bcc profile's " [MODULE]" (cfg->bcc_frames).
 * cfg->exact: every field, for layouts that print them all (--json), so frames that differ in
 * any field stay apart.
 */
void rep_frame_render(const struct rep_frame *f, const struct rep_opts *o,
		      const struct rep_model_cfg *cfg, char *buf, size_t len);

/* One displayed stack: identical displayed stacks are merged. */
struct rep_stack {
	uint32_t section;	/* interval index with -T, else 0 */
	uint32_t pid;		/* 0 unless keyed by process */
	uint32_t comm;		/* string id; the empty string unless keyed by comm */
	uint32_t flags;		/* REP_STACK_F_* */
	uint32_t nk, nu;	/* kernel frames, then user frames, both leaf first */
	uint32_t *frames;	/* frame ids (= text ids): nk kernel frames then nu user frames */
	uint64_t count;
	uint32_t group;		/* --by: index into rep_model.groups (0 without --by) */
	uint32_t addrs;		/* --address-stacks: string id of its addresses, else 0 */
};

/* A --by group: "KEY=VALUE" (label) and VALUE (value), string ids. */
struct rep_group {
	uint32_t label, value;
	int64_t key;		/* numeric order (pid, probe id, capture index, time), then label */
};

/* How the model keys and renders frames; derived from the options and the emitter. */
struct rep_model_cfg {
	bool profile;		/* capture mode: sampling or off-CPU */
	bool offcpu;		/* an off-CPU capture (counts are microseconds) */
	bool key_pid, key_comm;
	bool key_tid;		/* the pid key is the thread's id (offcputime keys threads) */
	bool addr_column;	/* frame text starts with the raw address: "%-16lx NAME" */
	bool addr_0x;		/* the column as bcc profile -A prints it: "0x%016lx NAME" */
	bool bcc_frames;	/* bcc profile's frames since 0.33: NAME+0xOFF [MODULE] */
	bool kernel, user;	/* which sides are shown */
	bool exact;		/* frames keyed on every field (rep_frame_render()) */
	bool address_stacks;	/* stacks also keyed by their raw addresses (rep_stack.addrs) */
};

struct rep_model;
struct rep_model_builder;

/*
 * Called by rep_model__add() for each row the filters keep, with its displayed stack (st: frame
 * ids lent for the call, count the row's), before the row merges into the model: for outputs
 * that keep rows apart (--clickhouse). A non-zero return ends the add with that error.
 */
typedef int (*rep_row_fn)(void *ctx, const struct rep_model *m, const struct rep_capture *c,
			  const struct rep_interval *ri, uint32_t row, const struct rep_stack *st);

struct rep_model {
	struct rep_model_cfg cfg;
	struct rep_strtab strs;		/* frame texts, names, modules, files, comms, group labels */
	struct rep_stack *stacks;	/* sorted: section, group, then count ascending, then text */
	uint32_t nstacks, cap;
	uint32_t nsections;
	uint64_t *section_end_ns;	/* per section: interval end (CLOCK_MONOTONIC) */
	int64_t *section_wall_ns;	/* per section: the same end as wall time (the capture's
					 * clock pair), or CLOCK_MONOTONIC without one */
	uint32_t sections_cap;
	uint64_t unnamed[SYM_R__COUNT];	/* unnamed frames per reason, weighted by count */
	uint64_t unnamed_total;
	uint64_t kept_events;		/* events of the rows the filters kept */
	struct rep_frame *frames;	/* indexed by string id; see struct rep_frame */
	uint32_t frames_cap;
	struct rep_group *groups;	/* --by groups in display order */
	uint32_t ngroups, groups_cap;
	/* set between rep_model__begin() and the first rep_model__add(), or NULL */
	rep_row_fn on_row;
	void *on_row_ctx;
	struct rep_model_builder *builder;	/* between __begin and __finish */
	struct rep_htab index;		/* merge index over stacks */
	struct rep_htab group_index;
	uint32_t *frame_buf;		/* scratch */
	uint32_t frame_buf_cap;
	struct rep_charge charge;	/* the arrays above, from the run's memory budget (the
					 * tables charge theirs): given back by __clear */
};

/* The frame record of frame id id (a stack's frames[i]). */
static inline const struct rep_frame *rep_model_frame(const struct rep_model *m, uint32_t id)
{
	return &m->frames[id];
}

/* Whether frame id (an emit_path_elem's: 0, no frame) is an interpreter frame (Python). */
static inline bool rep_model_frame_python(const struct rep_model *m, uint32_t id)
{
	return id && (m->frames[id].flags & REP_FRAME_F_PYTHON);
}

/* Whether frame id's text prints as it is: nothing in it to escape (REP_FRAME_F_ESCAPE). */
static inline bool rep_model_frame_plain(const struct rep_model *m, uint32_t id)
{
	return (m->frames[id].flags & (REP_FRAME_F_USED | REP_FRAME_F_ESCAPE)) == REP_FRAME_F_USED;
}

/*
 * Build a model one capture at a time: __begin, then __add for each capture, then __finish,
 * which sorts the stacks (the emitters print them in that order). A capture and its name are
 * borrowed for the __add call only: the model copies what it keeps (names, frames, section
 * times), so a capture may be freed as soon as it is added. Rows pass the filters of o
 * (filter.c) first; o is borrowed until __finish. Each returns 0, -ENOMEM, or -EINVAL (__begin:
 * a bad --grep regex), or what the on_row hook returned; after an error, only __clear.
 */
int rep_model__begin(struct rep_model *m, const struct rep_opts *o,
		     const struct rep_model_cfg *cfg);
int rep_model__add(struct rep_model *m, const struct rep_capture *c, const char *name);
int rep_model__finish(struct rep_model *m);
/* The three steps over n captures (names: their file names, for --by capture). */
int rep_model__build_many(struct rep_model *m, const struct rep_capture *const *caps,
			  const char *const *names, uint32_t n, const struct rep_opts *o,
			  const struct rep_model_cfg *cfg);
/* One capture (named o->input in the summary and for --by capture). */
int rep_model__build(struct rep_model *m, const struct rep_capture *c, const struct rep_opts *o,
		     const struct rep_model_cfg *cfg);
void rep_model__clear(struct rep_model *m);
/* Wall time of a CLOCK_MONOTONIC time of c (its clock pair), or the time itself without one. */
int64_t rep_capture_wall_or_mono(const struct rep_capture *c, uint64_t mono_ns);
/* "HH:MM:SS" (local time) of a wall time in ns since the epoch: the -T and --by interval text. */
void rep_wall_time_text(char *buf, size_t len, int64_t wall_ns);
/* -T heading of section s: "HH:MM:SS" of its interval's end in its capture's clock. */
void rep_model_section_time(const struct rep_model *m, uint32_t s, char *buf, size_t len);

/* ---- filters (filter.c): --pid --comm --probe --time --grep -------------------------------- */

struct rep_filter;

/* Compile o's filters. NULL with errno: EINVAL (bad --grep regex, printed), ENOMEM. */
struct rep_filter *rep_filter__new(const struct rep_opts *o);
void rep_filter__free(struct rep_filter *f);
/* Resolve --probe and --time for capture c (the rows that follow are c's). 0 or -ENOMEM. */
int rep_filter__capture(struct rep_filter *f, const struct rep_capture *c);
/* Whether an interval may hold kept rows (--time overlap; event chunks are decided per row). */
bool rep_filter__interval(const struct rep_filter *f, const struct rep_interval *ri);
/* Whether a row passes --pid, --comm, --probe and (event rows) --time. comm NUL-terminated. */
bool rep_filter__row(const struct rep_filter *f, const struct rep_interval *ri,
		     const struct cap_row *row, const char *comm);
bool rep_filter__has_grep(const struct rep_filter *f);
/* --grep: whether name matches (true without --grep). */
bool rep_filter__match(const struct rep_filter *f, const char *name);

/* Sort order of the stack list (exposed for tests): <0, 0, >0. */
int rep_stack_cmp(const struct rep_model *m, const struct rep_stack *a, const struct rep_stack *b);

/* ---- emitters (emit_*.c) ------------------------------------------------------------------- */

/* Text layouts print every name from a capture escaped (escape.h); JSON and SVG their way. */
struct emitter {
	const char *name;
	/* model keying this layout needs, filled from the options and capture mode */
	void (*configure)(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg);
	/* print the model, once every capture was added */
	int (*emit)(FILE *out, const struct rep_model *m, const struct rep_opts *o);
	/*
	 * Optional, for layouts that print each capture as it is added (stacksnoop's events,
	 * before emit()): a state for out and o (NULL + errno), fed every capture, then freed.
	 */
	void *(*stream_new)(FILE *out, const struct rep_opts *o);
	int (*stream_add)(void *state, const struct rep_capture *c);
	void (*stream_free)(void *state);
};

extern const struct emitter emit_stackcount, emit_profile, emit_folded, emit_tree;
/* --json: stacks as arrays of frame objects (emit_json.c) */
extern const struct emitter emit_json;
/* A JSON string literal for s (RFC 8259 escapes, invalid UTF-8 as U+FFFD); null for NULL. */
void emit_json_string(FILE *out, const char *s);
/* Length (1..4) of the valid UTF-8 sequence at s, 0 when the bytes there are not UTF-8. */
int emit_utf8_len(const unsigned char *s);

/* One element of a stack's folded path (emit_folded.c), root first. */
struct emit_path_elem {
	const char *name;	/* lent by the model (or a literal) */
	bool kernel;
	bool plain;		/* known to hold nothing to escape (a frame without
				 * REP_FRAME_F_ESCAPE); false: print it escaped */
	uint32_t frame;		/* its frame id; 0 for the group, comm, delimiter and markers
				 * (string id 0 is "", never a frame's text) */
};

/*
 * The folded path of st as -f prints it: [--by value;]comm;user frames root first;[-;]kernel
 * frames root first, with the "[Missed ... Stack]" markers of profile captures, into *buf (of
 * *cap elements, grown as needed; the caller frees it). The comm is there where m keys on it
 * (sampling and off-CPU captures, -P); else, without --by, an empty element takes its place, as
 * the empty field that starts stackcount's lines (emit_folded_blank_comm()). Returns the number
 * of elements, or -ENOMEM (*buf kept).
 */
int64_t emit_folded_path(const struct rep_model *m, const struct rep_opts *o,
			 const struct rep_stack *st, struct emit_path_elem **buf, uint32_t *cap);
/* Whether emit_folded_path()'s first element is that empty comm field (no frame of its own). */
bool emit_folded_blank_comm(const struct rep_model *m, const struct rep_opts *o);
/* The path joined with ';' (no count, no newline), names escaped with REP_ESC_SEMICOLON. */
void emit_folded_line(FILE *out, const struct emit_path_elem *path, uint32_t n);

/* --snoop captures: bcc stacksnoop's layout, one event at a time (emit_snoop.c) */
extern const struct emitter emit_snoop;

/*
 * The emitter the options select for capture c (the first one given): its mode picks the
 * default layout (stack list, profile's, or stacksnoop's for a per-event capture).
 */
const struct emitter *rep_pick_emitter(const struct rep_opts *o, const struct rep_capture *c);
/* Every emitter, NULL-terminated (the fuzzer runs them all). */
extern const struct emitter *const rep_emitters[];

/* ---- symbolized addresses (resolve.c): the model's frames, SQL, pprof, stacksnoop -------- */

/* One symbolized raw address. Strings are lent by the resolver until its __free. */
struct rep_frame_info {
	uint32_t id;		/* dense: 0, 1, 2... per resolver (callers index side tables) */
	bool kernel;
	uint32_t reason;	/* enum sym_reason */
	const char *name;	/* NULL when unnamed */
	uint64_t offset;	/* raw address - symbol start */
	const char *module;	/* user: basename of the object, or NULL */
	const char *module_path;	/* user: recorded path of the object, or NULL */
	uint64_t module_offset;
	const uint8_t *build_id;
	uint32_t build_id_len;
	const char *file;	/* source of the address in `name` (or of the outermost inlined call) */
	uint32_t line;
	uint32_t ninl;		/* inlined functions at the address, innermost first (sym_result) */
	struct sym_inline *inl;
	/*
	 * an interpreter frame (format.md 4.11): lang not 0; file, line: its executing line;
	 * offset: its instruction's (CAP_CODE_OFF_NONE: none run yet)
	 */
	uint32_t lang;		/* enum cap_code_lang, 0: native code */
	uint32_t firstline;	/* the code object's first line */
	uint64_t code_addr;	/* the code object's address in its process */
};

struct rep_resolver;

enum rep_resolve_flags {
	/* source lines (file, line), which read DWARF: for outputs that print them */
	REP_RESOLVE_LINES = 1 << 0,
	/* key user addresses by (process, raw address), not (object, file offset): for callers
	 * whose result depends on the raw address (the -v address column) */
	REP_RESOLVE_PER_ADDRESS = 1 << 1,
};

/* Symbolizers for capture c (borrowed until __free), flags from enum rep_resolve_flags.
 * NULL + ENOMEM. */
struct rep_resolver *rep_resolver__new(const struct rep_capture *c, const struct rep_opts *o,
				       unsigned int flags);
void rep_resolver__free(struct rep_resolver *r);
/*
 * Details of address addr of row `row` of interval ri (a kernel or a user frame; is_return: not
 * the leaf, so addr - 1 is looked up). *out is lent until the next call. 0 or -ENOMEM.
 */
int rep_resolver__frame(struct rep_resolver *r, const struct rep_interval *ri, uint32_t row,
			bool kernel, bool is_return, uint64_t addr,
			const struct rep_frame_info **out);
/*
 * The same lookups for ips[first..first+n) of one stack (ips[0] is the leaf), giving only the
 * addresses' ids (rep_frame_info.id; a new address gets the next one) in ids[0..n): for callers
 * that keep their own per-id tables, on the per-frame path. A cached address costs one table
 * slot, its details are not touched. 0 or -ENOMEM.
 */
int rep_resolver__ids(struct rep_resolver *r, const struct rep_interval *ri, uint32_t row,
		      bool kernel, const uint64_t *ips, uint32_t first, uint32_t n, uint32_t *ids);
/*
 * Whether --python-frames leaves ips[i] of a user stack of n words out: native drops the
 * interpreter frames, python the interpreter's own frame that runs each run of them
 * (format.md 4.11).
 */
bool rep_ip_hidden(const struct rep_opts *o, const uint64_t *ips, uint32_t n, uint32_t i);
/* Details of address id (from __ids), lent until the next __ids or __frame call. */
const struct rep_frame_info *rep_resolver__info(const struct rep_resolver *r, uint32_t id);

/* ---- SQL (sql.c) and pprof (emit_pprof.c) -------------------------------------------------- */

/*
 * --sql, --sqlite (sql.c): captures loaded into SQLite (docs/sql.md) one at a time: __open
 * (schema, one transaction), __add each capture (borrowed for the call; name: its file name in
 * the captures table), then __finish, which indexes, commits, writes o->sqlite_out when set and
 * runs each qs[i]->sql that is set, printing its result on out (stkreport: stdout) as a table,
 * qs[i]->csv or qs[i]->json. Errors are printed on stderr (`stkreport: --sql: ...`). __open:
 * NULL + errno; the others 0 or a negative errno. o is borrowed until __close.
 */
struct rep_sql;

struct rep_sql *rep_sql__open(const struct rep_opts *o);
int rep_sql__add(struct rep_sql *q, const struct rep_capture *c, const char *name);
int rep_sql__finish(struct rep_sql *q, FILE *out, const struct rep_opts *const *qs, int nq);
void rep_sql__close(struct rep_sql *q);
/*
 * n captures at once, with nq queries over one load: the database is built (and written to
 * qs[0]->sqlite_out) with qs[0]'s options, then each qs[i]->sql printed as qs[i] says. For the
 * fuzzer: creating the schema takes longer than loading a small capture.
 */
int rep_sql_run_many(FILE *out, struct rep_capture **caps, const char **names, int n,
		     const struct rep_opts *const *qs, int nq);

/*
 * --pprof (emit_pprof.c): captures, one at a time, become one pprof profile (profile.proto,
 * gzipped): __weigh each (which process is the profile's main one: its executable is mapping 1),
 * then __add each (name: the capture label with --by capture), in the same order; each is
 * borrowed for the call only. __write writes it to path (never half-written), __emit to out
 * (flushed). __new: NULL + ENOMEM. __weigh and __add: 0 or -ENOMEM, not printed; __write and
 * __emit print their errors. o is borrowed until __free.
 */
struct rep_pprof;

struct rep_pprof *rep_pprof__new(const struct rep_opts *o);
int rep_pprof__weigh(struct rep_pprof *p, const struct rep_capture *c);
int rep_pprof__add(struct rep_pprof *p, const struct rep_capture *c, const char *name);
int rep_pprof__write(struct rep_pprof *p, const char *path);
int rep_pprof__emit(struct rep_pprof *p, FILE *out);
void rep_pprof__free(struct rep_pprof *p);
/* The n captures at once into out (the fuzzer). Errors are printed. */
int rep_pprof_emit(FILE *out, struct rep_capture **caps, const char **names, int n,
		   const struct rep_opts *o);

/* ---- --clickhouse (clickhouse.c, docs/clickhouse.md) --------------------------------------- */

/*
 * The symbolized rows of captures sent to a ClickHouse server's HTTP interface: __open checks
 * the server and creates what is missing of the database url names and its tables; __add takes
 * a capture (borrowed for the call; name: the file it was read from, whose bytes make the
 * capture's id), skips it when the server has its rows already, and sends the batch when it is
 * full; __finish sends the rest and says what was loaded. Errors are printed, one line each.
 * __open: NULL + errno; the others 0 or a negative errno. o is borrowed until __close.
 */
struct rep_ch;

struct rep_ch *rep_ch__open(const char *url, const struct rep_opts *o);
int rep_ch__add(struct rep_ch *ch, const struct rep_capture *c, const char *name);
int rep_ch__finish(struct rep_ch *ch);
void rep_ch__close(struct rep_ch *ch);

/* ---- run ----------------------------------------------------------------------------------- */

/* Print the summary (summary.c) for the capture read from name. */
void rep_summary(FILE *out, const char *name, const struct rep_capture *c,
		 const struct rep_model *m);

/* Build the model for emitter e and print it to out. Returns 0 or -ENOMEM/-EIO. */
int rep_emit(FILE *out, const struct rep_capture *c, const struct rep_opts *o,
	     const struct emitter *e, struct rep_model *m);

/*
 * Emitter e over captures added one at a time (run.c): __begin with the keying the first
 * capture's mode asks for (first is read during the call only), __add each capture (borrowed for
 * the call, name too), then __finish, which prints the model (unless err is set: then it only
 * frees) and returns err, or 0, -ENOMEM, -EIO. m receives the model; the caller clears it.
 */
struct rep_emit_run {
	FILE *out;
	const struct emitter *e;
	const struct rep_opts *o;
	struct rep_model *m;
	void *stream;		/* e->stream_new()'s state */
};

int rep_emit__begin(struct rep_emit_run *r, FILE *out, const struct emitter *e,
		    const struct rep_capture *first, const struct rep_opts *o, struct rep_model *m);
int rep_emit__add(struct rep_emit_run *r, const struct rep_capture *c, const char *name);
int rep_emit__finish(struct rep_emit_run *r, int err);
/* The model keying emitter e needs under options o, for captures like c (the first one). */
void rep_model_cfg_for(const struct emitter *e, const struct rep_opts *o,
		       const struct rep_capture *c, struct rep_model_cfg *cfg);
/* Summary lines of a merged model (summary.c): unnamed frames; what the filters kept. */
void rep_summary_unnamed(FILE *out, const struct rep_model *m);
/* total: the events of every capture read (rep_capture.events, added) */
void rep_summary_filtered(FILE *out, const struct rep_opts *o, uint64_t total,
			  const struct rep_model *m);

/*
 * --svg (emit_svg.c): an interactive flame graph of model m (built with emit_folded's keying:
 * rep_model_cfg_for(&emit_folded, ...); with --by, one tower per group), written to out
 * (flushed), or when out is NULL to a file created at path with cap_create_output() once the
 * graph is laid out. Returns 0 or a negative errno (not printed).
 */
int emit_svg(FILE *out, const char *path, const struct rep_model *m, const struct rep_opts *o);

/*
 * --diff (diff.c): caps[0] BEFORE, caps[1] AFTER. Prints `stack before after` lines on stdout
 * (or the differential flame graph with --svg) and, unless -q, the functions whose share grew
 * or shrank most on stderr. m receives AFTER's model. Returns 0 or a negative errno (printed).
 */
int rep_diff_run(struct rep_capture **caps, const char **names, const struct rep_opts *o,
		 struct rep_model *m);
/*
 * The same with its outputs given: the lines, or with o->svg_out (only tested for NULL: no file
 * is written) the differential flame graph, on out; warnings, the shares and errors on msgs.
 */
int rep_diff_write(FILE *out, FILE *msgs, struct rep_capture **caps, const char **names,
		   const struct rep_opts *o, struct rep_model *m);
/* --normalize: the factor BEFORE's counts are multiplied by (diff.c explains the formula). */
double rep_diff_factor(const struct rep_capture *before, const struct rep_capture *after);
/*
 * --diff --svg: a differential flame graph: widths from after's counts, colour from the change
 * against before's counts times factor (red grew, blue shrank); out or path as emit_svg().
 */
int emit_svg_diff(FILE *out, const char *path, const struct rep_model *before,
		  const struct rep_model *after, const struct rep_opts *o, double factor);

/* What rep_fuzz_one() runs. */
enum rep_fuzz_what {
	REP_FUZZ_EMITTERS = 1 << 0,	/* every emitter under several option sets, the summary */
	REP_FUZZ_OUTPUTS = 1 << 1,	/* --diff (lines, shares, SVG), --svg, --pprof */
	REP_FUZZ_SQL = 1 << 2,		/* the --sql loader and a query per printer: a few ms
					 * per input even when empty (SQLite parses the schema) */
	REP_FUZZ_ALL = REP_FUZZ_EMITTERS | REP_FUZZ_OUTPUTS | REP_FUZZ_SQL,
};

/*
 * Fuzzing entry: load a capture from memory and run what `what` (enum rep_fuzz_what) says on it,
 * and on it with a prefix of itself (its setup and first interval) where two captures go in,
 * printing everything (files included) into sink. Never opens object files, never creates a
 * file. Returns 0 or a negative errno: -ENOMEM, -EIO when sink fails, else an error that is a
 * bug (a fixed query failed, a loader error).
 */
int rep_fuzz_one(const void *buf, size_t len, FILE *sink, unsigned int what);
/*
 * Where to cut a fuzz input for a second capture to diff and merge with the whole one: after
 * its first interval (or event chunk), so that the two differ in rows and duration; else at
 * half. Never inside the file header (16 bytes) unless the input is shorter, so that the cut
 * capture loads whenever the whole one did.
 */
size_t rep_fuzz_cut(const void *buf, size_t len);

/* The whole of stkreport after option parsing. Returns 0 or a negative errno (already printed). */
int rep_run(const struct rep_opts *o);

#endif /* REP_REPORT_H */
