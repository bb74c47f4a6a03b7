/* SPDX-License-Identifier: MIT */
/*
 * probe.h: probe/, from the SPECs to attach points: specs parsed and resolved (spec.c, elfsym.c,
 * kfunc.c, match.c, tracefs.c, list.c for -l), sampling events (events.c), the BPF programs
 * loaded and attached (probe.c, funcinfo.c).
 */
#ifndef STK_REC_PROBE_H
#define STK_REC_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stk/capture.h"

#include "../base/base.h"

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

/* ---- BPF probes (probe.c: the only file that includes the skeleton) ------------------------ */

struct rec_probe;

/*
 * Open, size and load the programs, fill the filters; nothing is attached yet. Errors are
 * printed; returns NULL with errno set.
 */
struct rec_probe *rec_probe__open(const struct rec_opts *opts, struct rec_spec *specs, int nspecs,
				  int child_pid);
/* Attach every program of the run: events start. Errors are printed; 0 or -errno. */
int rec_probe__attach(struct rec_probe *p, const struct rec_opts *opts, struct rec_spec *specs,
		      int nspecs);
/* Trace these processes too (-p's descendants, --children). 0 or -errno. */
int rec_probe__trace(struct rec_probe *p, const uint32_t *tgids, uint32_t n);
const struct rec_maps *rec_probe__maps(const struct rec_probe *p);
/* The ring buffer of stk_notify messages; handler called per message. */
int rec_probe__poll(struct rec_probe *p, int timeout_ms);
void rec_probe__set_notify_handler(struct rec_probe *p, int (*fn)(void *ctx, void *data, size_t),
				   void *ctx);
void rec_probe__close(struct rec_probe *p);

/* Number of CPUs sampled (probe nattached for sampling). */
uint32_t rec_probe__nperf(const struct rec_probe *p);
/* the notification ring buffer's epoll fd, readable when messages wait (proc/reader.c). */
int rec_probe__notify_fd(const struct rec_probe *p);
/* The ring of Python code objects met first (STK_NOTIFY_PYCODE), for rec_python__watch(). */
int rec_probe__pycode_fd(const struct rec_probe *p);
/* The map of interpreter executables (struct stk_pyexe), for rec_python__exes(). */
int rec_probe__pyexes_fd(const struct rec_probe *p);
/* Readable when BPF said a map is over half full, until rec_probe__fill_seen(). */
int rec_probe__fill_fd(const struct rec_probe *p);
void rec_probe__fill_seen(struct rec_probe *p);

/* ---- map fill (probe.c) ------------------------------------------------------------------- */

/*
 * The new entries of one generation at which a map of `entries` is over half full: time for an
 * early drain, while a burst still has room. BPF wakes stkrec there (STK_NOTIFY_FILL).
 */
uint64_t rec_half_full(uint32_t entries);

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

#endif /* STK_REC_PROBE_H */
