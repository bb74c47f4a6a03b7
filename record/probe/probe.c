// SPDX-License-Identifier: MIT
/*
 * probe.c: the BPF side of stkrec. The only file that includes the skeleton: open it, set the
 * cfg_* knobs and map sizes, load only the programs this run uses, fill the filter maps, attach
 * every target with its probe id as BPF cookie.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "probe.h"
#include "../unwind/unwind.h"
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
	int fill_fd;		/* eventfd: BPF said a map is over half full (STK_NOTIFY_FILL) */
	struct rec_maps maps;
	enum rec_kfunc_mode kfunc_mode;
	int *fentry_fds;	/* fentry: one program copy and one link per function */
	struct bpf_func_info *fentry_fi;	/* the copies' BTF function info (fentry_func_info()) */
	uint32_t fentry_nfi;
	uint32_t nfentry;
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

/* Frames per stack: kernel.perf_event_max_stack, as the kernel's own walks, up to our limit. */
static uint32_t read_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	unsigned int v = 0;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	if (!v)
		return STK_DEFAULT_DEPTH;
	return v < STK_MAX_DEPTH ? v : STK_MAX_DEPTH;
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
	bpf_program__set_autoload(s->progs.on_fentry, kfunc && p->kfunc_mode == REC_KFUNC_FENTRY);
}

/* fentry is verified against one function: the first kernel-function target (others: copies). */
static int set_fentry_target(struct rec_probe *p, const struct rec_spec *specs, int n)
{
	if (p->kfunc_mode != REC_KFUNC_FENTRY)
		return 0;
	for (int i = 0; i < n; i++)
		if (specs[i].kind == CAP_PROBE_KFUNC && specs[i].ntargets)
			return bpf_program__set_attach_target(p->skel->progs.on_fentry, 0,
							      specs[i].targets[0].name);
	return 0;
}

static int size_maps(struct rec_probe *p, const struct rec_opts *o)
{
	struct stkrec_bpf *s = p->skel;
	struct bpf_map *stacks[2] = { s->maps.stacks0, s->maps.stacks1 };
	struct bpf_map *counts[2] = { s->maps.counts0, s->maps.counts1 };
	bool cfi = o->unwind != STK_UNWIND_FP;
	int err = 0;

	p->maps.depth = read_max_stack();
	p->maps.stack_entries = o->stack_storage_size;
	p->maps.count_entries = o->hash_storage_size;
	for (int g = 0; g < 2 && !err; g++) {
		err = bpf_map__set_value_size(stacks[g], 8 + p->maps.depth * sizeof(uint64_t));
		if (!err)
			err = bpf_map__set_max_entries(stacks[g], o->stack_storage_size);
		if (!err)
			err = bpf_map__set_max_entries(counts[g], o->hash_storage_size);
	}
	/* Without CFI the walker's maps stay at one entry. The chunks come later (unwind.c). */
	p->maps.unwind_chunks_cap = rec_unwind_slots(o);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.unwind_chunks, p->maps.unwind_chunks_cap);
	if (!err && !cfi)
		err = bpf_map__set_max_entries(s->maps.unwind_procs, 1);
	return err;
}

/* The deferred ring, and a slot to build a deferred event in per CPU and nesting depth. */
static int size_defer(struct rec_probe *p, const struct rec_opts *o)
{
	int ncpus = libbpf_num_possible_cpus();
	int err = bpf_map__set_max_entries(p->skel->maps.deferred, o->defer_ring_bytes);

	if (!err && ncpus < 0)
		err = ncpus;
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.defer_slots, STK_NEST_MAX * ncpus);
	return err;
}

/*
 * Does the running kernel have a function of this name? Its BTF's string table holds every
 * function's name, once: a search of it through mmap takes 0.2 ms, where parsing the whole BTF
 * (btf__load_vmlinux_btf()) took 6 ms of a 1 s recording's 35, and reading the file (sysfs
 * hands it out a page per read) 1 ms. Hand-written: libbpf has no lookup short of the parse.
 * Kernels before 6.16 cannot mmap their BTF; the functions asked for here are younger.
 */
static bool kernel_has_function(const char *name)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	const struct btf_header *h;
	size_t len = strlen(name) + 2;	/* the name whole: between two string ends */
	char pat[128];
	struct stat st;
	bool found = false;
	void *m;

	if (fd < 0)
		return false;
	if (len > sizeof(pat) || fstat(fd, &st) || (size_t)st.st_size < sizeof(*h))
		goto out;
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		goto out;
	h = m;
	pat[0] = '\0';
	memcpy(pat + 1, name, len - 1);
	if (h->magic == BTF_MAGIC &&
	    (uint64_t)h->hdr_len + h->str_off + h->str_len <= (uint64_t)st.st_size)
		found = memmem((char *)m + h->hdr_len + h->str_off, h->str_len, pat, len) != NULL;
	munmap(m, st.st_size);
out:
	close(fd);
	return found;
}

uint64_t rec_half_full(uint32_t entries)
{
	return entries / 2 + 1;
}

static void set_knobs(struct rec_probe *p, const struct rec_opts *o, int nspecs, int child)
{
	struct stkrec_bpf__rodata *ro = p->skel->rodata;

	ro->cfg_filter_tgid = o->npids > 0 || child > 0;
	ro->cfg_inherit = ro->cfg_filter_tgid && o->inherit;
	ro->cfg_command_tgid = child > 0 ? child : 0;
	ro->cfg_cpu = o->cpu;
	ro->cfg_threads = o->threads;
	ro->cfg_state = o->state;
	ro->cfg_filter_tid = o->ntids > 0;
	ro->cfg_kstacks = !o->user_only;
	ro->cfg_ustacks = !o->kernel_only;
	ro->cfg_skip_idle = nspecs == 0 && !o->include_idle;
	ro->cfg_snoop = o->snoop;
	ro->cfg_depth = p->maps.depth;
	ro->cfg_stacks_half = rec_half_full(p->maps.stack_entries);
	ro->cfg_keys_half = rec_half_full(p->maps.count_entries);
	ro->cfg_unwind = o->unwind;
	/* Python frames ride the CFI walk (bpf/unwind.bpf.h): none with --unwind fp */
	ro->cfg_python = o->unwind != STK_UNWIND_FP && o->python_frames != REC_PYFRAMES_NATIVE;
	/* --offcpu too: the stack at switch-out, then the time at switch-in (stk_deferred_time) */
	ro->cfg_defer = o->unwind != STK_UNWIND_FP;
	/* the tests' way to the user-space walker (record/unwind/unwind.c): it must agree with BPF's */
	ro->cfg_defer_all = ro->cfg_defer && getenv("STKREC_DEFER") &&
			    !strcmp(getenv("STKREC_DEFER"), "all");
	/* BPF task work (6.18): a walk that could not read the stack is repeated later */
	ro->cfg_retry = ro->cfg_defer && !o->offcpu &&
			kernel_has_function("bpf_task_work_schedule_resume_impl");
	/* Keyed stack hashes: a traced program cannot aim two stacks at one hash. */
	if (getrandom((void *)&ro->cfg_hash_seed, sizeof(ro->cfg_hash_seed), 0) !=
	    sizeof(ro->cfg_hash_seed))
		ro->cfg_hash_seed = rec_now_ns();
}

/*
 * --offcpu: on_sched_switch instead of the perf-event sampler; the block bounds
 * as knobs. Its stacks all go to stacks0 (bpf/stkrec.bpf.c, offcpu_switch_out), so stacks1
 * shrinks to one entry. Without --offcpu its program stays unloaded and its map minimal.
 */
static int offcpu_prepare(struct rec_probe *p, const struct rec_opts *o)
{
	struct stkrec_bpf *s = p->skel;

	bpf_program__set_autoload(s->progs.on_sched_switch, o->offcpu);
	if (!o->offcpu)
		return bpf_map__set_max_entries(s->maps.offcpu_start, 1);
	bpf_program__set_autoload(s->progs.on_sample, false);
	s->rodata->cfg_min_block_us = o->min_block_us;
	s->rodata->cfg_max_block_us = o->max_block_us;
	return bpf_map__set_max_entries(s->maps.stacks1, 1);
}

static int fill_filter(int fd, const uint32_t *ids, uint32_t n, uint8_t how)
{
	for (uint32_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &ids[i], &how, BPF_ANY))
			return -errno;
	return 0;
}

int rec_probe__trace(struct rec_probe *p, const uint32_t *tgids, uint32_t n)
{
	return fill_filter(bpf_map__fd(p->skel->maps.tgids), tgids, n, STK_TGID_TRACED);
}

static int fill_filters(struct rec_probe *p, const struct rec_opts *o, int child)
{
	uint32_t c = child;
	int err;

	err = fill_filter(bpf_map__fd(p->skel->maps.tgids), o->pids, o->npids, STK_TGID_TRACED);
	if (!err && child > 0)
		err = fill_filter(bpf_map__fd(p->skel->maps.tgids), &c, 1, STK_TGID_FROM_EXEC);
	if (!err)
		err = fill_filter(bpf_map__fd(p->skel->maps.tids), o->tids, o->ntids, STK_TGID_TRACED);
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

/*
 * One kprobe per function. A function the kernel refuses (blacklisted, a notrace alias) is
 * skipped and counted, not fatal: the spec fails only when nothing attached.
 */
static int attach_kprobes(struct rec_probe *p, struct rec_spec *s)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .bpf_cookie = s->id);
	int err = 0;

	if (p->kfunc_mode == REC_KFUNC_KPROBE_MULTI)
		return attach_kprobe_multi(p, s);
	for (uint32_t i = 0; i < s->ntargets; i++) {
		err = add_link(p, bpf_program__attach_kprobe_opts(p->skel->progs.on_kprobe,
								  s->targets[i].name, &opts));
		if (err)
			s->nskipped++;
		else
			s->nattached++;
	}
	if (!s->nattached)
		return rec_err(err, "cannot attach kprobe to %s for '%s': %s",
			       s->ntargets == 1 ? s->targets[0].name : "any function", s->text,
			       strerror(-err));
	return 0;
}

static int push_fentry_fd(struct rec_probe *p, int fd)
{
	int *v = realloc(p->fentry_fds, (p->nfentry + 1) * sizeof(*v));

	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	p->fentry_fds = v;
	p->fentry_fds[p->nfentry++] = fd;
	return 0;
}

/* The BTF func_info on_fentry's copies are loaded with (record/probe/funcinfo.c) */
static int fentry_func_info(struct rec_probe *p)
{
	const struct bpf_program *prog = p->skel->progs.on_fentry;
	size_t elf_size;
	const void *elf = stkrec_bpf__elf_bytes(&elf_size);

	return rec_func_info(elf, elf_size, bpf_object__btf(p->skel->obj), "on_fentry",
			     bpf_program__insns(prog), bpf_program__insn_cnt(prog), &p->fentry_fi,
			     &p->fentry_nfi);
}

/*
 * An fentry program is verified against one function (attach_btf_id at load). The skeleton
 * loaded on_fentry for the first target; every function gets its own copy of the loaded
 * instructions (map fds already embedded), with their BTF (fentry_func_info()), and a link
 * carrying the probe id as cookie.
 */
static int attach_one_fentry(struct rec_probe *p, const struct btf *vmlinux, const char *func,
			     uint32_t cookie)
{
	const struct bpf_program *prog = p->skel->progs.on_fentry;
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_FENTRY,
		    .prog_btf_fd = bpf_object__btf_fd(p->skel->obj), .func_info = p->fentry_fi,
		    .func_info_cnt = p->fentry_nfi, .func_info_rec_size = sizeof(*p->fentry_fi));
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .tracing.cookie = cookie);
	int id = btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC), fd, link, err;

	if (id < 0)
		return id;
	popts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "on_fentry", "GPL", bpf_program__insns(prog),
			   bpf_program__insn_cnt(prog), &popts);
	if (fd < 0)
		return fd;
	err = push_fentry_fd(p, fd);
	if (err)
		return err;
	link = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, &lopts);
	if (link < 0)
		return link;
	return push_fentry_fd(p, link);
}

static int attach_fentries(struct rec_probe *p, struct rec_spec *s)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int err = -errno;

	if (!vmlinux)
		return rec_err(err, "cannot read the kernel's BTF: %s", strerror(-err));
	err = p->fentry_fi ? 0 : fentry_func_info(p);
	if (err) {
		btf__free(vmlinux);
		return rec_err(err, "cannot read on_fentry's BTF function info: %s", strerror(-err));
	}
	for (uint32_t i = 0; i < s->ntargets; i++) {
		err = attach_one_fentry(p, vmlinux, s->targets[i].name, s->id);
		if (err == -ENOMEM)
			break;
		if (err)
			s->nskipped++;
		else
			s->nattached++;
	}
	btf__free(vmlinux);
	if (!s->nattached)
		return rec_err(err, "cannot attach fentry to %s for '%s': %s",
			       s->ntargets == 1 ? s->targets[0].name : "any function", s->text,
			       strerror(-err));
	return 0;
}

static int attach_kfuncs(struct rec_probe *p, struct rec_spec *s)
{
	int err = p->kfunc_mode == REC_KFUNC_FENTRY ? attach_fentries(p, s) : attach_kprobes(p, s);

	if (!err && s->nskipped)
		fprintf(stderr, "stkrec: note: '%s': skipped %u kernel functions that cannot be "
				"probed with %s (notrace, blacklisted or refused)\n",
			s->text, s->nskipped, rec_kfunc_mode_name(p->kfunc_mode));
	return err;
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
		return attach_kfuncs(p, s);
	}
	return -EINVAL;
}

static int open_perf_event(const struct rec_opts *o, const struct rec_event *e, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = e->type,	/* -e (events.c); cpu-clock by default */
		.config = e->config,
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
	const struct rec_event *e = rec_event_find(o->event);	/* checked by record/opts.c */
	int ncpus = libbpf_num_possible_cpus();

	if (!e)
		return rec_err(-EINVAL, "unknown event '%s'", o->event);
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
		fd = open_perf_event(o, e, cpu);
		if (fd < 0 && errno == ENODEV)
			continue;	/* an offline CPU */
		/* A VM without a virtual PMU (or a PMU without this counter): ENOENT/EOPNOTSUPP. */
		if (fd < 0 && rec_event_is_hardware(e) && (errno == ENOENT || errno == EOPNOTSUPP))
			return rec_err(-errno, "cannot sample '%s': this machine has no "
				       "hardware PMU event for it (perf_event_open: %s)", e->name,
				       strerror(errno));
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

static int attach_offcpu(struct rec_probe *p)
{
	int err = add_link(p, bpf_program__attach(p->skel->progs.on_sched_switch));

	if (err)
		return rec_err(err, "cannot attach to the sched_switch raw tracepoint: %s",
			       strerror(-err));
	return 0;
}

int rec_probe__attach(struct rec_probe *p, const struct rec_opts *o, struct rec_spec *specs,
		      int n)
{
	int err = add_link(p, bpf_program__attach(p->skel->progs.on_exec));

	if (!err)
		err = add_link(p, bpf_program__attach(p->skel->progs.on_exit));
	if (!err)
		err = add_link(p, bpf_program__attach(p->skel->progs.on_fork));
	if (err)
		return rec_err(err, "cannot attach to the sched_process_exec/exit/fork raw tracepoints: %s",
			       strerror(-err));
	if (o->offcpu)
		return attach_offcpu(p);
	if (!n)
		return attach_sampling(p, o);
	if (o->cpu >= libbpf_num_possible_cpus())
		return rec_err(-EINVAL, "invalid cpu %d: this machine has %d", o->cpu,
			       libbpf_num_possible_cpus());
	for (int i = 0; i < n && !err; i++)
		err = attach_spec(p, &specs[i], o);
	return err;
}

/* A map over half full wakes the main loop (rec_probe__fill_fd); the rest is the handler's. */
static int on_notify(void *ctx, void *data, size_t len)
{
	struct rec_probe *p = ctx;
	const struct stk_notify *n = data;

	if (len >= sizeof(*n) && n->kind == STK_NOTIFY_FILL) {
		rec_eventfd_signal(p->fill_fd);
		return 0;
	}
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
	p->maps.snoop_drops_fd = bpf_map__fd(s->maps.snoop_drops);
	p->maps.events_fd = bpf_map__fd(s->maps.events);
	p->maps.unwind_procs_fd = bpf_map__fd(s->maps.unwind_procs);
	p->maps.unwind_chunks_fd = bpf_map__fd(s->maps.unwind_chunks);
	p->maps.exec_ns_fd = bpf_map__fd(s->maps.exec_ns);
	p->maps.deferred_fd = s->rodata->cfg_defer ? bpf_map__fd(s->maps.deferred) : -1;
	p->maps.unwind = s->rodata->cfg_unwind;
	p->maps.gen_seq = &s->bss->gen_seq;
	p->maps.drained_seq = &s->bss->drained_seq;
	p->maps.retries_pending = (volatile uint64_t *)&s->bss->retries_pending;
	p->maps.nstacks = (volatile uint64_t *)s->bss->nstacks;
	p->maps.nkeys = (volatile uint64_t *)s->bss->nkeys;
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
	p->fill_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->fill_fd < 0) {
		err = rec_err(-errno, "cannot create an eventfd: %s", strerror(errno));
		goto fail;
	}
	libbpf_set_print(libbpf_quiet);
	if (uses_kind(specs, n, CAP_PROBE_KFUNC))
		p->kfunc_mode = rec_kfunc_mode("", &fentry_err);
	p->skel = stkrec_bpf__open();
	if (!p->skel) {
		err = rec_err(-errno, "cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	choose_programs(p, specs, n);
	err = set_fentry_target(p, specs, n);
	if (err) {
		rec_err(err, "cannot set the fentry target: %s", strerror(-err));
		goto fail;
	}
	err = size_maps(p, o);
	set_knobs(p, o, n, child_pid);	/* after size_maps(): it sets the depth */
	if (!err)
		err = offcpu_prepare(p, o);
	if (!err && !p->skel->rodata->cfg_retry)	/* no task work: its slots unused */
		err = bpf_map__set_max_entries(p->skel->maps.retries, 1);
	if (!err && o->snoop)	/* snoop: --ringbuf-size MB (a power of two: opts.c checks) */
		err = bpf_map__set_max_entries(p->skel->maps.events, o->ringbuf_mb << 20);
	if (!err && p->skel->rodata->cfg_defer)
		err = size_defer(p, o);
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
	if (o->offcpu) {
		/* Both generations' counts refer to stacks0 (see offcpu_switch_out). */
		p->maps.stacks_fd[1] = p->maps.stacks_fd[0];
		p->maps.offcpu = true;
	}
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

int rec_probe__pycode_fd(const struct rec_probe *p)
{
	return bpf_map__fd(p->skel->maps.py_notify);
}

int rec_probe__pyexes_fd(const struct rec_probe *p)
{
	return bpf_map__fd(p->skel->maps.py_exes);
}

/* for the reader thread (proc/reader.c), which waits on it and then polls without blocking. */
int rec_probe__notify_fd(const struct rec_probe *p)
{
	return ring_buffer__epoll_fd(p->rb);
}

int rec_probe__fill_fd(const struct rec_probe *p)
{
	return p->fill_fd;
}

void rec_probe__fill_seen(struct rec_probe *p)
{
	uint64_t count;
	ssize_t n = read(p->fill_fd, &count, sizeof(count));

	(void)n;	/* EAGAIN: nothing was said since the last look */
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
	for (uint32_t i = p->nfentry; i > 0; i--)	/* links before their programs */
		close(p->fentry_fds[i - 1]);
	free(p->fentry_fds);
	free(p->fentry_fi);
	ring_buffer__free(p->rb);
	stkrec_bpf__destroy(p->skel);
	if (p->fill_fd >= 0)
		close(p->fill_fd);
	free(p->links);
	free(p->perf_fds);
	free(p);
}
