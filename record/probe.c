// SPDX-License-Identifier: MIT
/*
 * probe.c: the BPF side of stkrec. The only file that includes the skeleton: open it, set the
 * cfg_* knobs and map sizes, load only the programs this run uses, fill the filter maps, attach
 * every target with its probe id as BPF cookie.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rec.h"
#include "stk/abi.h"
#include "stkrec.skel.h"

struct rec_probe {
	struct stkrec_bpf *skel;
	struct bpf_link **links;
	uint32_t nlinks;
	int *perf_fds;
	uint32_t nperf;
	struct ring_buffer *rb;
	int (*notify_fn)(void *ctx, void *data, size_t len);
	void *notify_ctx;
	struct rec_maps maps;
	enum rec_kfunc_mode kfunc_mode;
};

static int add_link(struct rec_probe *p, struct bpf_link *link)
{
	struct bpf_link **v;

	if (!link)
		return -errno;
	v = realloc(p->links, (p->nlinks + 1) * sizeof(*v));
	if (!v) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	p->links = v;
	p->links[p->nlinks++] = link;
	return 0;
}

static uint32_t read_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	unsigned int v = 0;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : STK_DEFAULT_DEPTH;
}

static bool uses_kind(const struct rec_spec *specs, int n, uint32_t kind)
{
	for (int i = 0; i < n; i++)
		if (specs[i].kind == kind)
			return true;
	return false;
}

/* Load only what this run attaches: a kprobe.multi program fails to load on older kernels. */
static void choose_programs(struct rec_probe *p, const struct rec_spec *specs, int n)
{
	struct stkrec_bpf *s = p->skel;
	bool kfunc = uses_kind(specs, n, CAP_PROBE_KFUNC);

	bpf_program__set_autoload(s->progs.on_sample, n == 0);
	bpf_program__set_autoload(s->progs.on_tracepoint, uses_kind(specs, n, CAP_PROBE_TRACEPOINT));
	bpf_program__set_autoload(s->progs.on_uprobe, uses_kind(specs, n, CAP_PROBE_UPROBE));
	bpf_program__set_autoload(s->progs.on_usdt, uses_kind(specs, n, CAP_PROBE_USDT));
	bpf_program__set_autoload(s->progs.on_kprobe, kfunc && p->kfunc_mode == REC_KFUNC_KPROBE);
	bpf_program__set_autoload(s->progs.on_kprobe_multi,
				  kfunc && p->kfunc_mode == REC_KFUNC_KPROBE_MULTI);
}

static int size_maps(struct rec_probe *p, const struct rec_opts *o)
{
	struct stkrec_bpf *s = p->skel;
	struct bpf_map *stacks[2] = { s->maps.stacks0, s->maps.stacks1 };
	struct bpf_map *counts[2] = { s->maps.counts0, s->maps.counts1 };
	int err = 0;

	p->maps.depth = read_max_stack();
	p->maps.stack_entries = o->stack_storage_size;
	for (int g = 0; g < 2 && !err; g++) {
		err = bpf_map__set_value_size(stacks[g], p->maps.depth * sizeof(uint64_t));
		if (!err)
			err = bpf_map__set_max_entries(stacks[g], o->stack_storage_size);
		if (!err)
			err = bpf_map__set_max_entries(counts[g], o->hash_storage_size);
	}
	return err;
}

static void set_knobs(struct rec_probe *p, const struct rec_opts *o, int nspecs, int child)
{
	struct stkrec_bpf__rodata *ro = p->skel->rodata;

	ro->cfg_filter_tgid = o->npids > 0 || child > 0;
	ro->cfg_filter_tid = o->ntids > 0;
	ro->cfg_kstacks = !o->user_only;
	ro->cfg_ustacks = !o->kernel_only;
	ro->cfg_skip_idle = nspecs == 0 && !o->include_idle;
}

static int fill_filter(int fd, const uint32_t *ids, uint32_t n)
{
	uint8_t one = 1;

	for (uint32_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &ids[i], &one, BPF_ANY))
			return -errno;
	return 0;
}

static int fill_filters(struct rec_probe *p, const struct rec_opts *o, int child)
{
	uint32_t c = child;
	int err;

	err = fill_filter(bpf_map__fd(p->skel->maps.tgids), o->pids, o->npids);
	if (!err && child > 0)
		err = fill_filter(bpf_map__fd(p->skel->maps.tgids), &c, 1);
	if (!err)
		err = fill_filter(bpf_map__fd(p->skel->maps.tids), o->tids, o->ntids);
	return err;
}

/* ---- attaching -------------------------------------------------------------------------------- */

static int attach_tracepoints(struct rec_probe *p, struct rec_spec *s)
{
	LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = s->id);
	char cat[256];

	for (uint32_t i = 0; i < s->ntargets; i++) {
		const char *name = s->targets[i].name, *colon = strchr(name, ':');
		int err;

		if (!colon || colon - name >= (long)sizeof(cat))
			continue;
		memcpy(cat, name, colon - name);
		cat[colon - name] = 0;
		err = add_link(p, bpf_program__attach_tracepoint_opts(p->skel->progs.on_tracepoint,
								      cat, colon + 1, &opts));
		if (err)
			return rec_err(err, "cannot attach tracepoint %s for '%s': %s", name,
				       s->text, strerror(-err));
		s->nattached++;
	}
	return 0;
}

static int attach_uprobes(struct rec_probe *p, struct rec_spec *s, int pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = s->id);

	for (uint32_t i = 0; i < s->ntargets; i++) {
		const struct rec_target *t = &s->targets[i];
		int err = add_link(p, bpf_program__attach_uprobe_opts(p->skel->progs.on_uprobe, pid,
								      s->path, t->offset, &opts));

		if (err)
			return rec_err(err, "cannot attach uprobe %s:%s (offset 0x%llx) for '%s': %s",
				       s->path, t->name, (unsigned long long)t->offset, s->text,
				       strerror(-err));
		s->nattached++;
	}
	return 0;
}

static int attach_usdts(struct rec_probe *p, struct rec_spec *s, int pid)
{
	LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = s->id);

	for (uint32_t i = 0; i < s->ntargets; i++) {
		const struct rec_target *t = &s->targets[i];
		int err = add_link(p, bpf_program__attach_usdt(p->skel->progs.on_usdt, pid, s->path,
							       t->provider, t->name, &opts));

		if (err)
			return rec_err(err, "cannot attach USDT probe %s:%s in %s for '%s': %s",
				       t->provider, t->name, s->path, s->text, strerror(-err));
		s->nattached += t->nsites;
	}
	return 0;
}

/* kprobe.multi: one link for every function, the same cookie for each. */
static int attach_kprobe_multi(struct rec_probe *p, struct rec_spec *s)
{
	LIBBPF_OPTS(bpf_kprobe_multi_opts, opts);
	const char **syms = calloc(s->ntargets, sizeof(*syms));
	__u64 *cookies = calloc(s->ntargets, sizeof(*cookies));
	int err = -ENOMEM;

	if (!syms || !cookies)
		goto out;
	for (uint32_t i = 0; i < s->ntargets; i++) {
		syms[i] = s->targets[i].name;
		cookies[i] = s->id;
	}
	opts.syms = syms;
	opts.cookies = cookies;
	opts.cnt = s->ntargets;
	err = add_link(p, bpf_program__attach_kprobe_multi_opts(p->skel->progs.on_kprobe_multi,
								 NULL, &opts));
	if (err)
		rec_err(err, "cannot attach kprobe.multi to %u functions for '%s': %s",
			s->ntargets, s->text, strerror(-err));
	else
		s->nattached = s->ntargets;
out:
	free(syms);
	free(cookies);
	return err;
}

static int attach_kprobes(struct rec_probe *p, struct rec_spec *s)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .bpf_cookie = s->id);

	if (p->kfunc_mode == REC_KFUNC_KPROBE_MULTI)
		return attach_kprobe_multi(p, s);
	for (uint32_t i = 0; i < s->ntargets; i++) {
		int err = add_link(p, bpf_program__attach_kprobe_opts(p->skel->progs.on_kprobe,
								      s->targets[i].name, &opts));

		if (err)
			return rec_err(err, "cannot attach kprobe to %s for '%s': %s",
				       s->targets[i].name, s->text, strerror(-err));
		s->nattached++;
	}
	return 0;
}

static int attach_spec(struct rec_probe *p, struct rec_spec *s, const struct rec_opts *o)
{
	/* One pid: the kernel puts uprobes in that process only (bcc does the same). */
	int pid = o->npids == 1 ? (int)o->pids[0] : -1;

	switch (s->kind) {
	case CAP_PROBE_TRACEPOINT:
		return attach_tracepoints(p, s);
	case CAP_PROBE_UPROBE:
		return attach_uprobes(p, s, pid);
	case CAP_PROBE_USDT:
		return attach_usdts(p, s, pid);
	case CAP_PROBE_KFUNC:
		return attach_kprobes(p, s);
	}
	return -EINVAL;
}

static int open_perf_event(const struct rec_opts *o, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};

	if (o->period) {
		attr.sample_period = o->period;
	} else {
		attr.freq = 1;
		attr.sample_freq = o->freq_hz;
	}
	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Timed sampling: one CPU-clock perf event per CPU (or the -C one), probe id 0. */
static int attach_sampling(struct rec_probe *p, const struct rec_opts *o)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = 0);
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus < 0)
		return rec_err(ncpus, "cannot count CPUs: %s", strerror(-ncpus));
	if (o->cpu >= ncpus)
		return rec_err(-EINVAL, "invalid cpu %d: this machine has %d", o->cpu, ncpus);
	p->perf_fds = calloc(ncpus, sizeof(int));
	if (!p->perf_fds)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd, err;

		if (o->cpu >= 0 && cpu != o->cpu)
			continue;
		fd = open_perf_event(o, cpu);
		if (fd < 0 && errno == ENODEV)
			continue;	/* an offline CPU */
		if (fd < 0)
			return rec_err(-errno, "cannot open a perf event on cpu %d: %s", cpu,
				       strerror(errno));
		p->perf_fds[p->nperf++] = fd;
		err = add_link(p, bpf_program__attach_perf_event_opts(p->skel->progs.on_sample, fd,
								      &opts));
		if (err)
			return rec_err(err, "cannot attach to the perf event of cpu %d: %s", cpu,
				       strerror(-err));
	}
	if (!p->nperf)
		return rec_err(-ENODEV, "no online CPU to sample");
	return 0;
}

static int attach_all(struct rec_probe *p, const struct rec_opts *o, struct rec_spec *specs,
		      int n)
{
	int err = add_link(p, bpf_program__attach(p->skel->progs.on_exec));

	if (!err)
		err = add_link(p, bpf_program__attach(p->skel->progs.on_exit));
	if (err)
		return rec_err(err, "cannot attach to sched:sched_process_exec/exit: %s",
			       strerror(-err));
	if (!n)
		return attach_sampling(p, o);
	for (int i = 0; i < n && !err; i++)
		err = attach_spec(p, &specs[i], o);
	return err;
}

static int on_notify(void *ctx, void *data, size_t len)
{
	struct rec_probe *p = ctx;

	return p->notify_fn ? p->notify_fn(p->notify_ctx, data, len) : 0;
}

static void fill_maps(struct rec_probe *p)
{
	struct stkrec_bpf *s = p->skel;

	p->maps.counts_fd[0] = bpf_map__fd(s->maps.counts0);
	p->maps.counts_fd[1] = bpf_map__fd(s->maps.counts1);
	p->maps.stacks_fd[0] = bpf_map__fd(s->maps.stacks0);
	p->maps.stacks_fd[1] = bpf_map__fd(s->maps.stacks1);
	p->maps.stats_fd = bpf_map__fd(s->maps.stats);
	p->maps.gen = &s->bss->gen;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's own warnings repeat what stkrec says in one line; show them with STKREC_DEBUG. */
	if (getenv("STKREC_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

struct rec_probe *rec_probe__open(const struct rec_opts *o, struct rec_spec *specs, int n,
				  int child_pid)
{
	struct rec_probe *p = calloc(1, sizeof(*p));
	int err, fentry_err;

	if (!p)
		return NULL;
	libbpf_set_print(libbpf_quiet);
	if (uses_kind(specs, n, CAP_PROBE_KFUNC))
		p->kfunc_mode = rec_kfunc_mode("", &fentry_err);
	p->skel = stkrec_bpf__open();
	if (!p->skel) {
		err = rec_err(-errno, "cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	set_knobs(p, o, n, child_pid);
	choose_programs(p, specs, n);
	err = size_maps(p, o);
	if (err) {
		rec_err(err, "cannot size the BPF maps: %s", strerror(-err));
		goto fail;
	}
	err = stkrec_bpf__load(p->skel);
	if (err) {
		rec_err(err, "cannot load the BPF programs: %s (STKREC_DEBUG=1 shows libbpf's log)",
			strerror(-err));
		goto fail;
	}
	fill_maps(p);
	err = fill_filters(p, o, child_pid);
	if (err) {
		rec_err(err, "cannot fill the pid filter: %s", strerror(-err));
		goto fail;
	}
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.notify), on_notify, p, NULL);
	if (!p->rb) {
		err = rec_err(-errno, "cannot open the BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	err = attach_all(p, o, specs, n);
	if (err)
		goto fail;
	return p;
fail:
	rec_probe__close(p);
	errno = -err;
	return NULL;
}

const struct rec_maps *rec_probe__maps(const struct rec_probe *p)
{
	return &p->maps;
}

void rec_probe__set_notify_handler(struct rec_probe *p, int (*fn)(void *, void *, size_t),
				   void *ctx)
{
	p->notify_fn = fn;
	p->notify_ctx = ctx;
}

int rec_probe__poll(struct rec_probe *p, int timeout_ms)
{
	int n = ring_buffer__poll(p->rb, timeout_ms);

	return n == -EINTR ? 0 : n;
}

uint32_t rec_probe__nperf(const struct rec_probe *p)
{
	return p->nperf;
}

void rec_probe__close(struct rec_probe *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	for (uint32_t i = 0; i < p->nperf; i++)
		close(p->perf_fds[i]);
	ring_buffer__free(p->rb);
	stkrec_bpf__destroy(p->skel);
	free(p->links);
	free(p->perf_fds);
	free(p);
}
