// SPDX-License-Identifier: MIT
/* opts.c: stkrec's command line (getopt_long) into struct rec_opts. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stk/cli.h>

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
	OPT_ROTATE,
	OPT_MAX_FILES,
	OPT_MAX_DISK,
	OPT_FLIGHT,
	OPT_FLIGHT_MEMORY,
	OPT_DUMP_ON_EXIT,
	OPT_PYTHON_FRAMES,
	OPT_PYTHON_NAMES,
	OPT_CHILDREN,
	OPT_NO_INHERIT,
	OPT__COUNT	/* last: options given are counted in an array of this size */
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
	{ "python-frames", required_argument, NULL, OPT_PYTHON_FRAMES },
	{ "python-names", required_argument, NULL, OPT_PYTHON_NAMES },
	{ "all-kallsyms", no_argument, NULL, OPT_ALL_KALLSYMS },
	{ "rotate", required_argument, NULL, OPT_ROTATE },
	{ "max-files", required_argument, NULL, OPT_MAX_FILES },
	{ "max-disk", required_argument, NULL, OPT_MAX_DISK },
	{ "flight", required_argument, NULL, OPT_FLIGHT },
	{ "flight-memory", required_argument, NULL, OPT_FLIGHT_MEMORY },
	{ "dump-on-exit", no_argument, NULL, OPT_DUMP_ON_EXIT },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

static const char usage_text[] =
	"usage: stkrec [OPTIONS] [SPEC...] [DURATION] [-- COMMAND [ARG...]]\n"
	"Count stack traces in the kernel with eBPF and write them to a capture file.\n"
	"\n"
	"SPEC (bcc stackcount syntax; none: timed sampling of all CPUs, like bcc profile; a\n"
	"last argument of digits only is the duration, as bcc profile's):\n"
	"  t:CATEGORY:EVENT       tracepoint (wildcards in both parts)\n"
	"  LIB:FUNC, p:LIB:FUNC   uprobe on FUNC in LIB (c = libc), /path/to/binary:FUNC\n"
	"  u:LIB:PROBE            USDT probe\n"
	"  FUNC, p::FUNC          kernel function (kprobe)\n"
	"\n"
	"  -o, --output FILE          capture file (default stkrec.stk)\n"
	"  -p, --pid PID[,PID..]      only these processes\n"
	"      --children             -p: and every process they start (and theirs)\n"
	"      --no-inherit           -- COMMAND: the command alone, not what it starts\n"
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
	"                             instructions, cache-misses, branch-misses (perf's other\n"
	"                             names too: cpu-cycles, faults, cs, migrations)\n"
	"      --snoop                record every event with its time and CPU (bcc stacksnoop)\n"
	"      --ringbuf-size MB      --snoop ring buffer size (default 16)\n"
	"      --offcpu               off-CPU time: stacks of blocked tasks, weighted by usecs\n"
	"  -m, --min-block, --min-block-time USECS\n"
	"                             --offcpu: ignore blocks shorter than USECS (default 1)\n"
	"  -M, --max-block, --max-block-time USECS\n"
	"                             --offcpu: ignore blocks longer than USECS\n"
	"  -u, --user-threads-only    --offcpu: user threads only (no kernel threads)\n"
	"  -k, --kernel-threads-only  --offcpu: kernel threads only\n"
	"      --state MASK           --offcpu: tasks blocking in these states only (bcc\n"
	"                             offcputime: 0 runnable, 1 interruptible, 2 uninterruptible)\n"
	"      --max-kprobes N        refuse a kernel-function pattern matching more (default 1000)\n"
	"      --unwind fp|cfi|auto   user stacks: frame pointers, CFI (.eh_frame), or CFI where\n"
	"                             an object has it and frame pointers elsewhere (default)\n"
	"      --unwind-memory MB     most memory for the CFI tables of all objects, taken as\n"
	"                             they fill (default 64)\n"
	"      --python-frames native|python|mixed\n"
	"                             CPython's frames spliced into user stacks (python, the\n"
	"                             default, and mixed record them; native: the interpreter's)\n"
	"      --python-names N       most Python code objects named (default 16384)\n"
	"      --no-symtabs           do not embed symbol tables of the objects with hits\n"
	"      --embed-objects        embed whole object files (a postmortem archive)\n"
	"      --all-kallsyms         copy all of /proc/kallsyms, not only the symbols hit\n"
	"      --stack-storage-size N stack-map entries (default 16384; a profile: what an\n"
	"                             interval at -F Hz can fill, 1024 at least)\n"
	"      --hash-storage-size N  counts-map entries (default 40960; a profile: likewise)\n"
	"      --rotate SECS|SIZE|signal  a new file at the first interval end past SECS\n"
	"                             (suffix s, m, h, d) or SIZE (B, K, M, G), or only on\n"
	"                             SIGHUP/SIGUSR2 (which rotate in every case), each\n"
	"                             named FILE-YYYYmmddTHHMMSS.mmmZ.stk (start time, UTC)\n"
	"      --max-files N          keep the newest N files of --rotate or --flight\n"
	"      --max-disk SIZE        keep the newest files within SIZE (B, K, M, G)\n"
	"      --flight SECS          flight recorder: keep the last SECS in memory, write\n"
	"                             them as one file on SIGUSR1, go on recording\n"
	"      --flight-memory MB     most memory the flight recorder keeps (default 256)\n"
	"      --dump-on-exit         --flight: write the last SECS at the end too\n"
	"  -q, --quiet                no live status line\n"
	"  -h, --help                 -V, --version\n"
	"  -- COMMAND ARGS            run COMMAND, trace it and every process it starts,\n"
	"                             stop when it exits\n";

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

/* "SIZE[B|K|M|G]" (perf's suffixes; none: bytes) into bytes, at least 1. */
static int parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "BKMG";
	char num[24];
	size_t n = strspn(s, "0123456789");
	const char *u = s[n] ? strchr(units, s[n]) : units;
	uint64_t v;

	if (!n || n >= sizeof(num) || !u || (s[n] && s[n + 1]))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = 0;
	if (rec_parse_u64(num, 1, UINT64_MAX >> (10 * (u - units)), &v))
		return -EINVAL;
	*bytes = v << (10 * (u - units));
	return 0;
}

/* "SECS[s|m|h|d]" (perf's suffixes) into ns, 1 s to a year. */
static int parse_secs(const char *s, uint64_t *ns)
{
	static const struct { char c; uint64_t s; } units[] = {
		{ 0, 1 }, { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	char num[24];
	size_t n = strspn(s, "0123456789");
	uint64_t v;

	if (!n || n >= sizeof(num) || (s[n] && s[n + 1]))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (units[i].c == s[n]) {
			if (rec_parse_u64(num, 1, 366 * 86400 / units[i].s, &v))
				return -EINVAL;
			*ns = v * units[i].s * 1000000000ull;
			return 0;
		}
	return -EINVAL;
}

/*
 * --rotate: SECS (or with s, m, h, d), SIZE (with B, K, M, G, as perf's --switch-output) or
 * "signal": only SIGHUP and SIGUSR2 rotate.
 */
static int parse_rotate(const char *arg, struct rec_opts *o)
{
	o->rotate = arg;
	o->rotate_ns = o->rotate_bytes = 0;
	if (!strcmp(arg, "signal") || !parse_secs(arg, &o->rotate_ns) ||
	    !parse_size(arg, &o->rotate_bytes))
		return 0;
	return -EINVAL;
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
		o->event = rec_event_find(arg)->name;	/* perf's aliases by our name */
		return 0;
	case OPT_SNOOP:
		o->snoop = true;
		return 0;
	case OPT_CHILDREN:
		o->children = true;
		return 0;
	case OPT_NO_INHERIT:
		o->no_inherit = true;
		return 0;
	case OPT_UNWIND:
		for (v = STK_UNWIND_FP; v <= STK_UNWIND_AUTO; v++)
			if (!strcmp(arg, rec_unwind_mode_name(v)))
				break;
		if (v > STK_UNWIND_AUTO)
			return usage_err("invalid --unwind '%s' (fp, cfi or auto)", arg);
		o->unwind = v;
		return 0;
	case OPT_PYTHON_FRAMES:
		for (v = REC_PYFRAMES_NATIVE; v <= REC_PYFRAMES_MIXED; v++)
			if (!strcmp(arg, rec_python_frames_name(v)))
				break;
		if (v > REC_PYFRAMES_MIXED)
			return usage_err("invalid --python-frames '%s' (native, python or mixed)", arg);
		o->python_frames = v;
		return 0;
	case OPT_PYTHON_NAMES:
		if (rec_parse_u64(arg, 1, 1u << 24, &v))
			return usage_err("invalid --python-names '%s' (1 to 16777216)", arg);
		o->python_names = v;
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
		return 0;
	case OPT_STATE:
		if (rec_parse_u64(arg, 0, UINT32_MAX, &v))
			return usage_err("invalid --state '%s' (a task state bitmask)", arg);
		o->state = (int64_t)v;
		return 0;
	case 'm':
	case OPT_MIN_BLOCK:
		if (rec_parse_u64(arg, 0, UINT64_MAX / 1000, &v))
			return usage_err("invalid --min-block '%s' (microseconds)", arg);
		o->min_block_us = v;
		return 0;
	case 'M':
	case OPT_MAX_BLOCK:
		if (rec_parse_u64(arg, 1, UINT64_MAX / 1000, &v))
			return usage_err("invalid --max-block '%s' (microseconds)", arg);
		o->max_block_us = v;
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
	case OPT_ROTATE:
		if (parse_rotate(arg, o))
			return usage_err("invalid --rotate '%s' (SECS with s, m, h or d; SIZE with B, "
					 "K, M or G; or signal)", arg);
		return 0;
	case OPT_MAX_FILES:
		if (rec_parse_u64(arg, 1, 1000000, &v))
			return usage_err("invalid --max-files '%s' (1 to 1000000)", arg);
		o->max_files = v;
		return 0;
	case OPT_MAX_DISK:
		if (parse_size(arg, &o->max_disk))
			return usage_err("invalid --max-disk '%s' (SIZE with B, K, M or G)", arg);
		return 0;
	case OPT_FLIGHT:
		if (rec_parse_u64(arg, 1, 86400, &v))
			return usage_err("invalid --flight '%s' (seconds, 1 to 86400)", arg);
		o->flight_s = v;
		return 0;
	case OPT_FLIGHT_MEMORY:
		if (rec_parse_u64(arg, 1, 65536, &v))
			return usage_err("invalid --flight-memory '%s' (1 to 65536 MB)", arg);
		o->flight_mb = v;
		return 0;
	case OPT_DUMP_ON_EXIT:
		o->dump_on_exit = true;
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
	REPORT_OPTION("-A", "--address", "-A FILE (raw addresses)"),
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
	o->python_frames = REC_PYFRAMES_PYTHON;
	o->python_names = 16384;
	o->ringbuf_mb = 16;
	o->min_block_us = 1;
	o->state = -1;
	o->max_block_us = UINT64_MAX / 1000;
	o->max_kprobes = 1000;
	o->flight_mb = 256;
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

/*
 * What a run does: one of these (run_mode()). Each option means something in some of them
 * (applies[]); given in another, it is a usage error, never a silent no-op.
 */
enum {
	MODE_SAMPLE = 1 << 0,	/* no SPEC: timed sampling (bcc profile), or of -e EVENT */
	MODE_COUNT = 1 << 1,	/* SPECs: every event counted (bcc stackcount) */
	MODE_SNOOP = 1 << 2,	/* --snoop SPEC: every event recorded (bcc stacksnoop) */
	MODE_OFFCPU = 1 << 3,	/* --offcpu (bcc offcputime) */
	MODE_LIST = 1 << 4,	/* -l: what SPECs attach to */
	MODE__COUNT = 5,
	MODE_RECORD = MODE_SAMPLE | MODE_COUNT | MODE_SNOOP | MODE_OFFCPU,
	MODE_PROBES = MODE_COUNT | MODE_SNOOP,
};

static const char *const mode_names[MODE__COUNT] = {
	"sampling", "probe SPECs", "--snoop", "--offcpu", "-l",
};

/* Where each option that does not apply to every run means something; -q and -h apply to all. */
static const struct stk_applies applies[] = {
	{ 'o', MODE_RECORD },
	{ 'L', MODE_RECORD },
	{ 't', MODE_RECORD },
	{ 'K', MODE_RECORD },
	{ 'U', MODE_RECORD },
	{ 'i', MODE_RECORD },
	{ 'D', MODE_RECORD },
	{ 'r', MODE_PROBES | MODE_LIST },
	{ 'F', MODE_SAMPLE },
	{ 'c', MODE_SAMPLE | MODE_PROBES },
	{ 'C', MODE_RECORD },
	{ 'I', MODE_SAMPLE },
	{ 'e', MODE_SAMPLE },
	{ OPT_RINGBUF_SIZE, MODE_SNOOP },
	{ 'm', MODE_OFFCPU },
	{ OPT_MIN_BLOCK, MODE_OFFCPU },
	{ 'M', MODE_OFFCPU },
	{ OPT_MAX_BLOCK, MODE_OFFCPU },
	{ 'u', MODE_OFFCPU },
	{ 'k', MODE_OFFCPU },
	{ OPT_STATE, MODE_OFFCPU },
	{ OPT_STACK_STORAGE, MODE_RECORD },
	{ OPT_HASH_STORAGE, MODE_RECORD },
	{ OPT_MAX_KPROBES, MODE_PROBES | MODE_LIST },
	{ OPT_UNWIND, MODE_RECORD },
	{ OPT_UNWIND_MEMORY, MODE_RECORD },
	{ OPT_NO_SYMTABS, MODE_RECORD },
	{ OPT_EMBED_OBJECTS, MODE_RECORD },
	{ OPT_ALL_KALLSYMS, MODE_RECORD },
	{ OPT_ROTATE, MODE_RECORD },
	{ OPT_MAX_FILES, MODE_RECORD },
	{ OPT_MAX_DISK, MODE_RECORD },
	{ OPT_FLIGHT, MODE_RECORD },
	{ OPT_FLIGHT_MEMORY, MODE_RECORD },
	{ OPT_DUMP_ON_EXIT, MODE_RECORD },
	{ OPT_PYTHON_FRAMES, MODE_RECORD },
	{ OPT_PYTHON_NAMES, MODE_RECORD },
	{ OPT_CHILDREN, MODE_RECORD },
	{ OPT_NO_INHERIT, MODE_RECORD },
};

static unsigned int run_mode(const struct rec_opts *o)
{
	if (o->list)
		return MODE_LIST;
	if (o->offcpu)
		return MODE_OFFCPU;
	if (o->snoop)
		return MODE_SNOOP;
	return o->nspecs ? MODE_COUNT : MODE_SAMPLE;
}

/* Every option given means something in the run (applies[]). */
static int check_applies(const struct rec_opts *o, const bool *given)
{
	unsigned int mode = run_mode(o);
	char name[32], where[160];
	int i;

	if (o->command && mode == MODE_LIST)
		return usage_err("-l records nothing: it takes no -- COMMAND%s", "");
	i = stk_misplaced(applies, sizeof(applies) / sizeof(applies[0]), given, mode, mode_names,
			  where, sizeof(where));
	if (i < 0)
		return 0;
	fprintf(stderr, "stkrec: %s does not apply to %s (only to %s)\n"
		"Try 'stkrec --help' for more information.\n",
		stk_option_name(applies[i].opt, long_opts, name, sizeof(name)),
		mode_names[__builtin_ctz(mode)],
		applies[i].where == MODE_RECORD ? "recording" : where);
	return -EINVAL;
}

/*
 * Options that exclude each other, as bcc's tools refuse them (argparse's mutually exclusive
 * groups in profile.py and offcputime.py: -p/-L; -p/-t/-u/-k; -U/-K; -F/-c; and offcputime's
 * "Displaying user stacks for kernel threads doesn't make sense"), and ours.
 */
static int check_exclusions(const struct rec_opts *o, const bool *given)
{
	if (o->kernel_only && o->user_only)
		return usage_err("-K and -U exclude each other%s", "");
	if (given['F'] && given['c'])
		return usage_err("-F and -c exclude each other (a frequency or a period, as in bcc "
				 "profile)%s", "");
	if (o->npids && o->ntids)
		return usage_err("-p and -L/-t exclude each other (as in bcc profile and "
				 "offcputime)%s", "");
	if (given['u'] && given['k'])
		return usage_err("-u and -k exclude each other (as in bcc offcputime)%s", "");
	if ((given['u'] || given['k']) && (o->npids || o->ntids))
		return usage_err("-u and -k exclude -p and -t (as in bcc offcputime)%s", "");
	if (given['k'] && o->user_only)
		return usage_err("-k with -U: kernel threads have no user stacks (as bcc offcputime "
				 "says)%s", "");
	if (o->command && o->npids)
		return usage_err("-p and -- COMMAND exclude each other%s", "");
	if (o->children && !o->npids)
		return usage_err("--children follows the processes of -p PID%s", "");
	if (o->no_inherit && !o->command)
		return usage_err("--no-inherit applies to -- COMMAND%s", "");
	if (o->no_symtabs && o->embed_objects)
		return usage_err("--no-symtabs and --embed-objects exclude each other (whole objects "
				 "hold their symbol tables)%s", "");
	if (o->offcpu && o->nspecs)
		return usage_err("--offcpu takes no probe SPEC (it traces sched_switch)%s", "");
	if (o->offcpu && o->snoop)
		return usage_err("--offcpu and --snoop exclude each other%s", "");
	if (o->snoop && !o->nspecs)
		return usage_err("--snoop needs a probe SPEC (bcc stacksnoop traces functions)%s",
				 "");
	if (o->regexp && !o->nspecs)
		return usage_err("-r applies to SPEC patterns: give a SPEC%s", "");
	if (o->min_block_us > o->max_block_us)
		return usage_err("--min-block is above --max-block%s", "");
	/* Python frames ride the CFI walk (docs/bpf.md 10): the kernel's fp walk has none */
	if (given[OPT_PYTHON_FRAMES] && o->python_frames != REC_PYFRAMES_NATIVE &&
	    o->unwind == STK_UNWIND_FP)
		return usage_err("--python-frames %s needs --unwind cfi or auto",
				 rec_python_frames_name(o->python_frames));
	if (given[OPT_PYTHON_NAMES] &&
	    (o->python_frames == REC_PYFRAMES_NATIVE || o->unwind == STK_UNWIND_FP))
		return usage_err("--python-names names Python frames: none are recorded with %s",
				 o->unwind == STK_UNWIND_FP ? "--unwind fp" : "--python-frames native");
	return 0;
}

/*
 * A SPEC's patterns compile (-r: POSIX extended regular expressions): a bad one is a usage
 * error naming it, before any probe is looked for ('(' was taken for a kernel function).
 */
static int check_patterns(const struct rec_opts *o)
{
	struct rec_spec_parts parts;

	for (int i = 0; o->regexp && i < o->nspecs; i++) {
		char *colon;
		const char *pat[2];

		if (rec_spec_split(o->specs[i], &parts))
			continue;	/* said where SPECs are resolved */
		colon = parts.type == 't' ? strchr(parts.pattern, ':') : NULL;
		if (colon)
			*colon = 0;
		pat[0] = parts.pattern;
		pat[1] = colon ? colon + 1 : NULL;
		for (int k = 0; k < 2 && pat[k]; k++) {
			struct rec_matcher *m = rec_matcher__new(pat[k], true);

			if (!m && errno == EINVAL) {
				char msg[512];

				snprintf(msg, sizeof(msg), "invalid regular expression '%.200s' in "
					 "SPEC '%.200s'", pat[k], o->specs[i]);
				return usage_err("%s", msg);
			}
			if (!m)
				return rec_err(-ENOMEM, "out of memory");
			rec_matcher__free(m);
		}
	}
	return 0;
}

/*
 * bcc profile and offcputime: a last argument of digits only is the duration, with SPECs too
 * (no tracepoint, function or library is named so; `stkrec t:... 5` took 5 for a kernel
 * function).
 */
static int trailing_duration(struct rec_opts *o, bool *given)
{
	const char *last = o->nspecs ? o->specs[o->nspecs - 1] : NULL;
	uint64_t v;

	if (!last || !all_digits(last))
		return 0;
	if (o->list)
		return usage_err("-l records nothing: '%s' is not a SPEC", last);
	if (given['D'])
		return usage_err("the duration is given twice: -D and '%s'", last);
	if (rec_parse_u64(last, 1, UINT_MAX, &v))
		return usage_err("invalid duration '%s'", last);
	o->duration_s = v;
	o->nspecs--;
	given['D'] = true;
	return 0;
}

/* --rotate, --flight and their bounds: what goes with what (stkrec(8), ALWAYS ON). */
static int check_always_on(const struct rec_opts *o, const bool *given)
{
	if (o->rotate && o->flight_s)
		return usage_err("--rotate and --flight exclude each other%s", "");
	if ((given[OPT_MAX_FILES] || given[OPT_MAX_DISK]) && !o->rotate && !o->flight_s)
		return usage_err("--max-files and --max-disk bound the files of --rotate or "
				 "--flight%s", "");
	if ((given[OPT_FLIGHT_MEMORY] || o->dump_on_exit) && !o->flight_s)
		return usage_err("--flight-memory and --dump-on-exit apply to --flight%s", "");
	if (o->flight_s && o->flight_s < o->interval_s)
		return usage_err("--flight keeps whole intervals: SECS must be at least -i%s", "");
	return 0;
}

int rec_parse_opts(int argc, char **argv, struct rec_opts *o)
{
	int cmd = command_index(argc, argv);
	bool given[OPT__COUNT] = { false };
	int c, err;
	char opt[8];

	set_defaults(o, argc, argv);
	optind = 1;
	opterr = 0;	/* our own one-line messages, without argv[0]'s full path */
	while ((c = getopt_long(cmd, argv, SHORT_OPTS, long_opts, NULL)) != -1) {
		if (c == ':')
			return usage_err("option '%s' needs an argument",
					 stk_refused_option(argv, long_opts, opt, sizeof(opt)));
		if (c == '?') {
			const char *bad = stk_refused_option(argv, long_opts, opt, sizeof(opt));
			const char *why = refusal_of(bad);

			if (why) {
				fprintf(stderr, "stkrec: %s %s\n", bad, why);
				return -EINVAL;
			}
			/* a known long option given a value it does not take: --list=1 */
			if (optopt && !strncmp(bad, "--", 2))
				return usage_err("option '%s' takes no argument", bad);
			return usage_err("unrecognized option '%s'", bad);
		}
		given[c] = true;
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
	err = trailing_duration(o, given);
	if (!err)
		err = check_exclusions(o, given);
	if (!err)
		err = check_applies(o, given);
	if (!err)
		err = check_patterns(o);
	if (!err)
		err = check_always_on(o, given);
	if (!err)
		err = resolve_c(o);
	if (err)
		return err;
	/* as perf: a command's children are part of the command, a -p process's only if asked */
	o->inherit = o->children || (o->command && !o->no_inherit);
	rec_event_defaults(o);	/* without -F and -c: 49 Hz, or period 1 (probe/events.c) */
	size_storage(o);
	return 0;
}

void rec_opts__free(struct rec_opts *o)
{
	free(o->pids);
	free(o->tids);
	o->pids = NULL;
	o->tids = NULL;
}
