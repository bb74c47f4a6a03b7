// SPDX-License-Identifier: MIT
/*
 * kfunc.c: what this kernel offers to probe kernel functions: kprobe.multi (one link for many
 * functions, 5.18+ with CONFIG_FPROBE), single kprobes (CONFIG_KPROBES), or fentry (BPF
 * trampolines). Probed with tiny raw programs, before the skeleton is loaded, so the skeleton
 * loads only the program that can attach.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "probe.h"
#include "../ksyms/ksyms.h"

/* r0 = 0; exit */
static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static bool has_kprobes(void)
{
	/* The perf kprobe PMU (what libbpf uses) or the legacy tracefs interface. */
	return !access("/sys/bus/event_source/devices/kprobe/type", F_OK) ||
	       !access("/sys/kernel/tracing/kprobe_events", F_OK) ||
	       !access("/sys/kernel/debug/tracing/kprobe_events", F_OK);
}

/*
 * A kernel without kprobe.multi either does not know the attach type (-EINVAL) or was built
 * without fprobe (-EOPNOTSUPP). A kernel with it looks up the bogus symbol and fails otherwise.
 */
static bool has_kprobe_multi(void)
{
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_KPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	const char *syms[] = { "stkrec_no_such_function__" };
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "stkrec_probe", "GPL", return_zero, 2, &popts);
	if (prog < 0)
		return false;
	lopts.kprobe_multi.syms = syms;
	lopts.kprobe_multi.cnt = 1;
	link = bpf_link_create(prog, 0, BPF_TRACE_KPROBE_MULTI, &lopts);
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0 || (link != -EINVAL && link != -EOPNOTSUPP);
}

static int fentry_load_error(const char *func)
{
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_FENTRY);
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, prog;

	if (!vmlinux)
		return -errno;
	id = btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC);
	if (id < 0)	/* a pattern, or not in BTF: any traceable function answers the question */
		id = btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC);
	btf__free(vmlinux);
	if (id < 0)
		return id;
	popts.attach_btf_id = id;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "stkrec_probe", "GPL", return_zero, 2, &popts);
	if (prog < 0)
		return prog;
	close(prog);
	return 0;
}

/* STKREC_KFUNC forces a mechanism (tests); REC_KFUNC_NONE when unset or unknown. */
static enum rec_kfunc_mode forced_mode(void)
{
	const char *v = getenv("STKREC_KFUNC");

	for (int m = REC_KFUNC_KPROBE_MULTI; v && m <= REC_KFUNC_FENTRY; m++)
		if (!strcmp(v, rec_kfunc_mode_name(m)))
			return m;
	return REC_KFUNC_NONE;
}

const char *rec_kfunc_mode_name(enum rec_kfunc_mode mode)
{
	switch (mode) {
	case REC_KFUNC_KPROBE_MULTI:
		return "kprobe.multi";
	case REC_KFUNC_KPROBE:
		return "kprobe";
	case REC_KFUNC_FENTRY:
		return "fentry";
	case REC_KFUNC_NONE:
		break;
	}
	return "none";
}

enum rec_kfunc_mode rec_kfunc_mode(const char *func, int *fentry_err)
{
	enum rec_kfunc_mode forced = forced_mode();

	*fentry_err = 0;
	if (forced)
		return forced;
	if (has_kprobes())
		return has_kprobe_multi() ? REC_KFUNC_KPROBE_MULTI : REC_KFUNC_KPROBE;
	*fentry_err = -fentry_load_error(func);
	return *fentry_err ? REC_KFUNC_NONE : REC_KFUNC_FENTRY;
}

/* ---- targets ---------------------------------------------------------------------------- */

/* A set of function names, sorted and unique once built (names_sort). */
struct names {
	char **v;
	uint32_t n;
};

static int names_add(struct names *s, const char *name)
{
	char **v = realloc(s->v, (s->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->v = v;
	s->v[s->n] = strdup(name);
	if (!s->v[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Static functions of several files repeat a name: keep one. */
static void names_sort(struct names *s)
{
	uint32_t n = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_name);
	for (uint32_t i = 0; i < s->n; i++) {
		if (n && !strcmp(s->v[n - 1], s->v[i])) {
			free(s->v[i]);
			continue;
		}
		s->v[n++] = s->v[i];
	}
	s->n = n;
}

static bool names_has(const struct names *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof(*s->v), cmp_name);
}

static void names_free(struct names *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Lines of available_filter_functions: "name" or "name [module]". */
static int read_traceable(const char *path, const struct rec_matcher *m, struct names *out)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int err = 0;

	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = 0;
		if (*line && rec_matcher__match(m, line))
			err = names_add(out, line);
	}
	fclose(f);
	names_sort(out);
	return err;
}

/* Text symbols of /proc/kallsyms (BPF programs left out: they are not kernel functions). */
static int read_kallsyms(const struct rec_matcher *m, struct names *out)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[1024], name[512], mod[128];
	uint64_t addr;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (rec_kallsyms_line(line, &addr, name, sizeof(name), mod, sizeof(mod)) != 1)
			continue;
		if (strcmp(mod, "bpf") && rec_matcher__match(m, name))
			err = names_add(out, name);
	}
	fclose(f);
	names_sort(out);
	return err;
}

/* The kprobe blacklist ("0xSTART-0xEND\tname"); none when debugfs is not there. */
static int read_blacklist(struct names *out)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	char line[512], name[256];
	int err = 0;

	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s", name) == 1)
			err = names_add(out, name);
	fclose(f);
	names_sort(out);
	return err;
}

/* Remove from t the names `drop` says cannot be probed; returns how many. */
static uint32_t drop_names(struct names *t, bool (*drop)(const char *name, void *ctx), void *ctx)
{
	uint32_t n = 0, dropped = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		if (drop(t->v[i], ctx)) {
			free(t->v[i]);
			dropped++;
			continue;
		}
		t->v[n++] = t->v[i];
	}
	t->n = n;
	return dropped;
}

static bool in_names(const char *name, void *ctx)
{
	return names_has(ctx, name);
}

/* fentry attaches by BTF id: a function without a BTF FUNC cannot be traced so. */
static bool not_in_btf(const char *name, void *ctx)
{
	return btf__find_by_name_kind(ctx, name, BTF_KIND_FUNC) < 0;
}

static bool is_exact(const char *pattern, bool regexp)
{
	return !regexp && !strpbrk(pattern, "*?[");
}

static int no_kfunc_error(const struct rec_spec *s, enum rec_kfunc_mode mode, int fentry_err)
{
	if (mode == REC_KFUNC_NONE)
		return rec_err(-EOPNOTSUPP,
			       "cannot probe kernel function '%s': this kernel has neither kprobes "
			       "(CONFIG_KPROBES) nor BPF trampolines (fentry: %s); try a tracepoint "
			       "such as t:syscalls:sys_enter_*",
			       s->pattern, strerror(fentry_err));
	return 0;
}

/* Move the names into the spec's targets. */
static int take_targets(struct rec_spec *s, struct names *t)
{
	s->targets = calloc(t->n, sizeof(*s->targets));
	if (!s->targets)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++)
		s->targets[i].name = t->v[i];
	s->ntargets = t->n;
	t->n = 0;
	return 0;
}

/*
 * Which matches cannot be probed: every kallsyms text symbol that is not in
 * available_filter_functions (notrace, or the alias of a traced function, which would count each
 * call twice), the kprobe blacklist for kprobes, functions without BTF for fentry. An exact name
 * that only kallsyms knows is tried as it is: __x64_sys_getppid, the alias of __do_sys_getppid,
 * is what users type.
 */
static int filter_targets(struct rec_spec *s, const struct rec_opts *o, enum rec_kfunc_mode mode,
			  struct names *traceable, struct names *ksyms)
{
	struct names black = { 0 };
	struct btf *btf;
	int err = 0;

	if (!traceable->n && is_exact(s->pattern, o->regexp) && names_has(ksyms, s->pattern))
		err = names_add(traceable, s->pattern);
	for (uint32_t i = 0; !err && i < ksyms->n; i++)
		s->nskipped += !names_has(traceable, ksyms->v[i]);
	if (err)
		return err;
	if (mode == REC_KFUNC_FENTRY) {
		btf = btf__load_vmlinux_btf();
		if (!btf)
			return rec_err(-errno, "cannot read the kernel's BTF: %s", strerror(errno));
		s->nskipped += drop_names(traceable, not_in_btf, btf);
		btf__free(btf);
		return 0;
	}
	err = read_blacklist(&black);
	if (!err)
		s->nskipped += drop_names(traceable, in_names, &black);
	names_free(&black);
	return err;
}

int rec_kfunc_resolve(struct rec_spec *s, const struct rec_opts *o)
{
	int fentry_err = 0;
	enum rec_kfunc_mode mode = rec_kfunc_mode(s->pattern, &fentry_err);
	uint32_t max = o->max_kprobes ? o->max_kprobes : 1000;
	struct names traceable = { 0 }, ksyms = { 0 };
	struct rec_matcher *m = NULL;
	const char *tracefs;
	char path[PATH_MAX];
	int err;

	err = no_kfunc_error(s, mode, fentry_err);
	if (err)
		return err;
	s->mechanism = mode;
	tracefs = rec_tracefs();
	if (!tracefs)
		return rec_err(-errno, "cannot mount tracefs: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/available_filter_functions", tracefs);
	m = rec_matcher__new(s->pattern, o->regexp);
	if (!m && errno == EINVAL)
		return rec_err(-EINVAL, "invalid regular expression '%s' in '%s'", s->pattern,
			       s->text);
	if (!m)
		return rec_err(-ENOMEM, "out of memory");
	err = read_traceable(path, m, &traceable);
	if (err) {
		rec_err(err, "cannot read %s: %s", path, strerror(-err));
		goto out;
	}
	err = read_kallsyms(m, &ksyms);
	if (err) {
		rec_err(err, "cannot read /proc/kallsyms: %s", strerror(-err));
		goto out;
	}
	err = filter_targets(s, o, mode, &traceable, &ksyms);
	if (err)
		goto out;
	if (!traceable.n && s->nskipped) {
		err = rec_err(-ENOENT, "'%s' matches %u kernel functions, none of which can be "
				       "probed with %s (notrace, inlined, blacklisted)",
			      s->text, s->nskipped, rec_kfunc_mode_name(mode));
		goto out;
	}
	if (!traceable.n) {
		err = rec_err(-ENOENT, "no kernel function matches '%s'", s->text);
		goto out;
	}
	if (traceable.n > max) {
		err = rec_err(-E2BIG, "'%s' matches %u kernel functions, more than --max-kprobes %u: "
				      "narrow the pattern or raise --max-kprobes",
			      s->text, traceable.n, max);
		goto out;
	}
	err = take_targets(s, &traceable);
out:
	rec_matcher__free(m);
	names_free(&traceable);
	names_free(&ksyms);
	return err;
}
