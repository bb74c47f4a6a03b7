/* SPDX-License-Identifier: MIT */
/*
 * report.h: stkreport's internal API: options, the loaded capture, the symbolized model that
 * every emitter prints, and the run entry points (also used by the fuzzer).
 *
 *   rep_capture__load*()   walk the chunks (load.c): meta, kallsyms, processes, intervals, losses
 *   rep_model__build()     symbolize and merge rows into displayed stacks (agg.c)
 *   rep_emit()             print the model with the emitter the options select (emit_*.c)
 *   rep_summary()          the stderr summary (summary.c)
 */
#ifndef REP_REPORT_H
#define REP_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <stk/capture.h>

#include "htab.h"
#include "symbolize.h"

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

#define REP_MAX_DEBUG_DIRS 8

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

struct rep_opts {
	const char *input;	/* the first capture (inputs[0]) */
	const char **inputs;	/* every capture given, in order (argv strings) */
	int ninputs;
	const char *symfs;	/* --symfs DIR, or NULL */
	const char *debug_dirs[REP_MAX_DEBUG_DIRS];	/* --debug-dir DIR (repeatable) */
	int ndebug_dirs;
	bool lines;		/* -l, --lines: file:line after names */
	bool no_inline;		/* --no-inline: no frames for inlined functions */
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
	const char *svg_out;	/* --svg OUT.svg */
	bool perpid;		/* -P */
	bool delimited;		/* -d */
	bool offset;		/* -s */
	bool verbose;		/* -v */
	bool kernel_only;	/* -K */
	bool user_only;		/* -U */
	bool folded;		/* -f */
	bool annotations;	/* -a */
	bool timestamp;		/* -T */
	bool tree;		/* --tree */
	bool quiet;		/* -q */
	double tree_min_pct;	/* --tree-min PCT: hide tree nodes under PCT % of the total */
	bool no_objects;	/* never open object files (fuzzing); no option sets it */
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
	bool events;				/* an EVENTS chunk: rows are single events */
	const struct cap_process **procs;	/* per row: the process record in force, or NULL */
	uint32_t ksyms;				/* index into rep_capture.ksyms, or UINT32_MAX */
};

struct rep_capture {
	uint16_t major, minor;
	struct cap_meta *meta;		/* NULL when the capture has no meta chunk */
	struct cap_ksyms **ksyms;	/* every snapshot, in file order */
	uint32_t nksyms;
	struct rep_interval *intervals;
	uint32_t nintervals;
	uint64_t losses[CAP_LOSS__COUNT];
	uint64_t *cpu_dropped;		/* per-event mode: drops per CPU, summed over the file */
	uint32_t ncpus;
	bool has_events;		/* an EVENTS chunk was read (per-event capture) */
	const struct cap_object **objects;	/* embedded objects, file order */
	uint32_t nobjects;
	const struct cap_perfmap **perfmaps;	/* JIT symbols, file order */
	uint32_t nperfmaps;
	bool has_end;
	struct cap_end end;
	uint64_t events;		/* sum of the row counts read */
	enum rep_end how;
	int err;			/* REP_END_TRUNCATED / REP_END_ERROR: the reader's error */
	uint32_t err_chunk;
	uint64_t err_offset;
	/* owned records, freed by __free */
	struct cap_record **recs;
	uint32_t nrecs, recs_cap;
};

/*
 * Walk a capture. Errors while walking are data (->how, ->err...); only a failure to open
 * (ENOENT, EINVAL not a capture, ENOTSUP newer version, ENODATA too short) or ENOMEM make these
 * return NULL with errno set.
 */
struct rep_capture *rep_capture__load(const char *path);
struct rep_capture *rep_capture__load_mem(const void *buf, size_t len);
void rep_capture__free(struct rep_capture *c);

/* Integer value of a metadata key: false when absent or not a decimal number. */
bool rep_capture_meta_i64(const struct rep_capture *c, const char *key, int64_t *v);
/* Wall time (ns since the epoch) of a CLOCK_MONOTONIC time, from the meta clock pair. */
bool rep_capture_wall_ns(const struct rep_capture *c, uint64_t mono_ns, int64_t *wall);

/* The user-space symbolizer the options ask for, fed with c's embedded objects (load.c). */
struct sym_user *rep_sym_user__new(const struct rep_capture *c, const struct rep_opts *o);

/* "count" or "profile" from the metadata (count when absent or unknown). */
bool rep_capture_is_profile(const struct rep_capture *c);

/* ---- the symbolized model (agg.c) ---------------------------------------------------------- */

#define REP_STACK_F_KLOST 0x1u	/* kernel stack requested but lost */
#define REP_STACK_F_ULOST 0x2u
#define REP_STACK_F_HAS_K 0x4u	/* the row had a kernel stack */
#define REP_STACK_F_HAS_U 0x8u

/* One displayed stack: identical displayed stacks are merged. */
struct rep_stack {
	uint32_t section;	/* interval index with -T, else 0 */
	uint32_t pid;		/* 0 unless keyed by process */
	uint32_t comm;		/* string id; the empty string unless keyed by comm */
	uint32_t flags;		/* REP_STACK_F_* */
	uint32_t nk, nu;	/* kernel frames, then user frames, both leaf first */
	uint32_t *frames;	/* string ids: nk kernel frames then nu user frames */
	uint64_t count;
};

/* How the model keys and renders frames; derived from the options and the emitter. */
struct rep_model_cfg {
	bool profile;		/* capture mode */
	bool key_pid, key_comm;
	bool addr_column;	/* frame text starts with the raw address: "%-16lx NAME" */
	bool kernel, user;	/* which sides are shown */
};

struct rep_model {
	struct rep_model_cfg cfg;
	struct rep_strtab strs;		/* frame texts and comms */
	struct rep_stack *stacks;	/* sorted: section, then count ascending, then text */
	uint32_t nstacks, cap;
	uint32_t nsections;
	uint64_t *section_end_ns;	/* per section: interval end (CLOCK_MONOTONIC) */
	uint64_t unnamed[SYM_R__COUNT];	/* unnamed frames per reason, weighted by count */
	uint64_t unnamed_total;
	struct rep_htab index;		/* merge index over stacks */
	uint32_t *frame_buf;		/* scratch */
	uint32_t frame_buf_cap;
};

int rep_model__build(struct rep_model *m, const struct rep_capture *c, const struct rep_opts *o,
		     const struct rep_model_cfg *cfg);
void rep_model__clear(struct rep_model *m);

/* Sort order of the stack list (exposed for tests): <0, 0, >0. */
int rep_stack_cmp(const struct rep_model *m, const struct rep_stack *a, const struct rep_stack *b);

/* ---- emitters (emit_*.c) ------------------------------------------------------------------- */

struct emitter {
	const char *name;
	/* model keying this layout needs, filled from the options and capture mode */
	void (*configure)(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg);
	int (*emit)(FILE *out, const struct rep_model *m, const struct rep_capture *c,
		    const struct rep_opts *o);
};

extern const struct emitter emit_stackcount, emit_profile, emit_folded, emit_tree;

/* The emitter the options select for this capture. */
const struct emitter *rep_pick_emitter(const struct rep_opts *o, bool profile);
/* Every emitter, NULL-terminated (the fuzzer runs them all). */
extern const struct emitter *const rep_emitters[];

/* Section heading for -T: "HH:MM:SS" (local time) of the section's interval end. */
void emit_section_time(char *buf, size_t len, const struct rep_capture *c, uint64_t end_ns);

/* ---- run ----------------------------------------------------------------------------------- */

/* Print the summary (summary.c) for the capture read from name. */
void rep_summary(FILE *out, const char *name, const struct rep_capture *c,
		 const struct rep_model *m);

/* Build the model for emitter e and print it to out. Returns 0 or -ENOMEM/-EIO. */
int rep_emit(FILE *out, const struct rep_capture *c, const struct rep_opts *o,
	     const struct emitter *e, struct rep_model *m);

/*
 * Fuzzing entry: load a capture from memory and run every emitter under several option sets,
 * plus the summary, into sink. Never opens object files. Returns 0 or -ENOMEM.
 */
int rep_fuzz_one(const void *buf, size_t len, FILE *sink);

/* The whole of stkreport after option parsing. Returns 0 or a negative errno (already printed). */
int rep_run(const struct rep_opts *o);

#endif /* REP_REPORT_H */
