// SPDX-License-Identifier: MIT
/*
 * spec.c: probe specs as bcc's stackcount reads them, and their targets: tracepoints listed from
 * tracefs, kernel functions from available_filter_functions, user functions and USDT probes
 * enumerated from the ELF file (elfsym.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"

static int copy_part(char *dst, size_t sz, const char *src, size_t len)
{
	if (len >= sz)
		return -EINVAL;
	memcpy(dst, src, len);
	dst[len] = 0;
	return 0;
}

/* bcc stackcount Probe.__init__: 1 part FUNC, 2 parts LIB:FUNC, 3 parts TYPE:LIB:PATTERN. */
int rec_spec_split(const char *text, struct rec_spec_parts *p)
{
	const char *c1 = strchr(text, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	memset(p, 0, sizeof(*p));
	p->type = 'p';
	if (!*text)
		return -EINVAL;
	if (!c1)
		return copy_part(p->pattern, sizeof(p->pattern), text, strlen(text));
	if (!c2) {
		if (copy_part(p->lib, sizeof(p->lib), text, c1 - text))
			return -EINVAL;
		return copy_part(p->pattern, sizeof(p->pattern), c1 + 1, strlen(c1 + 1));
	}
	if (strchr(c2 + 1, ':') || c1 - text != 1)
		return -EINVAL;
	p->type = text[0];
	if (p->type != 'p' && p->type != 't' && p->type != 'u')
		return -EINVAL;
	if (p->type == 't') {
		/* t:CATEGORY:EVENT: the pattern is "CATEGORY:EVENT", no library. */
		if (c2 == c1 + 1 || !c2[1])
			return -EINVAL;
		return copy_part(p->pattern, sizeof(p->pattern), c1 + 1, strlen(c1 + 1));
	}
	if (copy_part(p->lib, sizeof(p->lib), c1 + 1, c2 - c1 - 1))
		return -EINVAL;
	return copy_part(p->pattern, sizeof(p->pattern), c2 + 1, strlen(c2 + 1));
}

/* The matcher of one part of a spec in *m; on failure 0 the one-line error naming the spec. */
static int spec_matcher(const struct rec_spec *s, const char *pattern, bool regexp,
			struct rec_matcher **m)
{
	*m = rec_matcher__new(pattern, regexp);
	if (*m)
		return 0;
	if (errno == EINVAL)
		return rec_err(-EINVAL, "invalid regular expression '%s' in '%s'", pattern, s->text);
	return rec_err(-ENOMEM, "out of memory");
}

/* ---- target lists ---------------------------------------------------------------------- */

static int add_target(struct rec_spec *s, const char *name, const char *provider, uint64_t offset,
		      uint32_t nsites)
{
	struct rec_target *t = realloc(s->targets, (s->ntargets + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	s->targets = t;
	t += s->ntargets;
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	t->provider = provider ? strdup(provider) : NULL;
	t->offset = offset;
	t->nsites = nsites;
	if (!t->name || (provider && !t->provider)) {
		free(t->name);
		free(t->provider);
		return -ENOMEM;
	}
	s->ntargets++;
	return 0;
}

static int cmp_target_name(const void *a, const void *b)
{
	return strcmp(((const struct rec_target *)a)->name, ((const struct rec_target *)b)->name);
}

static bool is_event_dir(const struct dirent *d)
{
	return d->d_type == DT_DIR && d->d_name[0] != '.';
}

/*
 * Whether event dir `path` is a tracepoint a BPF program can attach to. The kernel gives an
 * event no "enable" file when it cannot be enabled on its own (TRACE_EVENT_FL_IGNORE_ENABLE:
 * ftrace's own function, print, kernel_stack... events, 18 of them on 6.18), and these are no
 * tracepoints to perf either: listed or matched, they would only fail to attach.
 */
static bool attachable_event(char *path, size_t len)
{
	size_t n = strlen(path);
	bool yes;

	if (n + sizeof("/enable") > len)
		return false;
	memcpy(path + n, "/enable", sizeof("/enable"));
	yes = !access(path, F_OK);
	path[n] = 0;
	return yes;
}

static int match_events(struct rec_spec *s, const char *events, const struct rec_matcher *cat_m,
			const struct rec_matcher *ev_m)
{
	DIR *cats = opendir(events), *evs;
	struct dirent *c, *e;
	char path[PATH_MAX + 256], name[512];
	int err = 0;

	if (!cats)
		return -errno;
	while (!err && (c = readdir(cats))) {
		if (!is_event_dir(c) || !rec_matcher__match(cat_m, c->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", events, c->d_name);
		evs = opendir(path);
		if (!evs)
			continue;
		while (!err && (e = readdir(evs))) {
			char ev[PATH_MAX + 512];

			if (!is_event_dir(e) || !rec_matcher__match(ev_m, e->d_name))
				continue;
			snprintf(ev, sizeof(ev), "%s/%s", path, e->d_name);
			if (!attachable_event(ev, sizeof(ev)))
				continue;
			snprintf(name, sizeof(name), "%s:%s", c->d_name, e->d_name);
			err = add_target(s, name, NULL, 0, 0);
		}
		closedir(evs);
	}
	closedir(cats);
	return err;
}

static int resolve_tracepoint(struct rec_spec *s, const struct rec_opts *o)
{
	const char *tracefs = rec_tracefs();
	char events[PATH_MAX], cat[256];
	const char *colon = strchr(s->pattern, ':');
	struct rec_matcher *cat_m = NULL, *ev_m = NULL;
	int err;

	if (!tracefs)
		return rec_err(-errno, "cannot mount tracefs at /sys/kernel/tracing: %s",
			       strerror(errno));
	if (!colon || colon - s->pattern >= (long)sizeof(cat))
		return rec_err(-EINVAL, "invalid tracepoint '%s'", s->text);
	memcpy(cat, s->pattern, colon - s->pattern);
	cat[colon - s->pattern] = 0;
	snprintf(events, sizeof(events), "%s/events", tracefs);
	err = spec_matcher(s, cat, o->regexp, &cat_m);
	if (!err)
		err = spec_matcher(s, colon + 1, o->regexp, &ev_m);
	if (err) {
		rec_matcher__free(cat_m);
		return err;
	}
	err = match_events(s, events, cat_m, ev_m);
	rec_matcher__free(cat_m);
	rec_matcher__free(ev_m);
	if (err)
		return rec_err(err, "cannot list tracepoints in %s: %s", events, strerror(-err));
	if (!s->ntargets)
		return rec_err(-ENOENT, "no tracepoint matches '%s'", s->text);
	qsort(s->targets, s->ntargets, sizeof(*s->targets), cmp_target_name);
	return 0;
}

static int resolve_kfunc(struct rec_spec *s, const struct rec_opts *o)
{
	return rec_kfunc_resolve(s, o);	/* kfunc.c: traceable matches, skipped ones, limits */
}

static int resolve_user(struct rec_spec *s, const struct rec_opts *o)
{
	int pid = o->npids == 1 ? (int)o->pids[0] : -1;
	struct rec_matcher *m;
	int err;

	s->path = rec_resolve_lib(s->lib, pid);
	if (!s->path)
		return rec_err(-ENOENT, "cannot find library or binary '%s' for '%s'", s->lib,
			       s->text);
	err = spec_matcher(s, s->pattern, o->regexp, &m);
	if (err)
		return err;
	if (s->kind == CAP_PROBE_UPROBE)
		err = rec_elf_functions(s->path, m, &s->targets, &s->ntargets);
	else
		err = rec_elf_usdt(s->path, m, &s->targets, &s->ntargets);
	rec_matcher__free(m);
	if (err == -EINVAL)
		return rec_err(err, "cannot read '%s' as an ELF file", s->path);
	if (err)
		return rec_err(err, "cannot read %s: %s", s->path, strerror(-err));
	if (!s->ntargets)
		return rec_err(-ENOENT, s->kind == CAP_PROBE_USDT ? "no USDT probe matches '%s' in %s"
								  : "no function matches '%s' in %s",
			       s->pattern, s->path);
	return 0;
}

static int resolve_one(struct rec_spec *s, const struct rec_opts *o)
{
	struct rec_spec_parts parts;

	if (rec_spec_split(s->text, &parts))
		return rec_err(-EINVAL, "invalid probe '%s' (TYPE must be p, t or u: "
				       "t:CATEGORY:EVENT, [p:]LIB:FUNC, u:LIB:PROBE, [p::]FUNC)",
			       s->text);
	s->pattern = strdup(parts.pattern);
	s->lib = strdup(parts.lib);
	if (!s->pattern || !s->lib)
		return -ENOMEM;
	if (!*s->pattern)
		return rec_err(-EINVAL, "invalid probe '%s': empty pattern", s->text);
	if (parts.type == 't') {
		s->kind = CAP_PROBE_TRACEPOINT;
		return resolve_tracepoint(s, o);
	}
	if (parts.type == 'u') {
		if (!*s->lib)
			return rec_err(-EINVAL, "invalid probe '%s': USDT needs a library", s->text);
		s->kind = CAP_PROBE_USDT;
		return resolve_user(s, o);
	}
	if (!*s->lib) {
		s->kind = CAP_PROBE_KFUNC;
		return resolve_kfunc(s, o);
	}
	s->kind = CAP_PROBE_UPROBE;
	return resolve_user(s, o);
}

int rec_specs__resolve(const struct rec_opts *o, struct rec_spec **out, int *nout)
{
	struct rec_spec *specs = calloc(o->nspecs ? o->nspecs : 1, sizeof(*specs));
	int err = 0;

	if (!specs)
		return -ENOMEM;
	for (int i = 0; i < o->nspecs && !err; i++) {
		specs[i].text = o->specs[i];
		specs[i].id = i;
		err = resolve_one(&specs[i], o);
	}
	if (err) {
		rec_specs__free(specs, o->nspecs);
		return err;
	}
	*out = specs;
	*nout = o->nspecs;
	return 0;
}

void rec_specs__free(struct rec_spec *specs, int n)
{
	if (!specs)
		return;
	for (int i = 0; i < n; i++) {
		for (uint32_t j = 0; j < specs[i].ntargets; j++) {
			free(specs[i].targets[j].name);
			free(specs[i].targets[j].provider);
		}
		free(specs[i].targets);
		free(specs[i].pattern);
		free(specs[i].lib);
		free(specs[i].path);
	}
	free(specs);
}
