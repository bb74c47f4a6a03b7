/* SPDX-License-Identifier: MIT */
/*
 * rec.h: internal interfaces of record/ (stkrec). Nothing outside record/ and tests/unit/rec_*
 * includes it.
 */
#ifndef STK_REC_H
#define STK_REC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stk/capture.h"

/* ---- options (opts.c) ------------------------------------------------------------------ */

struct rec_opts {
	const char *output;
	uint32_t *pids;
	uint32_t npids;
	uint32_t *tids;
	uint32_t ntids;
	bool kernel_only;	/* -K */
	bool user_only;		/* -U */
	unsigned int interval_s;
	unsigned int duration_s;	/* 0: until Ctrl-C (or the command exits) */
	bool regexp;
	unsigned int freq_hz;	/* -F, 0 when -c is used */
	uint64_t period;	/* -c N, 0 when -F */
	int cpu;		/* -C, -1 for all */
	bool include_idle;
	uint32_t stack_storage_size;
	uint32_t hash_storage_size;
	bool quiet;
	const char *event;	/* -e EVENT (sampling), NULL: cpu-clock */
	bool snoop;		/* --snoop: per-event records (EVENTS chunks) */
	uint32_t ringbuf_mb;	/* --ringbuf-size: the --snoop ring buffer, all CPUs */
	bool offcpu;		/* --offcpu: blocked time per stack, in microseconds */
	uint64_t min_block_us, max_block_us;
	bool no_symtabs;	/* --no-symtabs */
	bool embed_objects;	/* --embed-objects */
	bool all_kallsyms;	/* --all-kallsyms: a whole KSYMS snapshot at the start */
	uint32_t max_kprobes;	/* --max-kprobes */
	int nspecs;
	char **specs;		/* borrowed from argv */
	char **command;		/* NULL-terminated, borrowed from argv; NULL without -- */
	int argc;
	char **argv;
};

/*
 * Parse argv into opts (which borrows argv's strings; free with rec_opts__free()). Returns 0 to
 * run, 1 when --help or --version was printed (exit 0), -EINVAL on a usage error (already
 * printed, exit 2).
 */
int rec_parse_opts(int argc, char **argv, struct rec_opts *opts);
void rec_opts__free(struct rec_opts *opts);

/* Parse "1,2,3" into a new array; -EINVAL on anything but positive decimal ids. */
int rec_parse_id_list(const char *s, uint32_t **ids, uint32_t *n);

/* Parse a decimal number in [min, max]; -EINVAL otherwise. */
int rec_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* ---- sampling events of -e (events.c) --------------------------------------- */

struct rec_event {
	const char *name;	/* perf's name: "cpu-clock", "page-faults", "cycles", ... */
	uint32_t type;		/* perf_event_attr.type: PERF_TYPE_SOFTWARE or _HARDWARE */
	uint64_t config;	/* perf_event_attr.config */
	bool every_event;	/* rare events: period 1 unless -F or -c is given */
};

/* The event called name (NULL: cpu-clock, the default); NULL when there is none. */
const struct rec_event *rec_event_find(const char *name);
/* "cpu-clock, task-clock, ..." into buf, for a usage error; -ENOSPC when it does not fit. */
int rec_event_names(char *buf, size_t sz);
bool rec_event_is_hardware(const struct rec_event *e);
/*
 * Without -F and -c (both 0 still): 49 Hz as bcc profile, but a rare event (page faults,
 * switches, migrations) at period 1.
 */
void rec_event_defaults(struct rec_opts *o);

/* ---- messages ----------------------------------------------------------------------------- */

/* Print `stkrec: MESSAGE` on stderr; returns err so callers can `return rec_err(-E, ...)`. */
int rec_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- probe specs (spec.c) ------------------------------------------------------------------ */

/* One attach point of a spec. */
struct rec_target {
	char *name;		/* function, "category:event", or USDT probe name */
	char *provider;		/* USDT provider */
	uint64_t offset;	/* uprobe: file offset of the function */
	uint32_t nsites;	/* USDT: call sites of provider:name */
};

struct rec_spec {
	const char *text;	/* as the user wrote it */
	uint32_t id;		/* position on the command line: the BPF cookie */
	uint32_t kind;		/* enum cap_probe_kind */
	char *pattern;		/* function / event / probe pattern */
	char *lib;		/* the LIB part as written, "" if none */
	char *path;		/* resolved binary for uprobes and USDT */
	uint32_t ntargets;
	struct rec_target *targets;
	uint32_t nattached;	/* set by probe.c */
	/*
	 * Kernel functions: matches that cannot be probed (not traceable, kprobe blacklist, attach
	 * error): counted, not fatal. mechanism: enum rec_kfunc_mode used for this spec.
	 */
	uint32_t nskipped;
	uint32_t mechanism;
};

/* How bcc's stackcount splits a spec: type ('p', 't', 'u'), library, pattern. */
struct rec_spec_parts {
	char type;
	char lib[4096];
	char pattern[4096];
};

/* Split a spec the bcc way. -EINVAL (with a message) for a malformed one. */
int rec_spec_split(const char *text, struct rec_spec_parts *parts);

/*
 * A SPEC pattern, compiled once: `*` wildcards matching the whole name (fnmatch), or with -r a
 * POSIX extended regular expression anchored at the start of the name, as bcc's re.match().
 * __new returns NULL with errno EINVAL for a bad regular expression (or ENOMEM).
 */
struct rec_matcher;
struct rec_matcher *rec_matcher__new(const char *pattern, bool regexp);
bool rec_matcher__match(const struct rec_matcher *m, const char *name);
void rec_matcher__free(struct rec_matcher *m);

/* Parse one `ldconfig -p` line: copy the soname and the path. Returns 0, or -EINVAL. */
int rec_ldconfig_line(const char *line, char *soname, size_t sz, char *path, size_t psz);

/* Does soname belong to library name ("c" matches "libc.so.6", "libc.so")? */
bool rec_soname_matches(const char *lib, const char *soname);

/*
 * Resolve LIB to a path as bcc does: a path with '/', the mappings of pid (when pid > 0), the
 * ld.so cache (lib<LIB>.so*), then an executable in PATH. Returns a new string or NULL (ENOENT).
 */
char *rec_resolve_lib(const char *lib, int pid);

/*
 * Parse and resolve every spec (tracepoints listed, functions and USDT probes enumerated).
 * Prints a one-line error naming the input and returns a negative errno on failure.
 */
int rec_specs__resolve(const struct rec_opts *opts, struct rec_spec **specs, int *nspecs);
void rec_specs__free(struct rec_spec *specs, int nspecs);

/* Mount tracefs when needed; returns its directory, or NULL with errno set. */
const char *rec_tracefs(void);

/* Function symbols of an ELF file matching pattern, as file offsets (deduplicated by offset). */
int rec_elf_functions(const char *path, const struct rec_matcher *m,
		      struct rec_target **targets, uint32_t *n);
/* USDT probes (.note.stapsdt) matching pattern, one target per provider:name. */
int rec_elf_usdt(const char *path, const struct rec_matcher *m, struct rec_target **targets,
		 uint32_t *n);

/* ---- kernel function support (kfunc.c) ------------------------------------------------------ */

enum rec_kfunc_mode {
	REC_KFUNC_NONE = 0,
	REC_KFUNC_KPROBE_MULTI,
	REC_KFUNC_KPROBE,
	REC_KFUNC_FENTRY,
};

/*
 * What this kernel offers for kernel functions; *fentry_err gets fentry's load error (or 0).
 * STKREC_KFUNC=kprobe.multi|kprobe|fentry in the environment forces one (the VM test uses it to
 * exercise each mechanism on one kernel).
 */
enum rec_kfunc_mode rec_kfunc_mode(const char *func, int *fentry_err);
/* "kprobe.multi", "kprobe", "fentry" or "none": the meta key probe.N.mechanism. */
const char *rec_kfunc_mode_name(enum rec_kfunc_mode mode);
/*
 * The targets of a kernel-function spec: the traceable functions (available_filter_functions)
 * matching its pattern, an exact name also from kallsyms (aliases such as __x64_sys_*); matches
 * that cannot be probed go to s->nskipped. More than o->max_kprobes is an error (-E2BIG), as is
 * no match. Errors are printed.
 */
int rec_kfunc_resolve(struct rec_spec *s, const struct rec_opts *o);

/* ---- BPF probes (probe.c: the only file that includes the skeleton) ------------------------ */

struct rec_probe;

/* The map fds and knobs snapshot.c works with. */
struct rec_maps {
	int counts_fd[2];
	int stacks_fd[2];
	int stats_fd;
	volatile uint32_t *gen;
	bool keep_stacks;	/* --offcpu: ids outlive intervals, the drain keeps them */
	uint32_t depth;		/* frames per stack-map value */
	uint32_t stack_entries;	/* stack ids are below it */
	int snoop_drops_fd;	/* --snoop: per-CPU count of events the full ring buffer refused */
	int events_fd;		/* --snoop: the ring buffer of struct stk_event (snoop.c reads it) */
};

/* Open, size, load and attach. Errors are printed; returns NULL with errno set. */
struct rec_probe *rec_probe__open(const struct rec_opts *opts, struct rec_spec *specs, int nspecs,
				  int child_pid);
const struct rec_maps *rec_probe__maps(const struct rec_probe *p);
/* The ring buffer of stk_notify messages; handler called per message. */
int rec_probe__poll(struct rec_probe *p, int timeout_ms);
void rec_probe__set_notify_handler(struct rec_probe *p, int (*fn)(void *ctx, void *data, size_t),
				   void *ctx);
void rec_probe__close(struct rec_probe *p);

/* Number of CPUs sampled (probe nattached for sampling). */
uint32_t rec_probe__nperf(const struct rec_probe *p);
/* the notification ring buffer's epoll fd, readable when messages wait (reader.c). */
int rec_probe__notify_fd(const struct rec_probe *p);

/* ---- processes (procmaps.c) ---------------------------------------------------------------- */

struct rec_procs;

struct rec_procs *rec_procs__new(void);
void rec_procs__free(struct rec_procs *ps);
/*
 * Read /proc/PID now (first seen, exec, or exit-stop). A known process is read again only when
 * force is set (exec) or its start time changed (pid reuse). Returns 0 or -errno.
 */
int rec_procs__note(struct rec_procs *ps, uint32_t pid, bool force);
/*
 * Make sure pid was read: read it now if not (an exited process gets CAP_PROC_F_NO_MAPS and
 * comm). Returns whether its maps are known.
 */
bool rec_procs__ensure(struct rec_procs *ps, uint32_t pid, const char *comm);
/* The processes read since the last call, for a PROCS record; lent until rec_procs__written(). */
void rec_procs__pending(struct rec_procs *ps, struct cap_procs *out);
void rec_procs__written(struct rec_procs *ps);

/* ---- objects and perf maps (objects.c, perfmap.c, procmaps.c) ------------------------------ */

/* Object files behind mappings, held open until written (objects.c). */
struct rec_objects;
struct rec_object;

struct rec_objects *rec_objects__new(void);
void rec_objects__free(struct rec_objects *os);
/*
 * The object of mapping m of pid, opened now through /proc/PID/map_files (or /proc/PID/root,
 * dev/inode checked) and cached by (dev, inode). Sets m's build-id and CAP_MAP_F_NO_BUILD_ID,
 * _PSEUDO_ID, _NS_PATH (other_ns: pid is in another mount namespace). NULL: no object.
 */
struct rec_object *rec_objects__get(struct rec_objects *os, uint32_t pid, struct cap_mapping *m,
				    bool other_ns);
/* Mark obj handed out for writing; false when it was already. */
bool rec_object__queue(struct rec_object *obj);
/*
 * Write an OBJECTS record for each of objs not written yet (by build-id), as the options say
 * (meta key `objects`), and close their descriptors. Returns 0 or a write error.
 */
int rec_objects__put(struct rec_objects *os, struct rec_object *const *objs, uint32_t n,
		     const struct rec_opts *opts, struct cap_writer *w);
/* "symtabs", "none" or "whole": the meta key `objects`. */
const char *rec_objects_mode(const struct rec_opts *opts);

/*
 * The objects hit by the user stacks of iv's rows and not handed out before; *objs is lent until
 * the next call. Returns 0 or -ENOMEM.
 */
int rec_procs__hit_objects(struct rec_procs *ps, const struct cap_interval *iv,
			   struct rec_object ***objs, uint32_t *n);
struct rec_objects *rec_procs__objects(struct rec_procs *ps);
/* Start time and mount-namespace state of a process read before; -ENOENT if not. */
int rec_procs__info(struct rec_procs *ps, uint32_t pid, uint64_t *start_time, bool *other_ns);

/* JIT perf maps (/tmp/perf-PID.map) copied as they grow (perfmap.c). */
struct rec_perfmaps;
struct rec_perfmaps *rec_perfmaps__new(void);
void rec_perfmaps__free(struct rec_perfmaps *pm);
/*
 * Look for the perf maps of iv's processes, read what every known map file gained since the
 * last call and write one PERFMAP record per process with new entries.
 */
int rec_perfmaps__put(struct rec_perfmaps *pm, struct rec_procs *ps, const struct cap_interval *iv,
		      struct cap_writer *w);
/* Parse one perf map line "START SIZE name" (hex); 1 parsed, 0 to skip (malformed). */
int rec_perfmap_line(const char *line, uint64_t *start, uint64_t *size, char *name, size_t nsz);

/*
 * The kernel symbols of a capture (kallsyms.c, format.md 4.10): kallsyms held in memory, read
 * when first needed, and which symbols the capture holds.
 */
struct rec_kallsyms;
/*
 * path: /proc/kallsyms (tests: a file like it). signature: rec_kallsyms_signature (tests: their
 * own), read before each read of path: path is read again when it changed. Reads nothing yet.
 * NULL with errno set.
 */
struct rec_kallsyms *rec_kallsyms__new(const char *path, uint64_t (*signature)(void));
void rec_kallsyms__free(struct rec_kallsyms *k);
/*
 * --all-kallsyms, at the start: read path and write a KSYMS record of every text symbol (with
 * HIDDEN and none under kptr_restrict); they then count as written. 0, -errno of the read or a
 * write error.
 */
int rec_kallsyms__put_all(struct rec_kallsyms *k, struct cap_writer *w);
/*
 * Before iv's INTERVAL or EVENTS record: one KSYMS_ADD record with the symbols iv's kernel
 * stacks hit that the capture does not hold yet (new, or their range changed), or, under
 * kptr_restrict, once with HIDDEN. Reads path the first time, and again when a frame lies
 * outside the kernel image and the signature changed. A failed read is a warning (printed
 * once): frames stay unnamed. Returns 0 or a write error (-ENOMEM).
 */
int rec_kallsyms__put(struct rec_kallsyms *k, const struct cap_interval *iv, struct cap_writer *w);
/* Kernel symbols change when modules or BPF programs come and go: a hash of both. */
uint64_t rec_kallsyms_signature(void);

/* Notification reader thread (reader.c): reads processes as BPF reports them. */
struct rec_reader;
/* Start polling p's ring buffer in a thread; NULL with errno set (the caller then polls). */
struct rec_reader *rec_reader__start(struct rec_probe *p);
/* The lock every rec_procs call and notification handler runs under. Both take NULL. */
void rec_reader__lock(struct rec_reader *rd);
void rec_reader__unlock(struct rec_reader *rd);
/* Handle every notification submitted before the call (takes the lock). */
void rec_reader__sync(struct rec_reader *rd);
void rec_reader__stop(struct rec_reader *rd);

/* Parse one /proc/PID/maps line; returns 1 for an executable mapping, 0 to skip, -EINVAL. */
int rec_maps_line(const char *line, struct cap_mapping *m, char *path, size_t psz);
/* Parse /proc/PID/stat: comm and starttime (clock ticks). */
int rec_stat_line(const char *line, char *comm, size_t csz, uint64_t *start_ticks);

/* ---- snapshot (snapshot.c) ------------------------------------------------------------------ */

struct rec_drain_stats {
	uint64_t losses[CAP_LOSS__COUNT];
	uint64_t events;
	/* --snoop: CAP_LOSS_EVENTS_DROPPED per CPU, lent by the rec_snoop until its next drain */
	uint32_t ncpus;
	uint64_t *cpu_dropped;
};

/*
 * Drain generation g (idle): every count, every stack it references (deduplicated by content),
 * then clear both maps. Fills iv (stacks and rows owned by iv, free with rec_interval_free()).
 */
int rec_drain(const struct rec_maps *maps, unsigned int g, struct cap_interval *iv,
	      struct rec_drain_stats *st);
void rec_interval_free(struct cap_interval *iv);
/* Flip the generation and wait until no program still writes the old one; returns it. */
unsigned int rec_flip(const struct rec_maps *maps);
/* Read and sum the per-CPU stats, returning deltas since the previous call in prev. */
int rec_read_stats(const struct rec_maps *maps, uint64_t *prev, uint64_t *delta, int nstats);

/* Dedupe helper, exposed for tests: index (1-based) of ips in the table, added if new. */
struct rec_stack_table;
struct rec_stack_table *rec_stack_table__new(void);
void rec_stack_table__free(struct rec_stack_table *t);
int rec_stack_table__add(struct rec_stack_table *t, const uint64_t *ips, uint32_t nips,
			 uint32_t flags);
/* Move the stacks out into an array (the table is left empty). */
uint32_t rec_stack_table__take(struct rec_stack_table *t, struct cap_stack **out);

/*
 * Stack ids -> a batch's stack tables, deduplicated by content: the counts of rec_drain() and
 * the --snoop events (snoop.c) share it. A stack-map value is read once per batch for each
 * distinct (generation, id, entry return address), not once per row or event.
 */
struct rec_stacks;
/* Lends maps, which must outlive it. NULL with errno set. */
struct rec_stacks *rec_stacks__new(const struct rec_maps *maps);
void rec_stacks__free(struct rec_stacks *r);
/*
 * One side of row (user: ustack, else kstack) from stack `id` of generation g. ret, when not 0,
 * is the return address at a probed function's entry (stk_key uret/kret), inserted as the
 * second frame unless the unwinder put it there. A missing stack sets CAP_ROW_F_*STACK_LOST; a
 * truncated one counts row->count truncation losses. Returns 0, or -errno of the map lookup.
 */
int rec_stacks__fill(struct rec_stacks *r, unsigned int g, bool user, int32_t id, uint64_t ret,
		     struct cap_row *row);
/* End the batch: its stacks move into iv (owned by iv), its truncation losses into st. */
void rec_stacks__take(struct rec_stacks *r, struct cap_interval *iv, struct rec_drain_stats *st);

/* Count the frames of a stack-map value (it ends at the first zero). */
uint32_t rec_stack_depth(const uint64_t *ips, uint32_t max);

/* ---- kallsyms, metadata ------------------------------------------------------------------- */

/* Parse one /proc/kallsyms line: 1 for a text symbol, 0 to skip, -EINVAL. */
int rec_kallsyms_line(const char *line, uint64_t *addr, char *name, size_t nsz, char *mod,
		      size_t msz);

int rec_meta_build(const struct rec_opts *opts, const struct rec_spec *specs, int nspecs,
		   uint32_t nperf, uint32_t depth, uint64_t mono_ns, const char *pid_filter,
		   struct cap_meta *meta);
void rec_meta_free(struct cap_meta *meta);

/* ---- -- COMMAND (child.c) ------------------------------------------------------------------- */

struct rec_child;

/* Fork COMMAND, held before exec until rec_child__go(). NULL with errno set. */
struct rec_child *rec_child__start(char **argv);
int rec_child__pid(const struct rec_child *c);
int rec_child__go(struct rec_child *c);
/* Handle ptrace stops (reading maps at the exit stop); true once the command has exited. */
bool rec_child__poll(struct rec_child *c, struct rec_procs *procs);
void rec_child__close(struct rec_child *c);

/* ---- per-event mode, --snoop (snoop.c) ------------------------------------------------------ */

struct rec_snoop;

/*
 * Start reading the events ring of p's maps in a thread of its own, so that writing a large
 * interval never stalls the reading. NULL with errno set.
 */
struct rec_snoop *rec_snoop__new(struct rec_probe *p);
void rec_snoop__free(struct rec_snoop *s);
/*
 * At an interval end, after rec_flip() returned g: read what is left in the ring buffer, move
 * the events received since the last drain into iv (an EVENTS batch: rows sorted by time, stacks
 * deduplicated), count ring-buffer drops per CPU into st, and clear generation g's stack map.
 */
int rec_snoop__drain(struct rec_snoop *s, unsigned int g, struct cap_interval *iv,
		     struct rec_drain_stats *st);
/* So many events wait that the batch should be written now (bounded chunk size and memory). */
bool rec_snoop__full(const struct rec_snoop *s);

/* ---- the run (run.c) ------------------------------------------------------------------------ */

/* Set by the SIGINT/SIGTERM handler in main.c. */
extern volatile int rec_stop;

int rec_run(const struct rec_opts *opts);

uint64_t rec_now_ns(void);

#endif /* STK_REC_H */
