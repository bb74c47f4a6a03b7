/* SPDX-License-Identifier: MIT */
/*
 * capture.h: the API of format/, the capture file library shared by stkrec and stkreport.
 *
 * A capture is a fixed 16-byte file header followed by an append-only sequence of chunks. Each
 * chunk holds one record (metadata, kernel symbols, processes, one interval of counted stacks,
 * losses, or the closing record), lz4-compressed and CRC32C-checksummed. The byte layout is
 * specified in docs/format.md; this header is the in-memory model of it.
 *
 * format/ never prints and links only lz4 and libc. Errors are negative errno values:
 *   -EINVAL    not a capture file (bad magic), or an invalid argument
 *   -ENOTSUP   newer major version, or a mandatory chunk type this reader does not know
 *   -EBADMSG   checksum mismatch, undecodable lz4 payload or malformed record
 *   -ENODATA   the file ends inside a chunk (torn tail: recorder killed, disk full)
 *   -EOVERFLOW a length over the limits below
 *   -EFBIG     what was decoded would exceed the caller's memory budget (struct cap_budget)
 * plus whatever open(), mmap() and write() return (-ENOENT, -EACCES, -ENOSPC, ...).
 */
#ifndef STK_CAPTURE_H
#define STK_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#define CAP_MAJOR 4
#define CAP_MINOR 2

/* Limits that keep a reader of hostile input bounded in memory (format.md 2). */
#define CAP_MAX_CHUNK_RAW	(64u << 20)	/* decompressed payload of one chunk */
#define CAP_MAX_STACK_DEPTH	1024u		/* frames in one stored stack */
#define CAP_COMM_LEN		16u		/* task comm, as the kernel keeps it */
#define CAP_BUILD_ID_MAX	32u		/* bytes of a GNU build-id (usually 20) */

/* Chunk types (format.md 3). */
enum cap_chunk_type {
	CAP_CHUNK_META = 1,	/* first chunk; struct cap_meta */
	CAP_CHUNK_KSYMS = 2,	/* kallsyms snapshot; struct cap_ksyms */
	CAP_CHUNK_PROCS = 3,	/* processes and mappings; struct cap_procs */
	CAP_CHUNK_INTERVAL = 4,	/* one interval of counted stacks; struct cap_interval */
	CAP_CHUNK_LOSSES = 5,	/* losses during one interval; struct cap_losses */
	CAP_CHUNK_END = 6,	/* written on clean exit only; struct cap_end */
	/* 1.1 */
	CAP_CHUNK_EVENTS = 7,	/* per-event mode (--snoop): struct cap_interval, one row per event,
				 * ts_ns and cpu set, count 1; mandatory */
	CAP_CHUNK_OBJECTS = 8,	/* object files: segments, symbol tables, embedded bytes;
				 * struct cap_objects; optional */
	CAP_CHUNK_PERFMAP = 9,	/* JIT symbols from /tmp/perf-PID.map; struct cap_perfmap; optional */
	/* 2.0 */
	CAP_CHUNK_KSYMS_ADD = 10,	/* the kernel symbols rows need, with sizes, added to the
					 * table; struct cap_ksyms; mandatory */
	/* 4.1 */
	CAP_CHUNK_CODES = 11,	/* interpreter code objects (Python) the stacks' interpreter
				 * frames name; struct cap_codes; mandatory */
};

/* Chunk header flag: a reader that does not know the type must stop instead of skipping it. */
#define CAP_CHUNK_F_MANDATORY 0x1u

/* ---- records ---------------------------------------------------------------------------- */

struct cap_kv {
	char *key;
	char *value;
};

enum cap_probe_kind {
	CAP_PROBE_KFUNC = 1,	/* kernel function: kprobe, kprobe.multi or fentry */
	CAP_PROBE_TRACEPOINT = 2,
	CAP_PROBE_UPROBE = 3,
	CAP_PROBE_USDT = 4,
	CAP_PROBE_SAMPLE = 5,	/* timed perf-event sampling (bcc profile) */
};

struct cap_probe {
	uint32_t id;		/* cap_row.probe refers to this */
	uint32_t kind;		/* enum cap_probe_kind */
	uint32_t nattached;	/* functions/tracepoints/USDT sites/CPUs it was attached to */
	char *spec;		/* as the user wrote it, e.g. "t:syscalls:sys_enter_getppid" */
};

/*
 * Capture metadata: free-form key/value pairs (the keys stkrec writes are listed in format.md
 * 4.1: host, kernel, arch, ncpus, boot_id, clock references, tool_version, argv, mode, freq_hz,
 * period, interval_s, filters, kptr_restrict, perf_event_max_stack, ...) and the probe list.
 */
struct cap_meta {
	uint32_t nkv;
	struct cap_kv *kv;
	uint32_t nprobes;
	struct cap_probe *probes;
};

/* One kernel text symbol. module is NULL for the kernel image itself. */
struct cap_ksym {
	uint64_t addr;
	char *name;
	char *module;
	/*
	 * 2.0, KSYMS_ADD: the symbol covers [addr, addr + size), size >= 1, addr + size <= 2^64.
	 * 0 in KSYMS records, which have no sizes (last, so 1.x initializers keep their meaning).
	 */
	uint64_t size;
};

#define CAP_KSYMS_F_HIDDEN 0x1u	/* kallsyms showed only zero addresses (kptr_restrict) */

/*
 * The kernel symbols of a KSYMS or a KSYMS_ADD record, sorted by addr (format.md 4.2, 4.10).
 * KSYMS: a whole kallsyms snapshot without sizes (aliases: equal addresses), which replaces the
 * reader's kernel symbol table. KSYMS_ADD (2.0): symbols with sizes whose ranges do not overlap,
 * added to that table; each replaces every earlier symbol its range overlaps.
 */
struct cap_ksyms {
	uint32_t flags;
	uint32_t count;
	struct cap_ksym *syms;
};

enum cap_map_kind {
	CAP_MAP_FILE = 0,	/* a regular file */
	CAP_MAP_ANON_EXEC = 1,	/* anonymous executable memory (JIT) */
	CAP_MAP_VDSO = 2,	/* [vdso] */
	CAP_MAP_MEMFD = 3,	/* /memfd:... */
	CAP_MAP_OTHER = 4,	/* [vsyscall] and other special mappings */
};

#define CAP_MAP_F_DELETED	0x1u	/* maps said " (deleted)"; path has it stripped */
#define CAP_MAP_F_NO_BUILD_ID	0x2u	/* the object could not be read or has no build-id */
#define CAP_MAP_F_PSEUDO_ID	0x4u	/* 1.1: build_id is a content hash (the object has no GNU
					 * build-id); it keys a CAP_CHUNK_OBJECTS record */
#define CAP_MAP_F_NS_PATH	0x8u	/* 1.1: path is valid only in the process's mount namespace
					 * (container, chroot): the host path differs or is absent */

/* One executable mapping of a process, as /proc/PID/maps shows it. */
struct cap_mapping {
	uint64_t start, end, pgoff;
	uint64_t dev;		/* makedev(major, minor) of the maps line */
	uint64_t inode;
	uint32_t kind;		/* enum cap_map_kind */
	uint32_t flags;		/* CAP_MAP_F_* */
	uint32_t build_id_len;	/* 0 when unknown */
	uint8_t build_id[CAP_BUILD_ID_MAX];
	char *path;
};

#define CAP_PROC_F_NO_MAPS 0x1u	/* the process exited before its maps could be read */

/*
 * A process generation: keyed by (pid, start_time). For rows that follow it in the file, the
 * latest record of a pid replaces earlier ones (pid reuse, exec).
 */
struct cap_process {
	uint32_t pid;		/* tgid */
	uint32_t flags;		/* CAP_PROC_F_* */
	uint64_t start_time;	/* ns since boot, from /proc/PID/stat starttime */
	char *comm;
	char *exe;		/* /proc/PID/exe target, "" if unknown */
	uint32_t nmaps;
	struct cap_mapping *maps;	/* executable mappings, sorted by start */
};

struct cap_procs {
	uint32_t count;
	struct cap_process *procs;
};

#define CAP_STACK_F_TRUNCATED 0x1u	/* the stack filled the depth limit: outer frames cut */

/* A stack of raw addresses, ips[0] is the innermost frame (the leaf). */
struct cap_stack {
	uint32_t flags;
	uint32_t nips;
	uint64_t *ips;
};

#define CAP_ROW_F_KSTACK_LOST 0x1u	/* the kernel stack was requested but lost (collision, error) */
#define CAP_ROW_F_USTACK_LOST 0x2u	/* the user stack was requested but lost */

/*
 * 4.1: a frame of interpreted code in a user stack (format.md 4.11): the tag byte (no user or
 * kernel address has it), the capture-wide id of its CODES entry (32 bits) and the offset of
 * its instruction in the code (24 bits: Python's instruction index in code units;
 * CAP_CODE_OFF_NONE when it has run none).
 */
#define CAP_CODE_FRAME_TAG	0xfe00000000000000ull
#define CAP_CODE_OFF_NONE	0xffffffu
#define CAP_CODE_FRAME(id, off)								\
	(CAP_CODE_FRAME_TAG | (uint64_t)(uint32_t)(id) << 24 |				\
	 ((off) > CAP_CODE_OFF_NONE ? CAP_CODE_OFF_NONE : (uint64_t)(off)))
#define CAP_CODE_FRAME_IS(w)	(((w) >> 56) == 0xfe)
#define CAP_CODE_FRAME_ID(w)	((uint32_t)((w) >> 24))
#define CAP_CODE_FRAME_OFF(w)	((uint32_t)(w) & CAP_CODE_OFF_NONE)

/* Stack references in a row are 1-based indexes into the interval's tables; 0 means none. */
#define CAP_NO_STACK 0u

struct cap_row {
	uint32_t probe;		/* cap_probe.id */
	uint32_t pid;		/* tgid; 0 for the idle task */
	uint32_t tid;
	uint32_t flags;		/* CAP_ROW_F_* */
	char comm[CAP_COMM_LEN];	/* NUL-terminated */
	uint32_t kstack;	/* index into kstacks + 1, or CAP_NO_STACK */
	uint32_t ustack;	/* index into ustacks + 1, or CAP_NO_STACK */
	uint64_t count;		/* events, samples, or (off-CPU, meta weight=us) microseconds */
	/* EVENTS chunks only (0 in INTERVAL chunks): */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC time of the event */
	uint32_t cpu;
};

/*
 * One interval (CAP_CHUNK_INTERVAL) or one batch of events (CAP_CHUNK_EVENTS, rows in time order
 * per CPU). Kernel and user stacks have separate deduplicated tables.
 * Written (cap_writer__put()): self-contained, rows refer to the record's own tables; the writer
 * puts in the file only the stacks the file does not hold yet (format.md 4.4, 4.0).
 * Decoded from a 4.x file: the tables hold only the stacks no earlier chunk of the file held, and
 * rows refer to every stack of the file so far: resolve them with struct cap_stacks. Decoded from
 * a 1.x to 3.x file: self-contained.
 * 2.2: an interval whose rows ran in two images of one process is several such chunks with one
 * seq, start_ns and end_ns (format.md 3.2); readers count them as one interval.
 * Timestamps are CLOCK_MONOTONIC ns; the meta keys clock.mono_ns/clock.real_ns map them to wall
 * time.
 */
struct cap_interval {
	uint32_t seq;		/* 0, 1, 2, ... */
	uint64_t start_ns, end_ns;
	uint32_t nkstacks, nustacks, nrows;
	struct cap_stack *kstacks;
	struct cap_stack *ustacks;
	struct cap_row *rows;
};

/*
 * Loss counters, in events (not stacks; but kind 30, in bytes). Stored as (kind, count) pairs:
 * new kinds may follow.
 */
enum cap_loss {
	CAP_LOSS_KSTACK_COLLISION = 0,	/* kernel stack: stack storage full (1.x: or a bucket
					 * collision of the old stack-trace maps) */
	CAP_LOSS_USTACK_COLLISION = 1,	/* user stack: the same */
	CAP_LOSS_KSTACK_ERROR = 2,	/* kernel stack: any other bpf_get_stackid() error */
	CAP_LOSS_USTACK_MISSING = 3,	/* user task without a readable user stack */
	CAP_LOSS_COUNTS_FULL = 4,	/* counts hash map full: the event was not counted */
	CAP_LOSS_KSTACK_TRUNCATED = 5,	/* kernel stack cut at the depth limit */
	CAP_LOSS_USTACK_TRUNCATED = 6,	/* user stack cut at the depth limit */
	CAP_LOSS_NOTIFY_DROPPED = 7,	/* new-process notifications dropped (ring buffer full) */
	CAP_LOSS_MAPS_UNREAD = 8,	/* events of processes that exited before maps were read */
	CAP_LOSS_EVENTS_DROPPED = 9,	/* per-event mode: events dropped, ring buffer full (1.1) */
	/* 2.0: why user stacks walked from CFI (--unwind cfi|auto) end early, in events */
	CAP_LOSS_USTACK_PROC_UNKNOWN = 10,	/* the process's mappings were not loaded yet */
	CAP_LOSS_USTACK_NO_MAPPING = 11,	/* a caller in no mapping known then */
	CAP_LOSS_USTACK_NO_CFI = 12,		/* --unwind cfi: code without CFI */
	CAP_LOSS_USTACK_UNSUPPORTED = 13,	/* a CFI rule the walker does not follow */
	CAP_LOSS_USTACK_READ_FAULT = 14,	/* stack memory not readable (not present) */
	CAP_LOSS_USTACK_BAD_FRAME = 15,		/* a frame that did not move up the stack */
	CAP_LOSS_USTACK_TABLE_LIMIT = 16,	/* the object's table did not fit --unwind-memory */
	CAP_LOSS_DRAIN_RACE = 17,	/* counted into a generation while it was drained */
	CAP_LOSS_NESTED = 18,		/* programs nested too deep on a CPU: event not counted */
	CAP_LOSS_USTACK_COPY_END = 19,	/* deeper than a deferred event's stack copy */
	CAP_LOSS_USTACK_DEFER_FULL = 20, /* the deferred events' ring was full: BPF's walk so far */
	CAP_LOSS_RETRY_PENDING = 21,	/* to be counted on its task's return to user space, which had
					 * not come when the recording ended: not counted */
	/* 4.1: Python frames (docs/bpf.md 10) */
	CAP_LOSS_PY_VERSION = 22,	/* processes: a CPython of a version without a layout */
	CAP_LOSS_PY_NO_RUNTIME = 23,	/* processes: an interpreter without the _PyRuntime symbol */
	CAP_LOSS_PY_TRUNCATED = 24,	/* events: more Python frames than a chain holds */
	CAP_LOSS_PY_READ_FAULT = 25,	/* events: interpreter memory not readable */
	CAP_LOSS_PY_BAD_FRAME = 26,	/* events: a frame whose code is no code object */
	CAP_LOSS_PY_NO_THREAD = 27,	/* events: interpreter frames but no thread state found */
	CAP_LOSS_PY_UNNAMED = 28,	/* code objects whose names could not be read (CODES reason) */
	CAP_LOSS_PY_NAMES_FULL = 29,	/* frames of stored stacks whose code object found no room in
					 * stkrec's names table (--python-names) */
	CAP_LOSS_PERFMAP_LEFT_OUT = 30,	/* bytes (not events) of JIT perf maps left out: over
					 * stkrec's bounds (stkrec.8 FILES) */
	CAP_LOSS__COUNT
};

/* Highest CPU number whose per-CPU drop count a LOSSES record may carry, plus one. */
#define CAP_MAX_CPUS 4096u
/* On disk, the drops of CPU n are the pair kind CAP_LOSS_CPU_BASE + n (format.md 4.5). */
#define CAP_LOSS_CPU_BASE 0x10000u

struct cap_losses {
	uint32_t interval_seq;	/* the interval these losses happened in */
	uint64_t counts[CAP_LOSS__COUNT];
	/* per-event mode: CAP_LOSS_EVENTS_DROPPED split by CPU (NULL/0 when none) */
	uint32_t ncpus;		/* entries in cpu_dropped, at most CAP_MAX_CPUS */
	uint64_t *cpu_dropped;
};

/* ---- objects (1.1) -------------------------------------------------------------------------- */

/* A loadable segment of an object (PT_LOAD): file offset -> virtual address. */
struct cap_segment {
	uint64_t offset, vaddr, filesz, memsz;
};

/* A function symbol, at an ELF virtual address of its object (or, in a perf map, absolute). */
struct cap_symbol {
	uint64_t addr, size;
	char *name;		/* raw (mangled) name */
};

#define CAP_OBJ_F_SYMTAB	0x1u	/* syms came from .symtab (DEBUGFILE: a debug file's) */
#define CAP_OBJ_F_DYNSYM	0x2u	/* syms came from .dynsym (the object has no .symtab) */
#define CAP_OBJ_F_DEBUGDATA	0x4u	/* syms came from .gnu_debugdata (MiniDebugInfo) */
#define CAP_OBJ_F_WHOLE		0x8u	/* data holds the whole file */
#define CAP_OBJ_F_PSEUDO_ID	0x10u	/* build_id is a content hash, not a GNU build-id */
/* 2.1: syms are the union of the object's .dynsym and the .symtab of its separate debug file
 * (same build-id), set with SYMTAB and DYNSYM */
#define CAP_OBJ_F_DEBUGFILE	0x20u

/*
 * One object file, keyed by build-id (mappings with the same build_id refer to it). Written
 * before the first row whose stacks hit it; at most once per build-id and capture.
 */
struct cap_object {
	uint32_t flags;		/* CAP_OBJ_F_* */
	uint32_t build_id_len;
	uint8_t build_id[CAP_BUILD_ID_MAX];
	char *path;		/* as the recording host saw it (namespace path for containers) */
	char *debuglink;	/* .gnu_debuglink file name, "" if none */
	uint32_t nsegs;
	struct cap_segment *segs;
	uint32_t nsyms;
	struct cap_symbol *syms;	/* sorted by addr */
	uint64_t data_len;	/* CAP_OBJ_F_WHOLE: bytes of the file, else 0 */
	uint8_t *data;
};

struct cap_objects {
	uint32_t count;
	struct cap_object *objs;
};

/*
 * JIT symbols of one process from its perf map (/tmp/perf-PID.map: "START SIZE name", hex).
 * Each record holds the entries added since the previous one for that process generation.
 */
struct cap_perfmap {
	uint32_t pid;
	uint64_t start_time;	/* of the process generation, as in struct cap_process */
	uint32_t count;
	struct cap_symbol *syms;	/* addr absolute, in file order (later entries win) */
};

/* ---- interpreter code objects (4.1, format.md 4.11) ------------------------------------------ */

enum cap_code_lang {
	CAP_LANG_PYTHON = 1,	/* CPython: offsets are instruction indexes in code units */
};

/* Why a code entry has no names (cap_code.reason). */
enum cap_code_reason {
	CAP_CODE_NAMED = 0,
	CAP_CODE_GONE = 1,	/* the process was gone when stkrec read it */
	CAP_CODE_CHANGED = 2,	/* another object at its address (freed and reused) */
	CAP_CODE_UNREADABLE = 3,	/* its memory could not be read, or held nonsense */
	CAP_CODE_FULL = 4,	/* stkrec's names table was full (--python-names) */
	CAP_CODE__COUNT
};

/* From instruction offset start on (up to the next entry's), the code is at line. 0: none. */
struct cap_code_line {
	uint32_t start;
	uint32_t line;
};

/* One code object: what an interpreter frame (CAP_CODE_FRAME) of id names. */
struct cap_code {
	uint32_t id;		/* >= 1, once per capture */
	uint32_t lang;		/* enum cap_code_lang; unknown values kept */
	uint32_t reason;	/* enum cap_code_reason; names empty unless CAP_CODE_NAMED */
	uint64_t addr;		/* where the object was in its process */
	char *name;		/* qualified name (Python's co_qualname) */
	char *file;		/* file name as the code object has it */
	uint32_t firstline;	/* the first line of the definition */
	uint32_t nlines;
	struct cap_code_line *lines;	/* sorted by start, non-decreasing */
};

struct cap_codes {
	uint32_t count;
	struct cap_code *codes;
};

/* Closing record: present only when stkrec exited cleanly. */
struct cap_end {
	uint32_t nintervals;	/* intervals written: the parts of a split one count once */
	uint64_t end_ns;	/* CLOCK_MONOTONIC */
	uint64_t events;	/* sum of all row counts written */
};

/*
 * One decoded record. The union member is selected by type. Every pointer inside points into
 * memory owned by the record (when decoded) or by the caller (when built for writing).
 */
struct cap_record {
	uint16_t type;		/* enum cap_chunk_type */
	union {
		struct cap_meta meta;
		struct cap_ksyms ksyms;		/* KSYMS and KSYMS_ADD */
		struct cap_procs procs;
		struct cap_interval interval;	/* INTERVAL and EVENTS */
		struct cap_losses losses;
		struct cap_objects objects;
		struct cap_perfmap perfmap;
		struct cap_end end;
		struct cap_codes codes;
	};
	void *priv;		/* owned by format/: the decoder's allocations */
};

/* ---- memory budget ----------------------------------------------------------------------- */

/*
 * Bytes a reader of hostile input may keep (format.md 2, "Limits"). Each chunk is bounded by
 * CAP_MAX_CHUNK_RAW, but a file holds any number of chunks and lz4 expands up to 255:1, so a
 * small file can decode to gigabytes: the decompression buffer and every decoded record take
 * their bytes from a budget first, and give them back when freed. One budget may serve several
 * readers and whatever else the caller charges to it (stkreport: every capture of a run, its
 * tables and symbol tables). Not thread-safe.
 */
struct cap_budget {
	uint64_t limit;		/* bytes; 0: no limit */
	uint64_t used;		/* taken and not given back */
	uint64_t peak;		/* highest used */
	uint64_t refused;	/* takes refused */
};

/*
 * Take n bytes from b: 0, or -EFBIG when used + n would exceed the limit (nothing is taken, the
 * refusal is counted). A NULL budget has no limit.
 */
int cap_budget__take(struct cap_budget *b, uint64_t n);
/* Give back n bytes taken before. NULL: nothing. */
void cap_budget__give(struct cap_budget *b, uint64_t n);

/* ---- reading ---------------------------------------------------------------------------- */

struct cap_reader;

/* One chunk as read from the file. data is lent until the next cap_reader__next()/__close(). */
struct cap_chunk {
	uint32_t index;		/* 0-based chunk number */
	uint64_t offset;	/* file offset of the chunk header */
	uint16_t type;		/* enum cap_chunk_type */
	uint16_t flags;		/* CAP_CHUNK_F_* */
	uint32_t len;		/* decompressed length of data */
	const void *data;
	/*
	 * Major version of the file the chunk is from (cap_reader__next() sets it): it selects
	 * the record layout the decoder reads (3.0 changed OBJECTS, format.md 5). 0: CAP_MAJOR.
	 */
	uint16_t major;
};

/*
 * Open a capture by path (mmap, read-only) and check the file header. Returns NULL with errno
 * set: ENODATA shorter than the header, EINVAL bad magic, ENOTSUP newer major version, or the
 * error of open()/mmap(). An empty file is ENODATA.
 */
struct cap_reader *cap_reader__open(const char *path);

/* The same over a caller's buffer, which must outlive the reader (not copied). */
struct cap_reader *cap_reader__open_mem(const void *buf, size_t len);

/*
 * Read the next chunk, verifying its checksum and decompressing it. Unknown optional chunk types
 * are skipped here. Returns 1 with *chunk filled, 0 at a clean end of file, or a negative errno
 * (see top of file). After an error every later call returns the same error;
 * cap_reader__chunk_index() and __offset() then name the chunk that failed.
 */
int cap_reader__next(struct cap_reader *r, struct cap_chunk *chunk);

/* Index and file offset of the chunk last returned or failed. */
uint32_t cap_reader__chunk_index(const struct cap_reader *r);
uint64_t cap_reader__offset(const struct cap_reader *r);

/*
 * Take the decompression buffer from b (borrowed until __close; NULL: no limit). A chunk whose
 * buffer would exceed it fails with -EFBIG (sticky, like every reading error).
 */
void cap_reader__set_budget(struct cap_reader *r, struct cap_budget *b);

/* Version of the file (from its header). */
void cap_reader__version(const struct cap_reader *r, uint16_t *major, uint16_t *minor);

void cap_reader__close(struct cap_reader *r);

/*
 * Decode a chunk into a newly allocated record (free with cap_record__free()), in the layout of
 * the chunk's major version. The record does not borrow from the chunk. Returns 0, -EBADMSG for
 * a malformed payload, -EOVERFLOW past a limit, -ENOTSUP for a type this library cannot decode
 * or a major newer than CAP_MAJOR, -ENOMEM.
 */
int cap_record__decode(const struct cap_chunk *chunk, struct cap_record **out);
/*
 * The same, taking every byte the record holds from b (NULL: no limit) before allocating it:
 * -EFBIG when it would exceed it. cap_record__free() gives the bytes back, so b must outlive
 * the record.
 */
int cap_record__decode_budget(const struct cap_chunk *chunk, struct cap_budget *b,
			      struct cap_record **out);
void cap_record__free(struct cap_record *rec);

/*
 * The stacks rows refer to, for every version (format.md 4.4). Up to 3.x each INTERVAL or EVENTS
 * record holds its own tables; from 4.0 a record holds only the stacks no earlier chunk of its
 * file held, and its rows refer to all the file's stacks so far, numbered from 1 in file order
 * (kernel and user stacks apart). A reader adds each such record in file order and looks rows'
 * stacks up here. The table holds copies of the records' struct cap_stack, whose ips stay
 * the records': they must outlive the table's use of them. Not thread-safe.
 */
struct cap_stacks {
	uint16_t major;		/* of the file: below 4, every record resolves its own rows */
	struct cap_stack *v[2];	/* [0] kernel, [1] user stacks of the file so far (4.x) */
	uint32_t n[2], cap[2];
	struct cap_budget *budget;	/* the arrays' bytes are taken from it (NULL: no limit) */
};

/* An empty table for a file of this major version (cap_reader__version()); b may be NULL. */
void cap_stacks__init(struct cap_stacks *s, uint16_t major, struct cap_budget *b);
/*
 * Add the stacks of iv, the next INTERVAL or EVENTS record of the file, and check that its rows
 * refer to stacks the file holds by now. 0, -EBADMSG (a row refers past them), -EFBIG (over the
 * budget) or -ENOMEM; after an error the table is unchanged.
 */
int cap_stacks__add(struct cap_stacks *s, const struct cap_interval *iv);
/*
 * The stack ref (a row's kstack or ustack) names in iv, added before; NULL for none. s NULL:
 * iv's own tables (a self-contained interval).
 */
const struct cap_stack *cap_stacks__get(const struct cap_stacks *s, const struct cap_interval *iv,
					bool user, uint32_t ref);
/*
 * iv, added before, as a self-contained interval (what cap_writer__put() takes): its rows and the
 * file's stacks so far as its tables (s NULL, or a 1.x to 3.x file: iv itself). Lent until the
 * next cap_stacks__add() or __release().
 */
void cap_stacks__view(const struct cap_stacks *s, const struct cap_interval *iv,
		      struct cap_interval *out);
/* Free the arrays (the table is then empty). */
void cap_stacks__release(struct cap_stacks *s);

/* Value of a metadata key, or NULL. Lent for the life of the record. */
const char *cap_meta_get(const struct cap_meta *meta, const char *key);

/* ---- function symbol names (symbols.c, format.md 4.8) ------------------------------------ */

/* The suffix of a PLT stub's name (4.2): "memcmp@plt", the stub that jumps to memcmp. */
#define CAP_SYMBOL_PLT "@plt"

/* Whether name is a PLT stub's: NAME@plt, its only '@' that of CAP_SYMBOL_PLT, NAME not empty. */
bool cap_symbol_is_plt(const char *name);

/*
 * Length of name without its symbol version: 15 for "clock_nanosleep@GLIBC_2.2.5" and for
 * "clock_nanosleep@@GLIBC_2.17" (how a .symtab names versioned definitions), strlen(name) for a
 * name without one, and for a PLT stub's ("memcmp@plt": CAP_SYMBOL_PLT is no version). Readers
 * print names so.
 */
size_t cap_symbol_base_len(const char *name);

/* A function symbol that may name an address (cap_symbol_prefer()). */
struct cap_symbol_cand {
	uint64_t size;
	unsigned char bind;	/* ELF STB_*; STB_GLOBAL when unknown (an embedded table) */
	const char *name;	/* raw */
};

/*
 * Of two function symbols at one address, the one that names it: < 0 a, > 0 b, 0 the same.
 * A sized symbol first, then binding GLOBAL, WEAK, others, then the name without its version:
 * the shorter, then in byte order; then the larger size, then the raw name in byte order.
 */
int cap_symbol_prefer(const struct cap_symbol_cand *a, const struct cap_symbol_cand *b);

/* Human name of a loss kind ("kernel stacks lost to stack-map collisions"), never NULL. */
const char *cap_loss_name(unsigned int kind);

/* Name of a probe kind ("tracepoint", "uprobe", ...), never NULL. */
const char *cap_probe_kind_name(unsigned int kind);

/* ---- files others may control (files.c) ------------------------------------------------- */

/*
 * Open a regular file for reading: a FIFO, device, socket or directory is -EINVAL (without
 * blocking), a symlink as the last component -ELOOP unless follow.
 */
int cap_open_regular(const char *path, bool follow);
/* The same for path inside root (/proc/PID/root): symlinks cannot leave it. */
int cap_open_in_root(const char *root, const char *path);
/*
 * CRC32 (zlib's) of the first size bytes of fd, as .gnu_debuglink records a debug file's: read
 * with pread(), never mapped, so a file truncated meanwhile is an error (-EIO), not a fault.
 */
int cap_file_crc32(int fd, uint64_t size, uint32_t *crc);
/*
 * Create an output file, or reuse an existing regular file of ours with one link; a symlink,
 * FIFO or another user's file at path is -EEXIST and left alone. private: mode 0600 (also for
 * a reused file), else 0666 less the umask. Returns the fd for writing, or -errno.
 */
int cap_create_output(const char *path, bool private);
/*
 * cap_create_output() as user uid and group gid would: only where they may create a file, the
 * new file theirs, an existing one reused only if theirs. For a tool run as root on someone's
 * behalf (sudo). -EACCES where they may not; -EPERM when this process cannot act as them.
 */
int cap_create_output_as(const char *path, bool private, uid_t uid, gid_t gid);
/*
 * Whether path is a capture file (a regular file beginning with the file magic, format.md 2):
 * an output that is not a capture must never replace one. false when it cannot be read.
 */
bool cap_is_capture_file(const char *path);
/* cap_create_output() as a stdio stream; NULL with errno set. */
FILE *cap_fopen_output(const char *path, bool private);
/* Why cap_create_output() failed, for a one-line error. */
const char *cap_output_strerror(int err);

/* ---- writing ---------------------------------------------------------------------------- */

struct cap_writer;

/*
 * Create a capture at path (cap_create_output(), private) and write the file header. Returns
 * NULL with errno set; a file it made but could not write the header to is removed.
 */
struct cap_writer *cap_writer__open(const char *path);
/*
 * The same on fd, an output just made at path (cap_create_output*(); a negative fd is its
 * error, returned as NULL with errno set), or with path NULL a file without a name (a memfd,
 * an O_TMPFILE file). The writer owns fd from here, failure included.
 */
struct cap_writer *cap_writer__open_fd(int fd, const char *path);

/*
 * Encode rec, compress and checksum it and append it as one chunk. The chunk is mandatory or
 * optional as docs/format.md says for its type. A failed write (e.g. -ENOSPC) truncates the file
 * back to its last complete chunk, so the file stays readable; the error is returned.
 * An INTERVAL or EVENTS record is self-contained (its rows refer to its own tables); the writer
 * keeps the stacks the file holds and writes only the ones its rows use that it does not hold
 * yet, referring to the others (format.md 4.4, 4.0). So a file grows with new stacks, not with
 * intervals, and a new writer (a new file) starts with none.
 */
int cap_writer__put(struct cap_writer *w, const struct cap_record *rec);

/*
 * From now on compress and write chunks on a thread of the writer's, in order, so that a
 * large record never holds up the caller: __put and __put_raw encode and check the record,
 * queue it (waiting while more than max_queued payload bytes wait) and return. A write error
 * (-ENOSPC, ...) is then returned by the next __put or __put_raw and by __finish, and from
 * then on by every one of them: no chunk queued after the failed one is written. Queued chunks
 * wait for __flush (or for a quarter of max_queued): one wake-up of the thread per batch.
 * __finish writes what is queued first. Returns 0,
 * -EINVAL (already in this mode, or max_queued 0), -ENOMEM, or pthread_create's error.
 * Thread safety: one caller thread, as without it.
 */
int cap_writer__background(struct cap_writer *w, size_t max_queued);

/* Background mode: have the thread write what is queued now (no wait). Otherwise nothing. */
void cap_writer__flush(struct cap_writer *w);

/* Append a raw chunk of any type and flags (tests and future types). Same errors as __put. */
int cap_writer__put_raw(struct cap_writer *w, uint16_t type, uint16_t flags,
			const void *payload, size_t len);

/*
 * Background mode: -ENOSPC or -EDQUOT while the writer waits for room on a full disk (chunks
 * queue in memory meanwhile, up to max_queued; a put past that fails with that error), else 0.
 */
int cap_writer__waiting(struct cap_writer *w);
/* Bytes written so far (header included; in background mode, chunks written, not queued). */
uint64_t cap_writer__size(const struct cap_writer *w);

/*
 * Write what is queued (background mode, which ends), then flush to stable storage (fsync).
 * Returns 0 or -errno (a queued chunk's write error too). The writer stays open.
 */
int cap_writer__finish(struct cap_writer *w);

void cap_writer__close(struct cap_writer *w);

/* CRC32C (Castagnoli) of buf, continuing from crc (start with 0). */
uint32_t cap_crc32c(uint32_t crc, const void *buf, size_t len);

#endif /* STK_CAPTURE_H */
