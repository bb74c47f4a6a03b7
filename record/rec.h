/* SPDX-License-Identifier: MIT */
/*
 * rec.h: internal interfaces of record/ (stkrec). Nothing outside record/ and tests/unit/rec_*
 * includes it.
 */
#ifndef STK_REC_H
#define STK_REC_H

#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stk/abi.h"
#include "stk/capture.h"
#include "stk/elfobj.h"

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
	uint64_t c_value;	/* -c as given: a period, or with a SPEC a CPU (opts.c) */
	bool c_given;
	int cpu;		/* -C, -1 for all */
	bool include_idle;
	uint32_t stack_storage_size;
	uint32_t hash_storage_size;
	uint32_t defer_ring_bytes;	/* the deferred-walk ring (docs/bpf.md 7): size_storage() */
	bool quiet;
	const char *event;	/* -e EVENT (sampling), NULL: cpu-clock */
	bool snoop;		/* --snoop: per-event records (EVENTS chunks) */
	uint32_t ringbuf_mb;	/* --ringbuf-size: the --snoop ring buffer, all CPUs */
	bool offcpu;		/* --offcpu: blocked time per stack, in microseconds */
	uint64_t min_block_us, max_block_us;
	bool offcpu_filter_given;	/* -m, -M, -u, -k or --state: --offcpu only */
	bool list;		/* -l: print the SPECs' targets, record nothing (list.c) */
	uint32_t threads;	/* -u, -k: enum stk_threads */
	int64_t state;		/* --state MASK (bcc offcputime), -1: any */
	uint32_t unwind;	/* --unwind: enum stk_unwind */
	uint32_t unwind_mb;	/* --unwind-memory: the CFI tables' rows, all objects */
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

/* "fp", "cfi" or "auto": --unwind's spelling and the meta key `unwind`. */
const char *rec_unwind_mode_name(uint32_t mode);

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
/* stkrec -l: print the targets of o's SPECs (none: every tracepoint), one per line (list.c). */
int rec_list(const struct rec_opts *o);
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

/* ---- unwind tables for BPF (unwind.c) ------------------------------------------------------ */

/* The tables the BPF walker reads: one per build-id, and each process's mappings. */
struct rec_maps;
struct rec_unwind;
struct rec_utable;

struct rec_unwind_stats {
	uint32_t objects;	/* tables built (one per build-id) */
	uint32_t over_limit;	/* objects whose table did not fit --unwind-memory */
	uint32_t rows;		/* rows of the tables in BPF */
	uint32_t chunks;	/* arrays of unwind_chunks created */
	uint32_t chunk_rows;	/* their rows together */
	uint64_t build_ns;	/* time spent building tables */
	uint64_t published;	/* process mapping lists written to BPF */
};

/* NULL with --unwind fp (every call below takes NULL and does nothing). */
struct rec_unwind *rec_unwind__new(const struct rec_opts *o);
/* The size of the unwind_chunks map for o: the most chunks --unwind-memory can hold. */
uint32_t rec_unwind_slots(const struct rec_opts *o);
void rec_unwind__free(struct rec_unwind *u);
/* The BPF maps exist now (after load, before attach): tables and processes can go in. */
void rec_unwind__attach(struct rec_unwind *u, const struct rec_maps *maps);
/* The table of object e with this build-id, built on first use. NULL: none can be built. */
struct rec_utable *rec_unwind__table(struct rec_unwind *u, Elf *e, const uint8_t *build_id,
				     uint32_t len);
/* An address the walker met in none of a process's known mappings (0: none). */
struct rec_miss {
	uint64_t addr;
	uint64_t ts_ns;		/* when (CLOCK_MONOTONIC, as bpf_ktime_get_ns()) */
};

/* A read of a process's executable mappings, for rec_unwind__proc(). */
struct rec_uread {
	const struct cap_mapping *maps;	/* sorted by start */
	struct rec_utable *const *tables;	/* tables[i]: the table of maps[i], or NULL */
	uint32_t n;
	uint64_t read_ns;	/* when /proc/PID/maps was opened: a mapping made before is in maps */
	uint64_t image_ns;	/* the image maps are of: when its exec or fork was seen, 0 if never */
	struct rec_miss miss;	/* what the read was asked for */
};

/*
 * Write pid's mappings to the walker's map, uploading tables the first time one is used. A
 * missed address in none of these mappings either settles the process (struct stk_uproc),
 * unless the process exec'd since the walker met it. 0 or -errno.
 */
int rec_unwind__proc(struct rec_unwind *u, uint32_t pid, const struct rec_uread *rd);
/*
 * Before pid's first rec_unwind__proc(): rd is the image the one to be written replaced (of a
 * forked child that exec'd before stkrec read it: a copy of its parent's mappings, from the
 * kernel's fork record). Never written to BPF: rec_unwind__walk() walks a deferred event in it
 * when the event is stamped before the current image and its leaf is in none of the current
 * mappings. Nothing is done when the walker has an image of pid already. 0 or -errno.
 */
int rec_unwind__old_image(struct rec_unwind *u, uint32_t pid, const struct rec_uread *rd);
const struct rec_unwind_stats *rec_unwind__stats(const struct rec_unwind *u);
/* pid exited: drop its mappings, here and in BPF. */
void rec_unwind__forget(struct rec_unwind *u, uint32_t pid);
/* Were pid's mappings last written to BPF read at or after ns (CLOCK_MONOTONIC)? */
bool rec_unwind__read_since(const struct rec_unwind *u, uint32_t pid, uint64_t ns);
/*
 * Walk a deferred event's user stack (struct stk_deferred) by the BPF walker's rules, with the
 * mappings last written for its process, into ips (at most max frames). Returns the number of
 * frames; *stop says why the walk ended (enum stk_stop), *missing the address in no known
 * mapping when stkrec should look for it (STK_MISS_ASKS(): a leaf guess's too, with
 * STK_STOP_BAD_FRAME).
 */
uint32_t rec_unwind__walk(const struct rec_unwind *u, const struct stk_deferred *d,
			  uint64_t *ips, uint32_t max, uint32_t *stop, uint64_t *missing);

/* ---- BPF probes (probe.c: the only file that includes the skeleton) ------------------------ */

struct rec_probe;

/* The map fds and knobs snapshot.c works with. */
struct rec_maps {
	int counts_fd[2];
	int stacks_fd[2];
	int stats_fd;
	/* in the mmapped .bss (bpf/stkrec.bpf.c): */
	volatile uint32_t *gen_seq;	/* flips; the generation counting is gen_seq & 1 */
	volatile uint32_t *drained_seq;	/* set at each drain: late programs report themselves */
	volatile uint64_t *retries_pending;	/* events counted at their task's return to user */
	volatile uint64_t *nstacks;	/* [2]: stacks stored per generation since its drain */
	volatile uint64_t *nkeys;	/* [2]: count keys inserted per generation */
	bool offcpu;		/* --offcpu: stacks_fd[1] is stacks0, shared by both generations */
	uint32_t depth;		/* frames per stored stack */
	uint32_t stack_entries;	/* capacity of each stacks map */
	uint32_t count_entries;	/* capacity of each counts map */
	int snoop_drops_fd;	/* --snoop: per-CPU count of events the full ring buffer refused */
	int events_fd;		/* --snoop: the ring buffer of struct stk_event (snoop.c reads it) */
	int deferred_fd;	/* ring buffer of struct stk_deferred (-1: no deferral) */
	uint32_t unwind;	/* enum stk_unwind */
	int unwind_procs_fd;	/* tgid -> struct stk_uproc */
	int exec_ns_fd;		/* tgid -> time of its last exec */
	int unwind_chunks_fd;	/* slot -> array of rows (record/unwind.c creates them) */
	uint32_t unwind_chunks_cap;	/* slots */
};

/*
 * Open, size and load the programs, fill the filters; nothing is attached yet. Errors are
 * printed; returns NULL with errno set.
 */
struct rec_probe *rec_probe__open(const struct rec_opts *opts, struct rec_spec *specs, int nspecs,
				  int child_pid);
/* Attach every program of the run: events start. Errors are printed; 0 or -errno. */
int rec_probe__attach(struct rec_probe *p, const struct rec_opts *opts, struct rec_spec *specs,
		      int nspecs);
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
/* Readable when BPF said a map is over half full, until rec_probe__fill_seen(). */
int rec_probe__fill_fd(const struct rec_probe *p);
void rec_probe__fill_seen(struct rec_probe *p);

/* ---- processes (procmaps.c) ---------------------------------------------------------------- */

struct rec_procs;

/* unwind: where each process read goes for the BPF walker (NULL with --unwind fp). */
struct rec_procs *rec_procs__new(struct rec_unwind *unwind);
void rec_procs__free(struct rec_procs *ps);
/* Why a process is read (rec_procs__note). */
enum rec_read_why {
	REC_READ_IF_NEW,	/* only if not read yet, or the pid now names another process */
	REC_READ_AGAIN,		/* first seen by BPF, exec, exit stop: the mappings may differ */
	REC_READ_MISS,		/* the walker missed an address (rec_procs__recheck) */
};

/* Read /proc/PID now, as why says. Returns 0 or -errno. */
int rec_procs__note(struct rec_procs *ps, uint32_t pid, enum rec_read_why why);
/*
 * The unwinder missed an address in pid's mappings: read the process again. If the address is
 * in none of the mappings read now either, the process is settled (struct stk_uproc) and BPF
 * stops asking. Returns 0 or -errno.
 */
int rec_procs__recheck(struct rec_procs *ps, uint32_t pid, const struct rec_miss *miss);
/*
 * Make sure pid was read: read it now if not (an exited process gets CAP_PROC_F_NO_MAPS and
 * comm). Returns whether its maps are known.
 */
bool rec_procs__ensure(struct rec_procs *ps, uint32_t pid, const char *comm);
/*
 * Which part of iv each row goes in (part[i], iv->nrows entries), for rows of one process named
 * by two images (an exec, or a new process at the pid, during the interval): a part holds at
 * most one image of a process, in time order. when[i]: the row's struct stk_key image_ns, or
 * with --snoop its event's time. Returns the number of parts (1: no split), or -ENOMEM.
 */
int rec_procs__split(struct rec_procs *ps, const struct cap_interval *iv, const uint64_t *when,
		     uint32_t *part);
/*
 * The process records to write before part p of the interval (rec_procs__split): changed
 * processes (part 0) and the images whose rows the part holds. Lent until the next call.
 */
void rec_procs__pending(struct rec_procs *ps, uint32_t p, struct cap_procs *out);
/*
 * The records of part p are written: call it under the same hold of the reader's lock as
 * rec_procs__pending(), so that a change the reader makes meanwhile is not taken as written.
 */
void rec_procs__written(struct rec_procs *ps, uint32_t p);
/* Every part of the interval is written. */
void rec_procs__split_done(struct rec_procs *ps);
/*
 * What the kernel's records say (mmaps.c), ns: when it happened (CLOCK_MONOTONIC). A record
 * older than the process's last /proc read or exec changes nothing.
 */
void rec_procs__mapped(struct rec_procs *ps, uint32_t pid, const struct cap_mapping *m,
		       uint64_t ns);
void rec_procs__exec(struct rec_procs *ps, uint32_t pid, const char *comm, uint64_t ns);
/*
 * BPF's exec notification: the image pid ran until ns (struct stk_key image_ns of the new one)
 * has ended, whichever of this and rec_procs__exec() comes first. Call before reading it again.
 */
void rec_procs__exec_seen(struct rec_procs *ps, uint32_t pid, uint64_t ns);
/* A new process: it starts with its parent's mappings. */
void rec_procs__forked(struct rec_procs *ps, uint32_t pid, uint32_t ppid, uint64_t ns);
void rec_procs__exited(struct rec_procs *ps, uint32_t pid);
/*
 * Whether every record is applied: true once mmaps.c follows the kernel's records, false for
 * good after one is lost. While true, a process followed since its fork, exec or /proc read is
 * not read again when BPF first sees it (rec_procs__note).
 */
void rec_procs__follow(struct rec_procs *ps, bool whole);
/*
 * Give the BPF walker the mappings the records changed; the records up to known_ns are all
 * applied (struct rec_uread's read_ns).
 */
void rec_procs__publish(struct rec_procs *ps, uint64_t known_ns);
/*
 * Around a batch of notifications: their /proc reads open the objects, and the walker gets the
 * processes, with the unwind tables they need built, at the release. Building a table first
 * (cc1's: 57-350 ms) kept the next process of the batch unread, and one that exited meanwhile
 * lost every event (35-98 of them in a profile of compile loops started beside them).
 */
void rec_procs__hold(struct rec_procs *ps);
void rec_procs__release(struct rec_procs *ps);
/*
 * After each interval is written: drop the entries of processes whose exit was seen before the
 * previous call (every event they had is drained, their record written). Keeps the table as
 * small as the live processes.
 */
void rec_procs__retire(struct rec_procs *ps);
/* The process table over the recording (stkrec's exit summary). */
struct rec_procs_stats {
	uint64_t entries;	/* entries made: processes followed (a pid again once its entry went) */
	uint64_t retired;	/* dropped after their exit */
	uint32_t held;		/* entries now */
};
void rec_procs__stats(const struct rec_procs *ps, struct rec_procs_stats *st);

/* ---- objects and perf maps (objects.c, perfmap.c, procmaps.c) ------------------------------ */

/* Object files behind mappings, held open until written (objects.c). */
struct rec_objects;
struct rec_object;

struct rec_objects *rec_objects__new(struct rec_unwind *unwind);
void rec_objects__free(struct rec_objects *os);
/* Look for debug files in d instead of this host's places (tests). */
void rec_objects__set_debug_dirs(struct rec_objects *os, const struct elfobj_debug_dirs *d);
/*
 * The object of mapping m of pid, opened now through /proc/PID/map_files (or /proc/PID/root,
 * dev/inode checked) and cached by (dev, inode). Sets m's build-id and CAP_MAP_F_NO_BUILD_ID,
 * _PSEUDO_ID, _NS_PATH (other_ns: pid is in another mount namespace). NULL: no object.
 */
struct rec_object *rec_objects__get(struct rec_objects *os, uint32_t pid, struct cap_mapping *m,
				    bool other_ns);
/* The unwind table of obj, built now if this is the first time it is asked for; or NULL. */
struct rec_utable *rec_object__utable(struct rec_objects *os, struct rec_object *obj);
/*
 * Mark obj handed out for writing (before rec_objects__put()); false when it was already. Builds
 * its unwind table if still due, before its descriptor is closed.
 */
bool rec_object__queue(struct rec_objects *os, struct rec_object *obj);
/* Whether obj's file was deleted or replaced: maps said so, or at its queueing it had no link. */
bool rec_object__deleted(const struct rec_object *obj);
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
			   const uint64_t *when, struct rec_object ***objs, uint32_t *n);
struct rec_objects *rec_procs__objects(struct rec_procs *ps);
/* What stkrec learnt of a process when it read it (it may be gone since). */
struct rec_proc_info {
	uint64_t start_time;
	bool other_ns;		/* another mount namespace than stkrec's */
	uint32_t uid;		/* its fsuid, whose files it may hand stkrec; ~0u unknown */
};
int rec_procs__info(struct rec_procs *ps, uint32_t pid, struct rec_proc_info *info);

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

/*
 * Kernel addresses named by the kernel (ksymname.c, bpf/ksyms.bpf.c): the default, instead of
 * reading kallsyms. NULL with errno set where the program does not load, or EPERM where
 * kptr_restrict hides kernel addresses (then kallsyms is read).
 */
struct rec_ksymname;
struct rec_ksym_named {
	uint64_t addr, size;	/* the symbol's range; size 0: no symbol holds the address */
	char name[STK_KSYMNAME_TEXT];
	char module[64];	/* "" for none */
};
struct rec_ksymname *rec_ksymname__open(void);
void rec_ksymname__close(struct rec_ksymname *kn);
/* Is addr in the kernel image's text (_stext to _etext)? */
bool rec_ksymname__in_image(const struct rec_ksymname *kn, uint64_t addr);
/* Name addrs[0, n) (n <= STK_KSYMNAME_BATCH) into out[]. 0 or -errno of the run. */
int rec_ksymname__name(struct rec_ksymname *kn, const uint64_t *addrs, uint32_t n,
		       struct rec_ksym_named *out);
/* One "%pS" text of addr ("name+0xOFF/0xSIZE [module]"): 1 named, 0 none ("0x..."), -EINVAL. */
int rec_ksymname_parse(const char *text, uint64_t addr, struct rec_ksym_named *s);
/* From now on rec_kallsyms__put() asks kn instead of reading kallsyms; k owns kn. */
void rec_kallsyms__use_names(struct rec_kallsyms *k, struct rec_ksymname *kn);

/* Notification reader thread (reader.c): reads processes as BPF reports them. */
struct rec_reader;
struct rec_mmaps;
/*
 * Start polling p's ring buffer and mm's records (NULL: none) into ps in a thread; NULL with
 * errno set (the caller then polls).
 */
struct rec_reader *rec_reader__start(struct rec_probe *p, struct rec_mmaps *mm,
				     struct rec_procs *ps);
/* The lock every rec_procs call and notification handler runs under. Both take NULL. */
void rec_reader__lock(struct rec_reader *rd);
void rec_reader__unlock(struct rec_reader *rd);
/* Handle every notification submitted before the call (takes the lock). */
void rec_reader__sync(struct rec_reader *rd);
/* With the lock held: apply the kernel's mmap records made so far (rec_mmaps__consume). */
void rec_reader__catch_up(struct rec_reader *rd);
/*
 * Apply mm's records (NULL: none), then handle p's notifications, waiting up to timeout_ms for
 * the first, as one batch (rec_procs__hold): the reader thread's work, and the main loop's
 * when there is no thread.
 */
void rec_notifications__handle(struct rec_probe *p, struct rec_mmaps *mm, struct rec_procs *ps,
			       int timeout_ms);
void rec_reader__stop(struct rec_reader *rd);

/* Parse one /proc/PID/maps line; returns 1 for an executable mapping, 0 to skip, -EINVAL. */
int rec_maps_line(const char *line, struct cap_mapping *m, char *path, size_t psz);
/* m's kind and DELETED flag from its path, which loses a " (deleted)" suffix. */
void rec_mapping_path(struct cap_mapping *m, char *path);
/* The process of thread tid (/proc/TID/status), 0 when it is gone. */
uint32_t rec_tgid_of(uint32_t tid);
/* Parse /proc/PID/stat: comm and starttime (clock ticks). */
int rec_stat_line(const char *line, char *comm, size_t csz, uint64_t *start_ticks);

/*
 * The kernel's mmap2, exec, fork and exit records of every process (mmaps.c), read by the
 * reader thread into rec_procs. NULL with errno set (stkrec then has /proc reads only).
 */
struct rec_mmaps *rec_mmaps__new(void);
void rec_mmaps__free(struct rec_mmaps *mm);
/* Readable (epoll) when records wait; -1 for NULL. */
int rec_mmaps__fd(const struct rec_mmaps *mm);
/* Apply every record waiting, in time order. 0 or -errno. */
int rec_mmaps__consume(struct rec_mmaps *mm, struct rec_procs *ps);
/* Records the kernel dropped because a ring was full. */
uint64_t rec_mmaps__lost(const struct rec_mmaps *mm);

/* ---- snapshot (snapshot.c) ------------------------------------------------------------------ */

struct rec_drain_stats {
	uint64_t losses[CAP_LOSS__COUNT];
	uint64_t events;
	/* --snoop: CAP_LOSS_EVENTS_DROPPED per CPU, lent by the rec_snoop until its next drain */
	uint32_t ncpus;
	uint64_t *cpu_dropped;
};

/*
 * Flip the generation, wait until no program still writes the old one, mark it as being
 * drained (programs that still count into it report themselves); returns it.
 */
unsigned int rec_flip(const struct rec_maps *maps);
/*
 * The new entries of one generation at which a map of `entries` is over half full: time for an
 * early drain, while a burst still has room. BPF wakes stkrec there (STK_NOTIFY_FILL).
 */
uint64_t rec_half_full(uint32_t entries);
/* Is the counting generation's stacks or counts map over half full? */
bool rec_maps__filling(const struct rec_maps *maps);
/* Read and sum the per-CPU stats, returning deltas since the previous call in prev. */
int rec_read_stats(const struct rec_maps *maps, uint64_t *prev, uint64_t *delta, int nstats);
void rec_interval_free(struct cap_interval *iv);

/* Dedupe helper, exposed for tests: index (1-based) of ips in the table, added if new. */
struct rec_stack_table;
struct rec_stack_table *rec_stack_table__new(void);
void rec_stack_table__free(struct rec_stack_table *t);
int rec_stack_table__add(struct rec_stack_table *t, const uint64_t *ips, uint32_t nips,
			 uint32_t flags);
/* Move the stacks out into an array (the table is left empty). */
uint32_t rec_stack_table__take(struct rec_stack_table *t, struct cap_stack **out);

/*
 * Stack hashes -> a batch's stack tables, deduplicated by content: the counts of rec_counts and
 * the --snoop events (snoop.c) share it. A stack's content is read from BPF once per batch
 * (with --offcpu, once per run).
 */
struct rec_stacks;
/* Lends maps, which must outlive it. NULL with errno set. */
struct rec_stacks *rec_stacks__new(const struct rec_maps *maps);
void rec_stacks__free(struct rec_stacks *r);
/* Read and delete every stack of generation g's map (idle) into the cache. 0 or -errno. */
int rec_stacks__collect(struct rec_stacks *r, unsigned int g);
/*
 * One side of row (user: ustack, else kstack) from the stack with hash id of generation g, or
 * the reason there is none (err: 0, STK_STACK_* or -errno, from the key). ret, when not 0, is
 * the return address at a probed function's entry (stk_key uret/kret), inserted as the second
 * frame unless the unwinder put it there. A lost stack sets CAP_ROW_F_*STACK_LOST; a truncated
 * or cut one counts row->count losses of its kind. Returns 0, or -errno of the map lookup.
 */
int rec_stacks__fill(struct rec_stacks *r, unsigned int g, bool user, uint64_t id, int32_t err,
		     uint64_t ret, struct cap_row *row);
/*
 * row's user stack from a walk stkrec did itself (a deferred event): ips[0..n), ended for
 * reason stop (enum stk_stop), counted as a loss of that kind when it is one. 0 or -ENOMEM.
 */
int rec_stacks__fill_walked(struct rec_stacks *r, const uint64_t *ips, uint32_t n,
			    uint32_t stop, struct cap_row *row);
/* End the batch: its stacks move into iv (owned by iv), its losses into st. */
void rec_stacks__take(struct rec_stacks *r, struct cap_interval *iv, struct rec_drain_stats *st);

/* row's fields from BPF's key (no stacks yet), the row counting count events. */
void rec_row_from_key(struct cap_row *row, const struct stk_key *k, uint64_t count);

/* The counts of one interval, gathered over one or more drains (snapshot.c). */
struct rec_counts;
struct rec_counts *rec_counts__new(const struct rec_maps *maps);
void rec_counts__free(struct rec_counts *c);
/* After rec_flip() returned g: move g's counts and stacks out of BPF (both maps end empty). */
int rec_counts__drain(struct rec_counts *c, unsigned int g);
/*
 * Count key count times (--offcpu: microseconds), for a deferred event (bpf stkrec.bpf.c
 * defer_event()) whose user stack stkrec walked: ips[0..n), ended for reason stop (enum
 * stk_stop). Its kernel stack is still in generation g's stacks map, or cached. 0 or -errno.
 */
int rec_counts__add_walked(struct rec_counts *c, const struct stk_key *key, unsigned int g,
			   uint64_t count, const uint64_t *ips, uint32_t n, uint32_t stop);
/*
 * The interval so far into iv (rows merged by key, owned by iv), each row's image stamp (struct
 * stk_key image_ns) into *images (malloc'ed, iv->nrows entries, the caller frees it); its losses
 * into st. 0 or -ENOMEM (nothing taken).
 */
int rec_counts__take(struct rec_counts *c, struct cap_interval *iv, uint64_t **images,
		     struct rec_drain_stats *st);

/* ---- CFI unwind tables (cfi.c) ------------------------------------------------------------ */

/* Why a DWARF row became STK_CFA_UNSUPPORTED: the first of these that applies. */
enum rec_cfi_why {
	REC_CFI_WHY_RA = 0,	/* return address elsewhere than at CFA - 8 (and not undefined) */
	REC_CFI_WHY_CFA_REG,	/* CFA from a register other than rsp and rbp, or no CFA rule */
	REC_CFI_WHY_CFA_OFF,	/* CFA offset outside 0..65535 (-32768..32767 for DRAP) */
	REC_CFI_WHY_CFA_EXPR,	/* CFA expression of none of the shapes a row holds */
	REC_CFI_WHY_RBP,	/* rbp neither unchanged nor in an 8-byte slot (s8 words) of CFA or rbp */
	REC_CFI_WHY__COUNT
};

/* Where a table's CFI came from (rec_cfi.sources). */
#define REC_CFI_SRC_EH_FRAME 0x1	/* the .eh_frame section */
#define REC_CFI_SRC_EH_FRAME_HDR 0x2	/* .eh_frame found by PT_GNU_EH_FRAME: no section headers */
#define REC_CFI_SRC_DEBUG_FRAME 0x4	/* the .debug_frame section */

/*
 * The compact unwind table of one x86-64 object (include/stk/abi.h): rows sorted by pc, each
 * valid up to the next row, consecutive rows never equal (kind, cfa_off, rbp_off). rows[0].pc is
 * 0; every address no FDE covers is in a STK_CFA_GAP row, and the last row is one.
 */
struct rec_cfi {
	uint64_t base;		/* ELF virtual address that rows[].pc counts from */
	uint32_t nrows;
	struct stk_urow *rows;
	/* What building it found, for a summary (filled on errors too). */
	uint32_t sources;	/* REC_CFI_SRC_* */
	uint32_t nfdes;		/* FDEs whose rules are in the table */
	uint32_t nfdes_overlap;	/* FDEs starting inside an earlier one: clipped, or dropped */
	uint32_t nfdes_dropped;	/* empty FDEs, or outside every executable segment */
	uint32_t nbad;		/* malformed entries skipped: CIEs, FDEs (their range is a gap) */
	uint32_t ndwarf_rows;	/* rows the FDEs' instructions gave, before merging */
	uint32_t kinds[STK_CFA__COUNT];	/* rows of the table per enum stk_cfa */
	uint32_t why[REC_CFI_WHY__COUNT];	/* DWARF rows per reason they are unsupported */
};

/*
 * Build the table of e from its .eh_frame (through PT_GNU_EH_FRAME when it has no .eh_frame
 * section: no section headers) and its .debug_frame, .eh_frame winning where both cover an
 * address (record/cfi.c says how overlapping FDEs are resolved), and rules for an _init and
 * _fini without CFI. e's data is not referenced after the call.
 * Returns 0; -ENOENT when e has no CFI for its code; -EBADMSG when it has some but none usable;
 * -E2BIG when the table would have more than max_rows rows, or cover more than 4 GiB; -ENOTSUP
 * when e is not an x86-64 executable or shared object (ELFCLASS64, EM_X86_64, not ET_REL);
 * -ENOMEM. On error out has no rows, only statistics.
 * Thread safety: one call per Elf at a time (libelf's rules).
 */
int rec_cfi__build(Elf *e, uint32_t max_rows, struct rec_cfi *out);
/* Free t's rows (t itself is the caller's); takes NULL. */
void rec_cfi__free(struct rec_cfi *t);
/* The row covering ELF virtual address vaddr, lent by t; NULL below the first row. */
const struct stk_urow *rec_cfi__lookup(const struct rec_cfi *t, uint64_t vaddr);

/* ---- BTF function info of a loaded program (funcinfo.c) --------------------------------- */

struct bpf_insn;
struct bpf_func_info;
struct btf;
/*
 * The BTF func_info of a loaded program's final instructions (insns, n: bpf_program__insns()),
 * to load copies of it with bpf_prog_load(): a record per subprogram, its type found by
 * matching it to a function of the object's .text (elf: the object's ELF, btf: its BTF as
 * loaded; main_name: the program's function). *out is malloc()ed, *nout records. 0; -ENOENT
 * when a subprogram matches no function, -EINVAL for an ELF without .text or .symtab, -ENOMEM.
 */
int rec_func_info(const void *elf, size_t elf_size, const struct btf *btf, const char *main_name,
		  const struct bpf_insn *insns, size_t n, struct bpf_func_info **out,
		  uint32_t *nout);

/* ---- kallsyms, metadata ------------------------------------------------------------------- */

/* Parse one /proc/kallsyms line: 1 for a text symbol, 0 to skip, -EINVAL. */
int rec_kallsyms_line(const char *line, uint64_t *addr, char *name, size_t nsz, char *mod,
		      size_t msz);

int rec_meta_build(const struct rec_opts *opts, const struct rec_spec *specs, int nspecs,
		   uint32_t nperf, uint32_t depth, uint64_t mono_ns, const char *pid_filter,
		   struct cap_meta *meta);
void rec_meta_free(struct cap_meta *meta);

/* ---- deferred events (defer.c) ------------------------------------------------------------- */

/*
 * The consumer of BPF's deferred events (struct stk_deferred): walks their user stacks in user
 * space and counts them into counts. NULL (errno unchanged) when the run defers nothing
 * (maps->deferred_fd < 0: --unwind fp, --snoop, --offcpu), or with errno set.
 */
struct rec_defer;
struct rec_snoop;
/* Walked events go to counts, or with --snoop to snoop (the other NULL). */
struct rec_defer *rec_defer__new(const struct rec_maps *maps, struct rec_procs *procs,
				 struct rec_unwind *unwind, struct rec_counts *counts,
				 struct rec_snoop *snoop, struct rec_reader *reader);
void rec_defer__free(struct rec_defer *df);
/* Count every deferred event in the ring now (main thread only). Takes NULL. 0 or -errno. */
int rec_defer__consume(struct rec_defer *df);
/* Readable when deferred events wait (an epoll fd); -1 for NULL. */
int rec_defer__fd(const struct rec_defer *df);

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
 * After rec_flip() returned g: read what is left in the ring buffer (every event of g), then
 * move g's stacks out of BPF. 0 or -errno.
 */
int rec_snoop__drain(struct rec_snoop *s, unsigned int g);
/*
 * At an interval end, after rec_snoop__drain(): move the events received since the last take
 * into iv (an EVENTS batch: rows sorted by time, stacks deduplicated), and count ring-buffer
 * drops per CPU into st.
 */
int rec_snoop__take(struct rec_snoop *s, struct cap_interval *iv, struct rec_drain_stats *st);
/* Record a deferred event (defer.c) whose user stack stkrec walked: ips[0..n), stop. */
int rec_snoop__add_walked(struct rec_snoop *s, const struct stk_deferred *d, const uint64_t *ips,
			  uint32_t n, uint32_t stop);
/* So many events wait that the batch should be written now (bounded chunk size and memory). */
bool rec_snoop__full(const struct rec_snoop *s);

/* ---- the run (run.c) ------------------------------------------------------------------------ */

/* Set by the SIGINT/SIGTERM handler in main.c. */
extern volatile int rec_stop;

int rec_run(const struct rec_opts *opts);

uint64_t rec_now_ns(void);
/*
 * pthread_create() with every signal blocked in the new thread: SIGINT, SIGTERM and a -- COMMAND
 * child's SIGCHLD interrupt the main loop's wait, which a helper thread taking them would leave
 * asleep until its next look. 0 or pthread_create's error.
 */
int rec_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);
/* Make eventfd fd readable (a wake-up, or a request to stop). */
void rec_eventfd_signal(int fd);
/*
 * Room for element n of the array *arrayp (a pointer to the array pointer) of *cap elements of
 * sz bytes: doubles it when full, from first. 0, or -ENOMEM with the array unchanged.
 */
int rec_grow(void *arrayp, uint32_t n, uint32_t *cap, size_t sz, uint32_t first);

#endif /* STK_REC_H */
