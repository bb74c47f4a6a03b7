// SPDX-License-Identifier: MIT
/* opts.c: stkreport's command line (the contract in the project brief / stkreport(1)). */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include <stk/cli.h>

#include "report.h"

static const char usage[] =
	"Usage: stkreport [OPTIONS] CAPTURE...\n"
	"Print the stacks of stkrec captures as bcc's stackcount, profile or stacksnoop would.\n"
	"Several captures merge into one report.\n"
	"\n"
	"  -i, --input FILE          a capture (or as an argument)\n"
	"  -P, --perpid              one entry per process\n"
	"  -d, --delimited           \"--\" between kernel and user frames (\"-\" when folded)\n"
	"  -s, --offset              show symbol offsets (symbol+0xOFF; profile captures have\n"
	"                            them, and modules, as bcc profile since 0.33)\n"
	"  -v, --verbose             raw addresses; module+offset for unnamed frames\n"
	"  -A, --address             raw addresses before frames (bcc profile -A)\n"
	"  -K, --kernel-stacks-only  kernel frames only\n"
	"  -U, --user-stacks-only    user frames only\n"
	"  -f, --folded              folded output: comm;root;...;leaf count (comm empty\n"
	"                            for probe captures without -P, as in stackcount)\n"
	"  -a, --annotations         append _[k] to kernel frames\n"
	"  -T, --timestamp           one section per interval, headed by its end time\n"
	"      --address-stacks      one entry per distinct stack of addresses, as bcc counts\n"
	"                            (default: entries that print the same are merged)\n"
	"      --old-layout          profile captures as bcc profile printed them before 0.33\n"
	"                            (names only: Debian 12's bpfcc-tools)\n"
	"      --tree                call tree from the roots down with counts and percentages\n"
	"      --tree-min PCT        hide tree nodes below PCT percent of the total\n"
	"      --json                stacks as JSON (with --sql: the result as JSON)\n"
	"\n"
	"Analysis:\n"
	"      --sql QUERY           run an SQLite query over the captures (docs/sql.md)\n"
	"      --csv                 the --sql result as CSV\n"
	"      --sqlite OUT.db       write the captures' SQLite database\n"
	"      --diff                two captures, BEFORE AFTER: folded `stack before after`\n"
	"      --normalize           scale --diff counts by duration and period\n"
	"      --by KEY              keep stacks apart by host|capture|pid|comm|probe|interval\n"
	"      --pprof OUT.pb.gz     write a pprof profile (profile.proto, gzipped)\n"
	"      --svg OUT.svg         write an interactive flame graph\n"
	"      --clickhouse URL      send the rows to ClickHouse (docs/clickhouse.md), e.g.\n"
	"                            http://host:8123/?database=stk\n"
	"      --title TEXT          --svg: the title (flamegraph.pl's --title)\n"
	"      --width PX            --svg: the image width (default 1200)\n"
	"      --inverted            --svg: an icicle graph, the roots on top\n"
	"\n"
	"Filters (every output but --sql and --sqlite, which filter with WHERE):\n"
	"      --pid PID[,PID..]     only these processes\n"
	"      --comm NAME           only tasks with this comm\n"
	"      --probe ID|SPEC       only this probe\n"
	"      --time FROM,TO        seconds from the start (12.5), time of day (10:04:00) or\n"
	"                            date and time (2026-11-22T10:04:00); either end may be empty\n"
	"      --grep REGEX          stacks with a frame matching REGEX\n"
	"      --max-depth N         at most N frames per stack side (the innermost)\n"
	"\n"
	"Symbols:\n"
	"  -l, --lines               source file:line after names, and inlined functions\n"
	"      --inline              frames for inlined functions (implied by -l)\n"
	"      --no-inline           no frames for inlined functions, even with -l\n"
	"      --no-demangle         raw C++ and Rust names\n"
	"      --python-frames native|python|mixed\n"
	"                            Python frames in place of the interpreter's (python, the\n"
	"                            capture's default), the interpreter's only, or both\n"
	"      --no-python-lines     Python frames without their line: one per function\n"
	"      --symfs DIR           look for the capture's objects under DIR first\n"
	"      --debug-dir DIR       look for debug files (build-id layout) under DIR too\n"
	"\n"
	"Limits (hostile captures):\n"
	"      --max-memory MB       decoded data held at a time (default 2048)\n"
	"      --max-debug MB        debug data read for lines and inlines (default 1024)\n"
	"\n"
	"  -q, --quiet               no summary on stderr\n"
	"  -h, --help                this help\n"
	"  -V, --version             print the version\n";

enum {
	OPT_TREE = 256, OPT_TREE_MIN, OPT_SYMFS, OPT_DEBUG_DIR, OPT_INLINE, OPT_NO_INLINE, OPT_NO_DEMANGLE,
	OPT_SQL, OPT_CSV, OPT_JSON, OPT_SQLITE, OPT_DIFF, OPT_NORMALIZE, OPT_BY, OPT_PID, OPT_COMM,
	OPT_PROBE, OPT_TIME, OPT_GREP, OPT_MAX_DEPTH, OPT_PPROF, OPT_SVG, OPT_MAX_MEMORY,
	OPT_MAX_DEBUG, OPT_TITLE, OPT_WIDTH, OPT_INVERTED, OPT_ADDRESS_STACKS, OPT_OLD_LAYOUT,
	OPT_CLICKHOUSE,
	OPT_PYTHON_FRAMES, OPT_NO_PYTHON_LINES,
	OPT__COUNT	/* last: options given are counted in an array of this size */
};

static const struct option long_opts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "perpid", no_argument, NULL, 'P' },
	{ "delimited", no_argument, NULL, 'd' },
	{ "offset", no_argument, NULL, 's' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "folded", no_argument, NULL, 'f' },
	{ "annotations", no_argument, NULL, 'a' },
	{ "timestamp", no_argument, NULL, 'T' },
	{ "address", no_argument, NULL, 'A' },
	{ "address-stacks", no_argument, NULL, OPT_ADDRESS_STACKS },
	{ "old-layout", no_argument, NULL, OPT_OLD_LAYOUT },
	{ "lines", no_argument, NULL, 'l' },
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "tree-min", required_argument, NULL, OPT_TREE_MIN },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "python-frames", required_argument, NULL, OPT_PYTHON_FRAMES },
	{ "no-python-lines", no_argument, NULL, OPT_NO_PYTHON_LINES },
	{ "sql", required_argument, NULL, OPT_SQL },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "sqlite", required_argument, NULL, OPT_SQLITE },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "normalize", no_argument, NULL, OPT_NORMALIZE },
	{ "by", required_argument, NULL, OPT_BY },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "probe", required_argument, NULL, OPT_PROBE },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "grep", required_argument, NULL, OPT_GREP },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "clickhouse", required_argument, NULL, OPT_CLICKHOUSE },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "max-debug", required_argument, NULL, OPT_MAX_DEBUG },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "stkreport: %s%s%s\nTry 'stkreport --help'.\n", msg, arg ? ": " : "",
		arg ? arg : "");
	return -EINVAL;
}

static bool is_directory(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int parse_pct(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= 0 && *v <= 100))
		return usage_error("--tree-min wants a percentage from 0 to 100", s);
	return 0;
}

static int parse_by(const char *s, enum rep_by *by)
{
	static const char *const names[] = {
		[REP_BY_HOST] = "host", [REP_BY_CAPTURE] = "capture", [REP_BY_PID] = "pid",
		[REP_BY_COMM] = "comm", [REP_BY_PROBE] = "probe", [REP_BY_INTERVAL] = "interval",
	};

	for (unsigned int i = REP_BY_HOST; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*by = i;
			return 0;
		}
	}
	return usage_error("--by wants host, capture, pid, comm, probe or interval", s);
}

static int parse_pids(const char *s, uint32_t **pids, uint32_t *n)
{
	uint32_t *v = NULL, count = 0;
	const char *p = s;

	while (*p) {
		unsigned long id;
		uint32_t *nv;
		char *end;

		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		id = strtoul(p, &end, 10);
		if (errno || id > INT32_MAX || (*end && *end != ',') || (*end == ',' && !end[1]))
			goto bad;
		nv = realloc(v, (count + 1) * sizeof(*v));
		if (!nv)
			goto bad;
		v = nv;
		v[count++] = id;
		p = *end ? end + 1 : end;
	}
	if (!count)
		goto bad;
	free(*pids);
	*pids = v;
	*n = count;
	return 0;
bad:
	free(v);
	return usage_error("--pid wants a list of process ids (1,2,3)", s);
}

/* Seconds with an optional fraction ("12", "12.5") -> ns. */
static bool parse_seconds(const char *s, int64_t *ns)
{
	char *end;
	double v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v > 9e9)
		return false;
	*ns = (int64_t)(v * 1e9 + 0.5);
	return true;
}

/* One end of --time: empty, seconds from start, HH:MM[:SS] or YYYY-MM-DD[T ]HH:MM[:SS]. */
static bool parse_time_bound(const char *s, struct rep_time_bound *b)
{
	struct tm tm = { 0 };
	const char *end;

	if (!*s) {
		b->kind = REP_TIME_NONE;
		return true;
	}
	if (!strchr(s, ':')) {
		b->kind = REP_TIME_REL;
		return parse_seconds(s, &b->ns);
	}
	if (strchr(s, '-')) {
		end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
		if (!end || *end) {
			memset(&tm, 0, sizeof(tm));
			end = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
		}
		if (!end || *end)
			return false;
		tm.tm_isdst = -1;
		b->kind = REP_TIME_WALL;
		b->ns = (int64_t)mktime(&tm) * 1000000000;
		return true;
	}
	end = strptime(s, "%H:%M:%S", &tm);
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, "%H:%M", &tm);
	}
	if (!end || *end)
		return false;
	b->kind = REP_TIME_TOD;
	b->ns = ((int64_t)tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) * 1000000000;
	return true;
}

static int parse_time(const char *s, struct rep_opts *o)
{
	const char *comma = strchr(s, ',');
	char from[64];
	size_t len;

	if (!comma || strchr(comma + 1, ','))
		goto bad;
	len = comma - s;
	if (len >= sizeof(from))
		goto bad;
	memcpy(from, s, len);
	from[len] = 0;
	if (!parse_time_bound(from, &o->time_from) || !parse_time_bound(comma + 1, &o->time_to))
		goto bad;
	if (o->time_from.kind == REP_TIME_NONE && o->time_to.kind == REP_TIME_NONE)
		goto bad;
	if (o->time_from.kind == o->time_to.kind && o->time_from.ns > o->time_to.ns)
		return usage_error("--time: FROM is after TO", s);
	return 0;
bad:
	return usage_error("--time wants FROM,TO: seconds from the start, HH:MM:SS or "
			   "YYYY-MM-DDTHH:MM:SS, one end may be empty", s);
}

static int parse_depth(const char *s, uint32_t *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || n < 1 || n > CAP_MAX_STACK_DEPTH)
		return usage_error("--max-depth wants a number of frames from 1 to 1024", s);
	*v = n;
	return 0;
}

/* --width: pixels, as flamegraph.pl's (a frame narrower than 0.1 px is not drawn) */
static int parse_width(const char *s, double *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || n < 100 || n > 100000)
		return usage_error("--width wants pixels from 100 to 100000", s);
	*v = n;
	return 0;
}

/* --max-memory, --max-debug: MiB, 1 to REP_MAX_BUDGET_MB. */
static int parse_mb(const char *opt, const char *s, uint32_t *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || n < 1 || n > REP_MAX_BUDGET_MB) {
		fprintf(stderr, "stkreport: %s wants a size in MiB from 1 to %u: %s\n"
			"Try 'stkreport --help'.\n", opt, REP_MAX_BUDGET_MB, s);
		return -EINVAL;
	}
	*v = n;
	return 0;
}

static int add_input(struct rep_opts *o, const char *path)
{
	const char **v = realloc(o->inputs, (o->ninputs + 1) * sizeof(*v));

	if (!v) {
		fprintf(stderr, "stkreport: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	v[o->ninputs++] = path;
	o->inputs = v;
	o->input = v[0];
	return 0;
}

static int parse_option(int c, const char *arg, struct rep_opts *o)
{
	switch (c) {
	case 'i': return add_input(o, arg);
	case 'P': o->perpid = true; break;
	case 'd': o->delimited = true; break;
	case 's': o->offset = true; break;
	case 'v': o->verbose = true; break;
	case 'K': o->kernel_only = true; break;
	case 'U': o->user_only = true; break;
	case 'f': o->folded = true; break;
	case 'a': o->annotations = true; break;
	case 'T': o->timestamp = true; break;
	case 'A': o->address = true; break;
	case OPT_ADDRESS_STACKS: o->address_stacks = true; break;
	case OPT_OLD_LAYOUT: o->old_layout = true; break;
	case 'l': o->lines = true; break;
	case 'q': o->quiet = true; break;
	case OPT_TREE: o->tree = true; break;
	case OPT_TREE_MIN: return parse_pct(arg, &o->tree_min_pct);
	case OPT_SYMFS: o->symfs = arg; break;
	case OPT_DEBUG_DIR:
		if (o->ndebug_dirs == REP_MAX_DEBUG_DIRS)
			return usage_error("too many --debug-dir options (at most 8)", arg);
		o->debug_dirs[o->ndebug_dirs++] = arg;
		break;
	case OPT_INLINE: o->inlines = true; break;
	case OPT_NO_INLINE: o->no_inline = true; break;
	case OPT_NO_DEMANGLE: o->no_demangle = true; break;
	case OPT_PYTHON_FRAMES:
		o->python_frames = rep_pyframes_parse(arg);
		if (!o->python_frames)
			return usage_error("invalid --python-frames '%s' (native, python or mixed)",
					   arg);
		break;
	case OPT_NO_PYTHON_LINES: o->no_python_lines = true; break;
	case OPT_SQL: o->sql = arg; break;
	case OPT_CSV: o->csv = true; break;
	case OPT_JSON: o->json = true; break;
	case OPT_SQLITE: o->sqlite_out = arg; break;
	case OPT_DIFF: o->diff = true; break;
	case OPT_NORMALIZE: o->normalize = true; break;
	case OPT_BY: return parse_by(arg, &o->by);
	case OPT_PID: return parse_pids(arg, &o->pids, &o->npids);
	case OPT_COMM: o->comm = arg; break;
	case OPT_PROBE: o->probe = arg; break;
	case OPT_TIME: return parse_time(arg, o);
	case OPT_GREP: o->grep = arg; break;
	case OPT_MAX_DEPTH: return parse_depth(arg, &o->max_depth);
	case OPT_PPROF: o->pprof_out = arg; break;
	case OPT_CLICKHOUSE: o->clickhouse = arg; break;
	case OPT_SVG: o->svg_out = arg; break;
	case OPT_TITLE: o->svg_title = arg; break;
	case OPT_WIDTH: return parse_width(arg, &o->svg_width);
	case OPT_INVERTED: o->svg_inverted = true; break;
	case OPT_MAX_MEMORY: return parse_mb("--max-memory", arg, &o->max_memory_mb);
	case OPT_MAX_DEBUG: return parse_mb("--max-debug", arg, &o->max_debug_mb);
	}
	return 0;
}

/* A bad --grep regex is a usage error, said before any capture is read. */
static int check_regex(const char *re)
{
	char msg[256];
	regex_t r;
	int rc;

	if (!re)
		return 0;
	rc = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
	if (!rc) {
		regfree(&r);
		return 0;
	}
	regerror(rc, &r, msg, sizeof(msg));
	return usage_error("--grep: invalid regular expression", msg);
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !strcmp(a, b) ||
	       (!stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino);
}

/*
 * An output file (--pprof, --svg, --sqlite) never replaces an input of the run or any capture:
 * `stkreport --pprof a.stk b.stk` (a name forgotten) wrote a profile over the capture a.stk.
 */
static int check_output(const struct rep_opts *o, const char *opt, const char *path)
{
	const char *why = NULL;

	for (int i = 0; path && !why && i < o->ninputs; i++)
		if (same_file(path, o->inputs[i]))
			why = "is a capture this run reads";
	if (path && !why && cap_is_capture_file(path))
		why = "is a capture (remove it first if it may go)";
	if (!why)
		return 0;
	fprintf(stderr, "stkreport: %s %s: %s; an output never replaces a capture\n"
		"Try 'stkreport --help'.\n", opt, path, why);
	return -EINVAL;
}

static int check_outputs(const struct rep_opts *o)
{
	int err = check_output(o, "--pprof", o->pprof_out);

	if (!err)
		err = check_output(o, "--svg", o->svg_out);
	if (!err)
		err = check_output(o, "--sqlite", o->sqlite_out);
	return err;
}

/*
 * What a run prints or writes: one of these (run_output()). Each option means something in some
 * of them (applies[]); given with another, it is a usage error, never a silent no-op.
 */
enum {
	OUT_LIST = 1 << 0,	/* the stack lists: stackcount's, profile's, offcputime's, stacksnoop's */
	OUT_FOLDED = 1 << 1,	/* -f */
	OUT_TREE = 1 << 2,	/* --tree */
	OUT_JSON = 1 << 3,	/* --json of the stacks */
	OUT_SQL = 1 << 4,	/* --sql, --sqlite */
	OUT_PPROF = 1 << 5,	/* --pprof */
	OUT_SVG = 1 << 6,	/* --svg */
	OUT_DIFF = 1 << 7,	/* --diff: folded lines */
	OUT_DIFF_SVG = 1 << 8,	/* --diff --svg */
	OUT_CLICKHOUSE = 1 << 9,	/* --clickhouse: -f's rows, sent */
	OUT__COUNT = 10,
};

static const char *const out_names[OUT__COUNT] = {
	"the stack lists", "-f", "--tree", "--json", "--sql and --sqlite", "--pprof", "--svg",
	"--diff", "--diff --svg", "--clickhouse",
};

/* Flame-graph-like outputs: the folded paths of the stacks (emit_folded_path()). */
#define OUT_PATHS (OUT_FOLDED | OUT_SVG | OUT_DIFF | OUT_DIFF_SVG)
/* Outputs of the symbolized model, where stacks are shown as frames. */
#define OUT_STACKS (OUT_LIST | OUT_TREE | OUT_JSON | OUT_PATHS)

/*
 * Where each option that does not apply everywhere means something. SQL has WHERE, pprof its
 * labels and -focus: the layout options and --by are not theirs (but --by capture, a pprof
 * label); the filters apply everywhere but in SQL (stkreport(1), MERGING, GROUPS AND FILTERS).
 * --clickhouse sends -f's rows: the filters, -K, -U and -s shape them. An option not listed
 * (symbols, limits, -q) applies to every output.
 */
static const struct stk_applies applies[] = {
	{ 'P', OUT_STACKS },
	{ 'd', OUT_LIST | OUT_PATHS },
	{ 's', OUT_LIST | OUT_TREE | OUT_PATHS | OUT_CLICKHOUSE },
	{ 'v', OUT_LIST | OUT_TREE | OUT_PATHS },
	{ 'A', OUT_LIST },
	{ 'a', OUT_LIST | OUT_TREE | OUT_PATHS },
	{ 'T', OUT_LIST | OUT_FOLDED | OUT_TREE | OUT_JSON },
	{ 'K', OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	{ 'U', OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	/* --pprof: --by capture labels each sample with its capture (pid, comm, probe and host
	 * are labels already) */
	{ OPT_BY, OUT_STACKS | OUT_PPROF },
	{ OPT_TREE_MIN, OUT_TREE },
	{ OPT_ADDRESS_STACKS, OUT_LIST | OUT_FOLDED },
	{ OPT_OLD_LAYOUT, OUT_LIST },
	{ OPT_NORMALIZE, OUT_DIFF | OUT_DIFF_SVG },
	{ OPT_TITLE, OUT_SVG | OUT_DIFF_SVG },
	{ OPT_WIDTH, OUT_SVG | OUT_DIFF_SVG },
	{ OPT_INVERTED, OUT_SVG | OUT_DIFF_SVG },
	{ OPT_PID, OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	{ OPT_COMM, OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	{ OPT_PROBE, OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	{ OPT_TIME, OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	{ OPT_GREP, OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	{ OPT_MAX_DEPTH, OUT_STACKS | OUT_PPROF | OUT_CLICKHOUSE },
	/* JSON, SQL and pprof give an interpreter frame's line a field of its own */
	{ OPT_NO_PYTHON_LINES, OUT_LIST | OUT_TREE | OUT_PATHS },
};

static unsigned int run_output(const struct rep_opts *o)
{
	if (o->clickhouse)
		return OUT_CLICKHOUSE;
	if (o->diff)
		return o->svg_out ? OUT_DIFF_SVG : OUT_DIFF;
	if (o->sql || o->sqlite_out)
		return OUT_SQL;
	if (o->pprof_out)
		return OUT_PPROF;
	if (o->svg_out)
		return OUT_SVG;
	if (o->json)
		return OUT_JSON;
	if (o->tree)
		return OUT_TREE;
	return o->folded ? OUT_FOLDED : OUT_LIST;
}

/* Every option given means something in the output the run makes (applies[]). */
static int check_applies(const struct rep_opts *o, const bool *given)
{
	unsigned int out = run_output(o);
	char name[32], where[256];
	int i;

	i = stk_misplaced(applies, sizeof(applies) / sizeof(applies[0]), given, out, out_names,
			  where, sizeof(where));
	if (i < 0)
		return 0;
	fprintf(stderr, "stkreport: %s does not apply to %s (only to %s)\n"
		"Try 'stkreport --help'.\n", stk_option_name(applies[i].opt, long_opts, name,
							  sizeof(name)),
		out_names[__builtin_ctz(out)], where);
	return -EINVAL;
}

/* Combinations that make no sense, refused before any capture is read. */
static int check_combinations(const struct rep_opts *o, const bool *given)
{
	int outputs = !!o->folded + !!o->tree + !!o->json + !!o->sql;
	int files = !!(o->sql || o->sqlite_out) + !!o->pprof_out + !!o->svg_out;

	if (!o->ninputs)
		return usage_error("no capture given", NULL);
	if (o->kernel_only && o->user_only)
		return usage_error("-K and -U are mutually exclusive (both stacks is the default)",
				   NULL);
	if (o->sql && o->json)
		outputs--;	/* --json shapes the SQL result */
	if (outputs > 1)
		return usage_error("choose one of -f, --tree, --json and --sql", NULL);
	if (o->csv && !o->sql)
		return usage_error("--csv applies to --sql", NULL);
	if (o->csv && o->json)
		return usage_error("choose one of --csv and --json for the --sql result", NULL);
	if (o->json && o->sqlite_out && !o->sql)
		return usage_error("--json with --sqlite shapes a --sql result: add --sql QUERY",
				   NULL);
	if (o->diff && o->ninputs != 2)
		return usage_error("--diff wants exactly two captures: BEFORE AFTER", NULL);
	if (o->diff && (o->tree || o->sql || o->json || o->sqlite_out || o->pprof_out))
		return usage_error("--diff prints folded lines (or --svg); it does not combine with "
				   "--tree, --json, --sql, --sqlite or --pprof", NULL);
	if (files > 1)
		return usage_error("choose one of --sql/--sqlite, --pprof and --svg", NULL);
	if ((o->pprof_out || o->svg_out || o->sqlite_out) && (o->folded || o->tree))
		return usage_error("--pprof, --svg and --sqlite write a file; they do not combine "
				   "with -f or --tree", NULL);
	if ((o->pprof_out || o->svg_out) && o->json)
		return usage_error("--pprof and --svg write a file; they do not combine with --json",
				   NULL);
	if (o->clickhouse && (outputs || files || o->diff))
		return usage_error("--clickhouse sends rows; it does not combine with -f, --tree, "
				   "--json, --sql, --sqlite, --pprof, --svg or --diff", NULL);
	if (o->pprof_out && o->by == REP_BY_INTERVAL)
		return usage_error("--by interval does not apply to --pprof (its samples are labelled "
				   "by host, pid, comm and probe, and by capture with --by capture)",
				   NULL);
	if (check_applies(o, given))
		return -EINVAL;
	if (o->symfs && !is_directory(o->symfs))
		return usage_error("--symfs: not a directory", o->symfs);
	if (check_outputs(o))
		return -EINVAL;
	return check_regex(o->grep);
}

void rep_opts__free(struct rep_opts *o)
{
	free(o->inputs);
	free(o->pids);
	o->inputs = NULL;
	o->pids = NULL;
}

/*
 * stkrec's options (bcc's recording options) typed at the reporter: one line saying where they
 * belong and what does it here, as stkrec points report options to stkreport.
 */
static const struct {
	const char *shrt, *lng;	/* either may be NULL */
	const char *rec;	/* the stkrec spelling */
	const char *here;	/* what does it in a report, or NULL */
} recording[] = {
	{ "-p", NULL, "stkrec -p PID", "--pid PID keeps some processes of a capture" },
	{ "-F", "--frequency", "stkrec -F HZ", NULL },
	{ "-c", "--count", "stkrec -c N", NULL },
	{ "-C", "--cpu", "stkrec -C CPU", NULL },
	{ "-D", "--duration", "stkrec -D SECS", "--time FROM,TO reports part of a capture" },
	{ NULL, "--interval", "stkrec -i SECS", "-T prints one section per interval" },
	{ "-L", "--tid", "stkrec -L TID", NULL },
	{ "-t", NULL, "stkrec -t TID", NULL },
	{ "-r", "--regexp", "stkrec -r", "--grep REGEX keeps stacks with a matching frame" },
	{ "-I", "--include-idle", "stkrec -I", NULL },
	{ "-e", "--event", "stkrec -e EVENT", NULL },
	{ "-u", "--user-threads-only", "stkrec --offcpu -u", NULL },
	{ "-k", "--kernel-threads-only", "stkrec --offcpu -k", NULL },
	{ "-m", "--min-block-time", "stkrec --offcpu -m USECS", NULL },
	{ "-M", "--max-block-time", "stkrec --offcpu -M USECS", NULL },
	{ NULL, "--state", "stkrec --offcpu --state MASK", NULL },
	{ NULL, "--offcpu", "stkrec --offcpu", NULL },
	{ NULL, "--snoop", "stkrec --snoop", NULL },
	{ "-o", "--output", "stkrec -o FILE",
	  "stkreport prints on standard output; --svg, --pprof and --sqlite write files" },
	{ NULL, "--stack-storage-size", "stkrec --stack-storage-size N", NULL },
	{ NULL, "--hash-storage-size", "stkrec --hash-storage-size N", NULL },
};

/* The one-line refusal of an option getopt did not know (bad: as the user wrote it). */
static int unknown_option(const char *bad)
{
	size_t n = strcspn(bad, "=");

	for (size_t i = 0; i < sizeof(recording) / sizeof(recording[0]); i++) {
		const char *l = recording[i].lng;

		if ((!recording[i].shrt || strcmp(bad, recording[i].shrt)) &&
		    (!l || strlen(l) != n || strncmp(bad, l, n)))
			continue;
		fprintf(stderr, "stkreport: %s is a recording option (%s)%s%s\n"
			"Try 'stkreport --help'.\n", bad, recording[i].rec,
			recording[i].here ? "; here " : "", recording[i].here ? recording[i].here : "");
		return -EINVAL;
	}
	return usage_error("unknown option", bad);
}

int rep_parse_opts(int argc, char **argv, struct rep_opts *o)
{
	bool given[OPT__COUNT] = { false };
	const char *bad;
	char opt[8];
	int c, err;

	memset(o, 0, sizeof(*o));
	o->max_memory_mb = REP_MAX_MEMORY_MB;
	o->max_debug_mb = REP_MAX_DEBUG_MB;
	optind = 0;	/* glibc: 0 re-initialises getopt fully, so tests may parse twice */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:PdsvAKUfaTlqhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("stkreport %s\n", STK_VERSION);
			return 1;
		case ':':
			return usage_error("option needs an argument",
					   stk_refused_option(argv, long_opts, opt, sizeof(opt)));
		case '?':
			bad = stk_refused_option(argv, long_opts, opt, sizeof(opt));
			/* a known long option given a value it does not take: --tree=5 */
			if (optopt && !strncmp(bad, "--", 2))
				return usage_error("option takes no argument", bad);
			return unknown_option(bad);
		default:
			given[c] = true;
			err = parse_option(c, optarg, o);
			if (err)
				return err;
		}
	}
	for (; optind < argc; optind++) {
		err = add_input(o, argv[optind]);
		if (err)
			return err;
	}
	/*
	 * Inlined frames need DWARF, which captures do not carry: shown only when asked for, so
	 * that the default report is bcc's and the same on every machine (the symbol tables it
	 * needs are in the capture).
	 */
	if (!o->lines && !o->inlines)
		o->no_inline = true;
	return check_combinations(o, given);
}
