// SPDX-License-Identifier: MIT
/* meta.c: the META record: the keys listed in docs/format.md 4.1 and the probe list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "write.h"

struct kv_list {
	struct cap_meta *m;
	uint32_t cap;
	int err;
};

static void put(struct kv_list *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(struct kv_list *l, const char *key, const char *fmt, ...)
{
	struct cap_kv *v;
	va_list ap;
	int n;

	if (l->err)
		return;
	if (l->m->nkv == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 32;
		v = realloc(l->m->kv, l->cap * sizeof(*v));
		if (!v) {
			l->err = -ENOMEM;
			return;
		}
		l->m->kv = v;
	}
	v = &l->m->kv[l->m->nkv];
	v->key = strdup(key);
	va_start(ap, fmt);
	n = vasprintf(&v->value, fmt, ap);
	va_end(ap);
	if (!v->key || n < 0) {
		free(v->key);
		l->err = -ENOMEM;
		return;
	}
	l->m->nkv++;
}

/* First line of a small /proc file, newline stripped; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, sz, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static char *join_ids(const uint32_t *ids, uint32_t n)
{
	char *s = calloc(1, n * 11 + 1);

	if (!s)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		sprintf(s + strlen(s), "%s%u", i ? "," : "", ids[i]);
	return s;
}

static char *join_argv(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void put_host(struct kv_list *l)
{
	struct utsname u;
	char buf[128];

	uname(&u);
	put(l, "host", "%s", u.nodename);
	put(l, "kernel", "%s", u.release);
	put(l, "arch", "%s", u.machine);
	put(l, "ncpus", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	read_line("/proc/sys/kernel/random/boot_id", buf, sizeof(buf));
	put(l, "boot_id", "%s", buf);
	put(l, "tool_version", "%s", STK_VERSION);
	read_line("/proc/sys/kernel/kptr_restrict", buf, sizeof(buf));
	put(l, "kptr_restrict", "%s", buf);
}

/* the sampling event, and what a row's count means (off-CPU: microseconds). */
static void put_mode_keys(struct kv_list *l, const struct rec_opts *o, int nspecs)
{
	const struct rec_event *e = rec_event_find(o->event);

	if (!nspecs && !o->offcpu && e)
		put(l, "event", "%s", e->name);
	put(l, "weight", "%s", o->offcpu ? "us" : "count");
	if (o->offcpu) {
		put(l, "min_block_us", "%llu", (unsigned long long)o->min_block_us);
		put(l, "max_block_us", "%llu", (unsigned long long)o->max_block_us);
	}
}

static void put_options(struct kv_list *l, const struct rec_opts *o, int nspecs, uint32_t depth,
			const char *pids)
{
	char *argv = join_argv(o->argc, o->argv), *tids = join_ids(o->tids, o->ntids);

	if (!argv || !tids)
		l->err = -ENOMEM;
	put(l, "argv", "%s", argv ? argv : "");
	put(l, "mode", "%s",
	    o->snoop ? "snoop" : nspecs ? "count" : o->offcpu ? "offcpu" : "profile");
	if (o->snoop)	/* snoop */
		put(l, "ringbuf_mb", "%u", o->ringbuf_mb);
	put(l, "freq_hz", "%u", nspecs || o->offcpu ? 0 : o->freq_hz);
	put(l, "period", "%llu", nspecs || o->offcpu ? 0ull : (unsigned long long)o->period);
	put_mode_keys(l, o, nspecs);
	put(l, "interval_s", "%u", o->interval_s);
	put(l, "duration_s", "%u", o->duration_s);
	put(l, "pid_filter", "%s", pids);
	put(l, "tid_filter", "%s", tids ? tids : "");
	if (o->cpu >= 0)
		put(l, "cpu_filter", "%d", o->cpu);
	else
		put(l, "cpu_filter", "%s", "");
	put(l, "stacks", "%s", o->kernel_only ? "kernel" : o->user_only ? "user" : "kernel,user");
	put(l, "include_idle", "%d", o->include_idle);
	put(l, "perf_event_max_stack", "%u", depth);
	put(l, "stack_storage_size", "%u", o->stack_storage_size);
	put(l, "hash_storage_size", "%u", o->hash_storage_size);
	put(l, "objects", "%s", rec_objects_mode(o));	/* what OBJECTS records embed */
	/* how user stacks were walked (docs/bpf.md 7) */
	put(l, "unwind", "%s", rec_unwind_mode_name(o->unwind));
	if (o->unwind != STK_UNWIND_FP)
		put(l, "unwind_memory_mb", "%u", o->unwind_mb);
	/* 3.1: whether Python frames were recorded, and how stkreport shows them by default */
	put(l, "python_frames", "%s", rec_python_frames_name(o->unwind == STK_UNWIND_FP ?
							     REC_PYFRAMES_NATIVE : o->python_frames));
	/* format.md 4.1: what the capture holds of kallsyms */
	put(l, "kallsyms", "%s", o->all_kallsyms ? "all" : "hits");
	if (o->rotate)
		put(l, "rotate", "%s", o->rotate);
	if (o->flight_s)
		put(l, "flight_s", "%u", o->flight_s);
	free(argv);
	free(tids);
}

static int put_probes(struct cap_meta *m, const struct rec_opts *o, const struct rec_spec *specs,
		      int n, uint32_t nperf)
{
	int count = n ? n : 1;

	m->probes = calloc(count, sizeof(*m->probes));
	if (!m->probes)
		return -ENOMEM;
	m->nprobes = count;
	if (!n && o->offcpu) {	/* one raw tracepoint */
		m->probes[0].kind = CAP_PROBE_TRACEPOINT;
		m->probes[0].nattached = 1;
		m->probes[0].spec = strdup("offcpu:sched_switch");
		return m->probes[0].spec ? 0 : -ENOMEM;
	}
	if (!n && o->event && strcmp(o->event, "cpu-clock")) {	/* -e: "EVENT:period:N" */
		m->probes[0].kind = CAP_PROBE_SAMPLE;
		m->probes[0].nattached = nperf;
		if (o->period)
			return asprintf(&m->probes[0].spec, "%s:period:%llu", o->event,
					(unsigned long long)o->period) < 0 ? -ENOMEM : 0;
		return asprintf(&m->probes[0].spec, "%s:hz:%u", o->event, o->freq_hz) < 0 ?
			-ENOMEM : 0;
	}
	if (!n) {
		m->probes[0].kind = CAP_PROBE_SAMPLE;
		m->probes[0].nattached = nperf;
		if (o->period)
			return asprintf(&m->probes[0].spec, "profile:period:%llu",
					(unsigned long long)o->period) < 0 ? -ENOMEM : 0;
		return asprintf(&m->probes[0].spec, "profile:hz:%u", o->freq_hz) < 0 ? -ENOMEM : 0;
	}
	for (int i = 0; i < n; i++) {
		m->probes[i].id = specs[i].id;
		m->probes[i].kind = specs[i].kind;
		m->probes[i].nattached = specs[i].nattached;
		m->probes[i].spec = strdup(specs[i].text);
		if (!m->probes[i].spec)
			return -ENOMEM;
	}
	return 0;
}

/* Kernel functions: how they were probed and how many matches could not be (docs/stkrec.8). */
static void put_kfunc_keys(struct kv_list *l, const struct rec_spec *specs, int nspecs)
{
	char key[64];

	for (int i = 0; i < nspecs; i++) {
		if (specs[i].kind != CAP_PROBE_KFUNC)
			continue;
		snprintf(key, sizeof(key), "probe.%u.mechanism", specs[i].id);
		put(l, key, "%s", rec_kfunc_mode_name(specs[i].mechanism));
		snprintf(key, sizeof(key), "probe.%u.skipped", specs[i].id);
		put(l, key, "%u", specs[i].nskipped);
	}
}

int rec_meta_build(const struct rec_opts *o, const struct rec_spec *specs, int nspecs,
		   uint32_t nperf, uint32_t depth, uint64_t mono_ns, const char *pid_filter,
		   struct cap_meta *m)
{
	struct kv_list l = { .m = m };
	char *pids = pid_filter ? NULL : join_ids(o->pids, o->npids);
	uint64_t mono, real;

	memset(m, 0, sizeof(*m));
	put_host(&l);
	put_options(&l, o, nspecs, depth, pid_filter ? pid_filter : pids ? pids : "");
	free(pids);
	/* One pair read back to back: maps interval timestamps (monotonic) to wall time. */
	mono = rec_now_ns();
	real = real_ns();
	put(&l, "clock", "%s", "monotonic");
	put(&l, "clock.mono_ns", "%llu", (unsigned long long)mono);
	put(&l, "clock.real_ns", "%llu", (unsigned long long)real);
	put(&l, "start.mono_ns", "%llu", (unsigned long long)mono_ns);
	put_kfunc_keys(&l, specs, nspecs);
	if (!l.err)
		l.err = put_probes(m, o, specs, nspecs, nperf);
	if (l.err)
		rec_meta_free(m);
	return l.err;
}

void rec_meta_free(struct cap_meta *m)
{
	for (uint32_t i = 0; i < m->nkv; i++) {
		free(m->kv[i].key);
		free(m->kv[i].value);
	}
	for (uint32_t i = 0; i < m->nprobes; i++)
		free(m->probes[i].spec);
	free(m->kv);
	free(m->probes);
	memset(m, 0, sizeof(*m));
}
