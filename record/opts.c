// SPDX-License-Identifier: MIT
/* opts.c: stkrec's command line (getopt_long) into struct rec_opts. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec.h"

enum {
	OPT_STACK_STORAGE = 256,
	OPT_HASH_STORAGE,
	OPT_SNOOP,
	OPT_OFFCPU,
	OPT_MIN_BLOCK,
	OPT_STATE,
	OPT_MAX_BLOCK,
	OPT_NO_SYMTABS,
	OPT_EMBED_OBJECTS,
	OPT_MAX_KPROBES,
	OPT_RINGBUF_SIZE,
	OPT_UNWIND,
	OPT_UNWIND_MEMORY,
	OPT_ALL_KALLSYMS,
};

/* bcc's letters: stackcount, profile and offcputime; ':' first for our own one-line errors */
#define SHORT_OPTS ":o:p:L:t:KUukm:M:i:D:rlF:c:C:Ie:qhV"

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 'L' },	/* -t too: offcputime's letter */
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'D' },
	{ "regexp", no_argument, NULL, 'r' },
	{ "list", no_argument, NULL, 'l' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "include-idle", no_argument, NULL, 'I' },
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
	{ "hash-storage-size", required_argument, NULL, OPT_HASH_STORAGE },
	{ "event", required_argument, NULL, 'e' },
	{ "snoop", no_argument, NULL, OPT_SNOOP },
	{ "offcpu", no_argument, NULL, OPT_OFFCPU },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
	/* bcc offcputime's spellings */
	{ "min-block-time", required_argument, NULL, 'm' },
	{ "max-block-time", required_argument, NULL, 'M' },
	{ "user-threads-only", no_argument, NULL, 'u' },
	{ "kernel-threads-only", no_argument, NULL, 'k' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "no-symtabs", no_argument, NULL, OPT_NO_SYMTABS },
	{ "embed-objects", no_argument, NULL, OPT_EMBED_OBJECTS },
	{ "max-kprobes", required_argument, NULL, OPT_MAX_KPROBES },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF_SIZE },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
	{ "all-kallsyms", no_argument, NULL, OPT_ALL_KALLSYMS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

static const char usage_text[] =
	"usage: stkrec [OPTIONS] [SPEC...] [-- COMMAND [ARG...]]\n"
	"Count stack traces in the kernel with eBPF and write them to a capture file.\n"
	"\n"
	"SPEC (bcc stackcount syntax; none: timed sampling of all CPUs, like bcc profile):\n"
	"  t:CATEGORY:EVENT       tracepoint (wildcards in both parts)\n"
	"  LIB:FUNC, p:LIB:FUNC   uprobe on FUNC in LIB (c = libc), /path/to/binary:FUNC\n"
	"  u:LIB:PROBE            USDT probe\n"
	"  FUNC, p::FUNC          kernel function (kprobe)\n"
	"\n"
	"  -o, --output FILE          capture file (default stkrec.stk)\n"
	"  -p, --pid PID[,PID..]      only these processes\n"
	"  -L, -t, --tid TID[,TID..]  only these threads\n"
	"  -K, --kernel-stacks-only   -U, --user-stacks-only\n"
	"  -i, --interval SECS        snapshot interval (default 1)\n"
	"  -D, --duration SECS        stop after SECS\n"
	"  -r, --regexp               SPEC patterns are regular expressions\n"
	"  -l, --list                 print what each SPEC attaches to (none: every\n"
	"                             tracepoint), one SPEC per line, and exit (bpftrace -l)\n"
	"  -F, --frequency HZ         sampling frequency (default 49)\n"
	"  -c, --count N              sample every N events instead of -F; with a SPEC,\n"
	"                             the CPU to trace (bcc stackcount's -c)\n"
	"  -C, --cpu CPU              events (samples) of this CPU only\n"
	"  -I, --include-idle         keep the idle task (pid 0)\n"
	"  -e, --event EVENT          sampling event: cpu-clock (default), task-clock,\n"
	"                             page-faults, context-switches, cpu-migrations, cycles,\n"
	"                             instructions, cache-misses, branch-misses\n"
	"      --snoop                record every event with its time and CPU (bcc stacksnoop)\n"
	"      --ringbuf-size MB      --snoop ring buffer size (default 16)\n"
	"      --offcpu               off-CPU time: stacks of blocked tasks, weighted by usecs\n"
	"  -m, --min-block USECS      --offcpu: ignore blocks shorter than USECS (default 1)\n"
	"  -M, --max-block USECS      --offcpu: ignore blocks longer than USECS\n"
	"  -u, --user-threads-only    --offcpu: user threads only (no kernel threads)\n"
	"  -k, --kernel-threads-only  --offcpu: kernel threads only\n"
	"      --state MASK           --offcpu: tasks blocking in these states only (bcc\n"
	"                             offcputime: 0 runnable, 1 interruptible, 2 uninterruptible)\n"
	"      --max-kprobes N        refuse a kernel-function pattern matching more (default 1000)\n"
	"      --unwind fp|cfi|auto   user stacks: frame pointers, CFI (.eh_frame), or CFI where\n"
	"                             an object has it and frame pointers elsewhere (default)\n"
	"      --unwind-memory MB     most memory for the CFI tables of all objects, taken as\n"
	"                             they fill (default 64)\n"
	"      --no-symtabs           do not embed symbol tables of the objects with hits\n"
	"      --embed-objects        embed whole object files (a postmortem archive)\n"
	"      --all-kallsyms         copy all of /proc/kallsyms, not only the symbols hit\n"
	"      --stack-storage-size N stack-map entries (default 16384; a profile: what an\n"
	"                             interval at -F Hz can fill, 1024 at least)\n"
	"      --hash-storage-size N  counts-map entries (default 40960; a profile: likewise)\n"
	"  -q, --quiet                no live status line\n"
	"  -h, --help                 -V, --version\n"
	"  -- COMMAND ARGS            run COMMAND, trace only it, stop when it exits\n";

int rec_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int rec_parse_id_list(const char *s, uint32_t **ids, uint32_t *n)
{
	uint32_t *v = NULL, count = 0;
	const char *p = s;
	int err = -EINVAL;

	if (!*s)
		return -EINVAL;
	while (*p) {
		char buf[16];
		size_t len = strcspn(p, ",");
		uint64_t id;
		uint32_t *nv;

		if (!len || len >= sizeof(buf))
			goto out;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (rec_parse_u64(buf, 1, INT_MAX, &id))
			goto out;
		nv = realloc(v, (count + 1) * sizeof(*v));
		if (!nv) {
			err = -ENOMEM;
			goto out;
		}
		v = nv;
		v[count++] = id;
		p += len;
		if (*p == ',' && !*++p)
			goto out;	/* trailing comma */
	}
	*ids = v;
	*n = count;
	return 0;
out:
	free(v);
	return err;
}

static int usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "stkrec: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'stkrec --help' for more information.\n");
	return -EINVAL;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The "--" that starts COMMAND; getopt would swallow it, so find it first. */
static int command_index(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return argc;
}

static int parse_one(int c, const char *arg, struct rec_opts *o)
{
	uint64_t v;

	switch (c) {
	case 'o':
		if (!*arg)
			return usage_err("empty output file name%s", "");
		o->output = arg;
		return 0;
	case 'p':
		free(o->pids);
		o->pids = NULL;
		if (rec_parse_id_list(arg, &o->pids, &o->npids))
			return usage_err("invalid pid list '%s'", arg);
		return 0;
	case 'l':
		o->list = true;
		return 0;
	case 't':
	case 'L':
		free(o->tids);
		o->tids = NULL;
		if (rec_parse_id_list(arg, &o->tids, &o->ntids))
			return usage_err("invalid thread id list '%s'", arg);
		return 0;
	case 'K':
		o->kernel_only = true;
		return 0;
	case 'U':
		o->user_only = true;
		return 0;
	case 'i':
		if (rec_parse_u64(arg, 1, 86400, &v))
			return usage_err("invalid interval '%s' (seconds, 1 to 86400)", arg);
		o->interval_s = v;
		return 0;
	case 'D':
		if (rec_parse_u64(arg, 1, UINT_MAX, &v))
			return usage_err("invalid duration '%s' (seconds, at least 1)", arg);
		o->duration_s = v;
		return 0;
	case 'r':
		o->regexp = true;
		return 0;
	case 'F':
		if (rec_parse_u64(arg, 1, 100000, &v))
			return usage_err("invalid frequency '%s' (1 to 100000 Hz)", arg);
		o->freq_hz = v;
		o->period = 0;
		return 0;
	case 'c':	/* profile's sample period, or stackcount's CPU: resolve_c() */
		if (rec_parse_u64(arg, 0, UINT64_MAX >> 1, &v))
			return usage_err("invalid -c '%s' (a sample period, or a CPU with a SPEC)", arg);
		o->c_value = v;
		o->c_given = true;
		o->period = v;
		o->freq_hz = 0;
		return 0;
	case 'C':
		if (rec_parse_u64(arg, 0, 65535, &v))
			return usage_err("invalid cpu '%s'", arg);
		o->cpu = v;
		return 0;
	case 'I':
		o->include_idle = true;
		return 0;
	case OPT_STACK_STORAGE:
		if (rec_parse_u64(arg, 1, 1u << 24, &v))
			return usage_err("invalid --stack-storage-size '%s' (1 to 16777216)", arg);
		o->stack_storage_size = v;
		return 0;
	case OPT_HASH_STORAGE:
		if (rec_parse_u64(arg, 1, 1u << 24, &v))
			return usage_err("invalid --hash-storage-size '%s' (1 to 16777216)", arg);
		o->hash_storage_size = v;
		return 0;
	case 'e':
		if (!*arg)
			return usage_err("empty event name%s", "");
		if (!rec_event_find(arg)) {
			char names[256], msg[512];

			rec_event_names(names, sizeof(names));
			snprintf(msg, sizeof(msg), "unknown event '%.64s' (events: %s)", arg, names);
			return usage_err("%s", msg);
		}
		o->event = arg;
		return 0;
	case OPT_SNOOP:
		o->snoop = true;
		return 0;
	case OPT_UNWIND:
		for (v = STK_UNWIND_FP; v <= STK_UNWIND_AUTO; v++)
			if (!strcmp(arg, rec_unwind_mode_name(v)))
				break;
		if (v > STK_UNWIND_AUTO)
			return usage_err("invalid --unwind '%s' (fp, cfi or auto)", arg);
		o->unwind = v;
		return 0;
	case OPT_UNWIND_MEMORY:
		if (rec_parse_u64(arg, 1, 4096, &v))
			return usage_err("invalid --unwind-memory '%s' (1 to 4096 MB)", arg);
		o->unwind_mb = v;
		return 0;
	case OPT_RINGBUF_SIZE:
		if (rec_parse_u64(arg, 1, 1024, &v) || (v & (v - 1)))
			return usage_err("invalid --ringbuf-size '%s' (MB, a power of two up to 1024)",
					 arg);
		o->ringbuf_mb = v;
		return 0;
	case OPT_OFFCPU:
		o->offcpu = true;
		return 0;
	case 'u':
	case 'k':
		o->threads = c == 'u' ? STK_THREADS_USER : STK_THREADS_KERNEL;
		o->offcpu_filter_given = true;
		return 0;
	case OPT_STATE:
		if (rec_parse_u64(arg, 0, UINT32_MAX, &v))
			return usage_err("invalid --state '%s' (a task state bitmask)", arg);
		o->state = (int64_t)v;
		o->offcpu_filter_given = true;
		return 0;
	case 'm':
	case OPT_MIN_BLOCK:
		if (rec_parse_u64(arg, 0, UINT64_MAX / 1000, &v))
			return usage_err("invalid --min-block '%s' (microseconds)", arg);
		o->min_block_us = v;
		o->offcpu_filter_given = true;
		return 0;
	case 'M':
	case OPT_MAX_BLOCK:
		if (rec_parse_u64(arg, 1, UINT64_MAX / 1000, &v))
			return usage_err("invalid --max-block '%s' (microseconds)", arg);
		o->max_block_us = v;
		o->offcpu_filter_given = true;
		return 0;
	case OPT_NO_SYMTABS:
		o->no_symtabs = true;
		return 0;
	case OPT_EMBED_OBJECTS:
		o->embed_objects = true;
		return 0;
	case OPT_ALL_KALLSYMS:
		o->all_kallsyms = true;
		return 0;
	case OPT_MAX_KPROBES:
		if (rec_parse_u64(arg, 1, 100000, &v))
			return usage_err("invalid --max-kprobes '%s' (1 to 100000)", arg);
		o->max_kprobes = v;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'h':
		fputs(usage_text, stdout);
		return 1;
	case 'V':
		printf("stkrec %s\n", STK_VERSION);
		return 1;
	default:	/* getopt_long returns only the options above, '?' and ':' */
		return -EINVAL;
	}
}

/* The option getopt refused, as the user wrote it (short options may be bundled: -Kx). */
static const char *refused_option(char **argv, char *buf, size_t len)
{
	if (optopt) {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	return argv[optind - 1];
}

/*
 * bcc options that shape the printed report: stkrec records, stkreport prints, so each gets a
 * one-line refusal naming its equivalent instead of "unrecognized".
 */
#define REPORT_OPTION(shrt, lng, what) \
	{ shrt, lng, "is a report option (bcc): record, then use stkreport " what }
static const struct {
	const char *shrt, *lng, *why;	/* why: what the one-line refusal says after the option */
} elsewhere[] = {
	REPORT_OPTION("-f", "--folded", "-f FILE"),
	REPORT_OPTION("-d", "--delimited", "-d FILE"),
	REPORT_OPTION("-a", "--annotations", "-a FILE"),
	REPORT_OPTION("-A", "--address", "-v FILE (raw addresses)"),
	REPORT_OPTION("-P", "--perpid", "-P FILE"),
	REPORT_OPTION("-s", "--offset", "-s FILE"),
	REPORT_OPTION("-v", "--verbose", "-v FILE"),
	REPORT_OPTION("-T", "--timestamp", "-T FILE"),
	{ NULL, "--ebpf", "(bcc) prints BPF C that stkrec does not have: its programs are "
			  "compiled in (bpftool prog dump xlated shows them)" },
	{ NULL, "--debug", "(bcc) prints BPF C that stkrec does not have: its programs are "
			   "compiled in (bpftool prog dump xlated shows them)" },
	{ NULL, "--cgroupmap", "(bcc) is not supported: select processes with -p PID" },
	{ NULL, "--mntnsmap", "(bcc) is not supported: select processes with -p PID" },
};

static const char *refusal_of(const char *opt)
{
	size_t n = strcspn(opt, "=");

	for (size_t i = 0; i < sizeof(elsewhere) / sizeof(elsewhere[0]); i++)
		if ((elsewhere[i].shrt && !strcmp(opt, elsewhere[i].shrt)) ||
		    (strlen(elsewhere[i].lng) == n && !strncmp(opt, elsewhere[i].lng, n)))
			return elsewhere[i].why;
	return NULL;
}

/* Room for need: the least power of two from lo that holds it, no larger than hi. */
static uint32_t room_for(uint64_t need, uint32_t lo, uint32_t hi)
{
	uint32_t v = lo;

	while (v < need && v < hi)
		v <<= 1;
	return v < hi ? v : hi;
}

/*
 * The ring of deferred walks (docs/bpf.md 7) is created whole, 16 MiB: some 500 events of 32 KiB
 * (most are far shorter, few reach STK_DEFER_STACK), for bursts of a probe that fires as fast as
 * a program can call it. A profile's events come at most Hz x CPUs a second, and stkrec takes
 * them out of the ring as they come: an eighth of a second of them all deferred at 32 KiB, from
 * 1 MiB up. At 999 Hz on 2 CPUs that is 8 MiB; with copies of 16 KiB the most it held there was
 * 1.5 MiB, at the start of a system-wide profile of two CPU burners and two compile loops (every
 * process's first events deferred). 16 MiB took 3-4 ms to create, a twentieth of a short
 * recording's CPU.
 */
#define DEFER_RING_MAX (16u << 20)
#define DEFER_RING_EVENT (32u << 10)

/*
 * The BPF maps' sizes, unless given: bcc's defaults (16384 stacks, 40960 counts), but for a
 * profile at -F Hz, which makes at most Hz x CPUs samples a second, each one count key and two
 * stacks: room for an interval's worth. Distinct stacks and keys are far fewer than samples in
 * most profiles, and at half full the maps are drained early (docs/bpf.md 3), so a profile of
 * all-distinct stacks drains twice an interval rather than losing any. The maps are
 * preallocated, about 1 KiB a stack: at 999 Hz on 2 CPUs the 2.5 times used before took 36 MB,
 * more to create than the rest of a short recording costs.
 */
static void size_storage(struct rec_opts *o)
{
	long ncpus = o->cpu >= 0 ? 1 : sysconf(_SC_NPROCESSORS_CONF);
	uint64_t per_sec = (uint64_t)o->freq_hz * (ncpus > 0 ? ncpus : 1);
	uint64_t samples = per_sec * o->interval_s;
	bool profile = !o->nspecs && !o->offcpu && o->freq_hz;

	if (!o->stack_storage_size)
		o->stack_storage_size = profile ? room_for(2 * samples, 1024, 16384) : 16384;
	if (!o->hash_storage_size)
		o->hash_storage_size = profile ? room_for(samples, 1024, 40960) : 40960;
	o->defer_ring_bytes = profile ? room_for(per_sec * DEFER_RING_EVENT / 8, 1u << 20,
						 DEFER_RING_MAX) : DEFER_RING_MAX;
}

static void set_defaults(struct rec_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->output = "stkrec.stk";
	o->interval_s = 1;
	o->cpu = -1;	/* freq_hz and period: rec_event_defaults(), once -F and -c are known */
	o->stack_storage_size = 0;	/* 0: sized by size_storage() */
	o->hash_storage_size = 0;
	o->unwind = STK_UNWIND_AUTO;
	o->unwind_mb = 64;
	o->ringbuf_mb = 16;
	o->min_block_us = 1;
	o->state = -1;
	o->max_block_us = UINT64_MAX / 1000;
	o->max_kprobes = 1000;
	o->argc = argc;
	o->argv = argv;
}

/*
 * bcc gives -c two meanings: stackcount's CPU to trace, profile's sample period. A probe SPEC
 * makes it stackcount's (as -C); without one it is profile's.
 */
static int resolve_c(struct rec_opts *o)
{
	if (!o->c_given)
		return 0;
	if (o->nspecs) {
		if (o->c_value > 65535)
			return usage_err("invalid cpu '%s' (-c with a SPEC is the CPU, as in bcc "
					 "stackcount)", "> 65535");
		o->cpu = (int)o->c_value;
		o->period = 0;
		return 0;
	}
	if (!o->c_value && !o->freq_hz)
		return usage_err("invalid sample period '0'%s", "");
	return 0;
}

/* --snoop, --offcpu and -e select modes: refuse the combinations that mean nothing. */
static int check_modes(const struct rec_opts *o)
{
	if (o->offcpu && o->nspecs)
		return usage_err("--offcpu takes no probe SPEC (it traces sched_switch)%s", "");
	if (o->offcpu && o->snoop)
		return usage_err("--offcpu and --snoop exclude each other%s", "");
	if (o->event && (o->nspecs || o->offcpu))
		return usage_err("-e selects the sampling event: it takes no SPEC and no --offcpu%s",
				 "");
	if (o->snoop && !o->nspecs)
		return usage_err("--snoop needs a probe SPEC (bcc stacksnoop traces functions)%s",
				 "");
	if (o->offcpu_filter_given && !o->offcpu)
		return usage_err("-m/--min-block, -M/--max-block, -u, -k and --state apply to "
				 "--offcpu%s", "");
	if (o->min_block_us > o->max_block_us)
		return usage_err("--min-block is above --max-block%s", "");
	return 0;
}

int rec_parse_opts(int argc, char **argv, struct rec_opts *o)
{
	int cmd = command_index(argc, argv);
	int c, err;
	char opt[3];

	set_defaults(o, argc, argv);
	optind = 1;
	opterr = 0;	/* our own one-line messages, without argv[0]'s full path */
	while ((c = getopt_long(cmd, argv, SHORT_OPTS, long_opts, NULL)) != -1) {
		if (c == ':')
			return usage_err("option '%s' needs an argument",
					 refused_option(argv, opt, sizeof(opt)));
		if (c == '?') {
			const char *bad = refused_option(argv, opt, sizeof(opt));
			const char *why = refusal_of(bad);

			if (why) {
				fprintf(stderr, "stkrec: %s %s\n", bad, why);
				return -EINVAL;
			}
			return usage_err("unrecognized option '%s'", bad);
		}
		err = parse_one(c, optarg, o);
		if (err)
			return err;
	}
	o->specs = argv + optind;
	o->nspecs = cmd - optind;
	if (cmd < argc) {
		if (cmd + 1 >= argc)
			return usage_err("no COMMAND after '--'%s", "");
		o->command = argv + cmd + 1;
	}
	if (o->kernel_only && o->user_only)
		return usage_err("-K and -U exclude each other%s", "");
	/* bcc profile: a trailing all-digit positional argument is the duration. */
	if (o->nspecs == 1 && all_digits(o->specs[0])) {
		uint64_t v;

		if (rec_parse_u64(o->specs[0], 1, UINT_MAX, &v))
			return usage_err("invalid duration '%s'", o->specs[0]);
		o->duration_s = v;
		o->nspecs = 0;
	}
	if (o->command && o->npids)
		return usage_err("-p and -- COMMAND exclude each other%s", "");
	err = resolve_c(o);
	if (err)
		return err;
	rec_event_defaults(o);	/* without -F and -c: 49 Hz, or period 1 (probe/events.c) */
	size_storage(o);
	return check_modes(o);
}

void rec_opts__free(struct rec_opts *o)
{
	free(o->pids);
	free(o->tids);
	o->pids = NULL;
	o->tids = NULL;
}
