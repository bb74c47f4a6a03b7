// SPDX-License-Identifier: MIT
/* opts.c: stkreport's command line (the contract in the project brief / stkreport(1)). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char usage[] =
	"Usage: stkreport [OPTIONS] CAPTURE\n"
	"Print the stacks of a stkrec capture as bcc's stackcount or profile would.\n"
	"\n"
	"  -i, --input FILE          the capture (or as the only argument)\n"
	"  -P, --perpid              one entry per process\n"
	"  -d, --delimited           \"--\" between kernel and user frames (\"-\" when folded)\n"
	"  -s, --offset              show symbol offsets (symbol+0xOFF)\n"
	"  -v, --verbose             raw addresses; module+offset for unnamed frames\n"
	"  -K, --kernel-stacks-only  kernel frames only\n"
	"  -U, --user-stacks-only    user frames only\n"
	"  -f, --folded              folded output: comm;root;...;leaf count\n"
	"  -a, --annotations         append _[k] to kernel frames\n"
	"  -T, --timestamp           one section per interval, headed by its end time\n"
	"      --tree                call tree from the roots down with counts and percentages\n"
	"      --tree-min PCT        hide tree nodes below PCT percent of the total\n"
	"      --symfs DIR           look for the capture's objects under DIR first\n"
	"  -q, --quiet               no summary on stderr\n"
	"  -h, --help                this help\n"
	"  -V, --version             print the version\n";

enum { OPT_TREE = 256, OPT_TREE_MIN, OPT_SYMFS };

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
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "tree-min", required_argument, NULL, OPT_TREE_MIN },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
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

static int parse_pct(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= 0 && *v <= 100))
		return usage_error("--tree-min wants a percentage from 0 to 100", s);
	return 0;
}

int rep_parse_opts(int argc, char **argv, struct rep_opts *o)
{
	int c, err;

	memset(o, 0, sizeof(*o));
	optind = 0;	/* glibc: 0 re-initialises getopt fully, so tests may parse twice */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:PdsvKUfaTqhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'P': o->perpid = true; break;
		case 'd': o->delimited = true; break;
		case 's': o->offset = true; break;
		case 'v': o->verbose = true; break;
		case 'K': o->kernel_only = true; break;
		case 'U': o->user_only = true; break;
		case 'f': o->folded = true; break;
		case 'a': o->annotations = true; break;
		case 'T': o->timestamp = true; break;
		case 'q': o->quiet = true; break;
		case OPT_TREE: o->tree = true; break;
		case OPT_SYMFS: o->symfs = optarg; break;
		case OPT_TREE_MIN:
			err = parse_pct(optarg, &o->tree_min_pct);
			if (err)
				return err;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("stkreport %s\n", STK_VERSION);
			return 1;
		case ':':
			return usage_error("option needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (o->input)
			return usage_error("two captures given", argv[optind]);
		o->input = argv[optind++];
	}
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	if (!o->input)
		return usage_error("no capture given", NULL);
	if (o->kernel_only && o->user_only)
		return usage_error("-K and -U are mutually exclusive (both stacks is the default)",
				   NULL);
	if (o->tree && o->folded)
		return usage_error("--tree and -f are mutually exclusive", NULL);
	return 0;
}
