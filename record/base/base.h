/* SPDX-License-Identifier: MIT */
/*
 * base.h: what every room of record/ shares: the options (parsed by ../opts.c), the BPF maps as
 * user space sees them (filled by probe/probe.c), messages, the clock, threads and growing
 * arrays. It includes no other header of record/.
 */
#ifndef STK_REC_BASE_H
#define STK_REC_BASE_H

#include <limits.h>
#include <pthread.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- options (record/opts.c) ----------------------------------------------------------- */

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
	uint64_t c_value;	/* -c as given: a period, or with a SPEC a CPU (record/opts.c) */
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
	bool list;		/* -l: print the SPECs' targets, record nothing (probe/list.c) */
	uint32_t threads;	/* -u, -k: enum stk_threads */
	int64_t state;		/* --state MASK (bcc offcputime), -1: any */
	uint32_t unwind;	/* --unwind: enum stk_unwind */
	uint32_t unwind_mb;	/* --unwind-memory: the CFI tables' rows, all objects */
	uint32_t python_frames;	/* --python-frames: enum rec_pyframes (python/python.h) */
	uint32_t python_names;	/* --python-names: code objects named at most */
	bool no_symtabs;	/* --no-symtabs */
	bool embed_objects;	/* --embed-objects */
	bool all_kallsyms;	/* --all-kallsyms: a whole KSYMS snapshot at the start */
	uint32_t max_kprobes;	/* --max-kprobes */
	/* always on (write/output.c) */
	const char *rotate;	/* --rotate as given (meta key rotate), NULL: no rotation */
	uint64_t rotate_ns;	/* --rotate SECS: a new file every SECS (0: not by time) */
	uint64_t rotate_bytes;	/* --rotate SIZE: a new file past SIZE (0: not by size) */
	uint32_t max_files;	/* --max-files N, 0: no bound */
	uint64_t max_disk;	/* --max-disk SIZE, 0: no bound */
	uint32_t flight_s;	/* --flight SECS, 0: off */
	uint32_t flight_mb;	/* --flight-memory MB */
	bool dump_on_exit;	/* --dump-on-exit: --flight dumps once more at the end */
	int nspecs;
	char **specs;		/* borrowed from argv */
	char **command;		/* NULL-terminated, borrowed from argv; NULL without -- */
	bool children;		/* --children */
	bool no_inherit;	/* --no-inherit */
	bool inherit;		/* follow the descendants of -p's processes or of COMMAND */
	int argc;
	char **argv;
};

/* ---- messages (base.c) ----------------------------------------------------------------- */

/* Print `stkrec: MESSAGE` on stderr; returns err so callers can `return rec_err(-E, ...)`. */
int rec_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- BPF maps (filled by probe/probe.c) ------------------------------------------------ */

/* The map fds and knobs write/snapshot.c works with. */
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
	int unwind_chunks_fd;	/* slot -> array of rows (unwind/unwind.c creates them) */
	uint32_t unwind_chunks_cap;	/* slots */
};

/* ---- clock, threads, arrays (base.c) --------------------------------------------------- */

uint64_t rec_now_ns(void);
/*
 * pthread_create() with every signal blocked in the new thread: SIGINT, SIGTERM and a -- COMMAND
 * child's SIGCHLD interrupt the main loop's wait, which a helper thread taking them would leave
 * asleep until its next look. 0 or pthread_create's error.
 */
int rec_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);
/*
 * Give the calling thread the highest priority of the normal scheduling class (nice -20), for a
 * thread that only takes records out of a ring the kernel fills (the deferred events'): late, it
 * loses records; its work is a copy of what the kernel hands it. Without the privilege
 * (CAP_SYS_NICE) the thread keeps its priority.
 */
void rec_thread_urgent(void);
/* Make eventfd fd readable (a wake-up, or a request to stop). */
void rec_eventfd_signal(int fd);

/*
 * A helper thread that runs until it is asked to stop: its function polls stop_fd among its
 * own fds and returns once that is readable. Zeroed: not running.
 */
struct rec_worker {
	pthread_t thread;
	int stop_fd;		/* eventfd: readable once rec_worker_stop() asks the thread to end */
	bool running;
};
/* Start fn(arg) (rec_thread_start()) with w->stop_fd made first: 0 or -errno, nothing kept. */
int rec_worker_start(struct rec_worker *w, void *(*fn)(void *), void *arg);
/* Ask the thread to end, wait for it, close its fd; nothing for a worker not running. */
void rec_worker_stop(struct rec_worker *w);
/*
 * Room for element n of the array *arrayp (a pointer to the array pointer) of *cap elements of
 * sz bytes: doubles it when full, from first. 0, or -ENOMEM with the array unchanged.
 */
int rec_grow(void *arrayp, uint32_t n, uint32_t *cap, size_t sz, uint32_t first);

#endif /* STK_REC_BASE_H */
