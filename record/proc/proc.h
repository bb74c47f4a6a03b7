/* SPDX-License-Identifier: MIT */
/*
 * proc.h: proc/, processes and their mappings: /proc reads and the process table (procmaps.c),
 * the kernel's mmap records (mmaps.c), object files (objects.c), JIT perf maps (perfmap.c), the
 * notification reader thread (reader.c) and a -- COMMAND (child.c).
 */
#ifndef STK_REC_PROC_H
#define STK_REC_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "stk/capture.h"
#include "stk/elfobj.h"

#include "../base/base.h"
#include "../probe/probe.h"
#include "../unwind/unwind.h"

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
 * A new capture file (stkrec --rotate, --flight) holds no process and no object yet: every
 * process with events is written again, whole, before the next interval, and its objects before
 * the rows that hit them (rec_objects__new_file()).
 */
void rec_procs__new_file(struct rec_procs *ps);
/*
 * Walk deferred event d in the image of its process that names its row (rec_procs__split()),
 * when that is an image an exec (or a new process at the pid) has ended: in an exec storm
 * stkrec walks an event images after its own, which the walker's mappings no longer hold.
 * Returns false, walking nothing, for an event of the current image (rec_unwind__walk()).
 * chain, ips, max, *stop, *n: rec_unwind__walk_read().
 */
bool rec_procs__walk_old(struct rec_procs *ps, const struct stk_deferred *d,
			 const struct stk_pychain *chain, uint64_t *ips, uint32_t max, uint32_t *stop,
			 uint32_t *n);
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
/*
 * Objects are written to more than one file (stkrec --rotate, --flight): keep their descriptors
 * open after their records are written, so that a later file gets them whole. Call before the
 * first write.
 */
void rec_objects__keep_open(struct rec_objects *os);
/* A new capture file: no object is written or handed out in it yet. */
void rec_objects__new_file(struct rec_objects *os);
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
/* A new capture file: every map file is read again from its start for the next rows. */
void rec_perfmaps__new_file(struct rec_perfmaps *pm);
/*
 * Bytes of perf maps left out over the bounds (perfmap.c, stkrec.8 FILES) since the last call:
 * CAP_LOSS_PERFMAP_LEFT_OUT.
 */
uint64_t rec_perfmaps__left_out(struct rec_perfmaps *pm);
/* Parse one perf map line "START SIZE name" (hex); 1 parsed, 0 to skip (malformed). */
int rec_perfmap_line(const char *line, uint64_t *start, uint64_t *size, char *name, size_t nsz);

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

/*
 * The processes descended from roots now (/proc, family.c): *out (malloc'ed) holds *nout pids,
 * the roots not among them. 0 or -errno.
 */
int rec_descendants(const uint32_t *roots, uint32_t nroots, uint32_t **out, uint32_t *nout);

/* ---- -- COMMAND (child.c) ------------------------------------------------------------------- */

struct rec_child;

/* Fork COMMAND, held before exec until rec_child__go(). NULL with errno set. */
struct rec_child *rec_child__start(char **argv);
int rec_child__pid(const struct rec_child *c);
int rec_child__go(struct rec_child *c);
/* Handle ptrace stops (reading maps at the exit stop); true once the command has exited. */
bool rec_child__poll(struct rec_child *c, struct rec_procs *procs);
void rec_child__close(struct rec_child *c);

#endif /* STK_REC_PROC_H */
