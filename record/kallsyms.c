// SPDX-License-Identifier: MIT
/* kallsyms.c: the text symbols of /proc/kallsyms (modules included), sorted, for a KSYMS record. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "rec.h"

int rec_kallsyms_line(const char *line, uint64_t *addr, char *name, size_t nsz, char *mod,
		      size_t msz)
{
	const char *p, *end;
	char type;
	int pos = 0;
	size_t n;

	if (sscanf(line, "%" SCNx64 " %c %n", addr, &type, &pos) != 2 || !pos)
		return -EINVAL;
	p = line + pos;
	n = strcspn(p, " \t\n");
	if (!n || n >= nsz)
		return -EINVAL;
	/* Text symbols only: t/T (local/global), w/W (weak). */
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	memcpy(name, p, n);
	name[n] = 0;
	mod[0] = 0;
	p += n;
	p += strspn(p, " \t");
	if (*p == '[') {
		end = strchr(p, ']');
		if (!end || (size_t)(end - p - 1) >= msz)
			return -EINVAL;
		memcpy(mod, p + 1, end - p - 1);
		mod[end - p - 1] = 0;
	}
	return 1;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct cap_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int push_ksym(struct cap_ksyms *k, uint32_t *cap, uint64_t addr, const char *name,
		     const char *mod)
{
	struct cap_ksym *s;

	if (k->count == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 4096;

		s = realloc(k->syms, ncap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		k->syms = s;
		*cap = ncap;
	}
	s = &k->syms[k->count];
	s->addr = addr;
	s->name = strdup(name);
	s->module = *mod ? strdup(mod) : NULL;
	if (!s->name || (*mod && !s->module)) {
		free(s->name);
		free(s->module);
		return -ENOMEM;
	}
	k->count++;
	return 0;
}

int rec_kallsyms_read(const char *path, struct cap_ksyms *k)
{
	char line[1024], name[512], mod[256];
	uint32_t cap = 0;
	bool nonzero = false;
	uint64_t addr;
	int err = 0, r;
	FILE *f = fopen(path, "r");

	memset(k, 0, sizeof(*k));
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		r = rec_kallsyms_line(line, &addr, name, sizeof(name), mod, sizeof(mod));
		if (r <= 0)
			continue;
		nonzero |= addr != 0;
		err = push_ksym(k, &cap, addr, name, mod);
	}
	fclose(f);
	if (err) {
		rec_ksyms_free(k);
		return err;
	}
	/* kptr_restrict shows every address as zero: the names alone locate nothing. */
	if (!nonzero)
		k->flags |= CAP_KSYMS_F_HIDDEN;
	if (k->count)
		qsort(k->syms, k->count, sizeof(*k->syms), cmp_ksym);
	return 0;
}

void rec_ksyms_free(struct cap_ksyms *k)
{
	for (uint32_t i = 0; i < k->count; i++) {
		free(k->syms[i].name);
		free(k->syms[i].module);
	}
	free(k->syms);
	memset(k, 0, sizeof(*k));
}

/* ---- change detection ---------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * What kallsyms depends on, cheaply (once per interval): the name and load address of each
 * module (not the reference counts, which change all the time) and the ids of the loaded BPF
 * programs (each has a bpf_prog_<tag>_<name> [bpf] symbol). Returns a hash.
 */
uint64_t rec_kallsyms_signature(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char line[1024];
	__u32 id = 0;
	FILE *f = fopen("/proc/modules", "r");

	while (f && fgets(line, sizeof(line), f)) {
		const char *addr = strrchr(line, ' ');

		h = fnv1a(h, line, strcspn(line, " "));
		if (addr)
			h = fnv1a(h, addr, strcspn(addr, "\n"));
	}
	if (f)
		fclose(f);
	while (!bpf_prog_get_next_id(id, &id))
		h = fnv1a(h, (const char *)&id, sizeof(id));
	return h;
}

void rec_kwatch__taken(struct rec_kwatch *kw, uint64_t sig, const struct cap_ksyms *k)
{
	kw->sig = sig;
	kw->text_lo = kw->text_hi = 0;
	/* The kernel image's own text (module NULL): its symbols stay as they are for the run. */
	for (uint32_t i = 0; i < k->count; i++) {
		if (k->syms[i].module || !k->syms[i].addr)
			continue;
		if (!kw->text_lo || k->syms[i].addr < kw->text_lo)
			kw->text_lo = k->syms[i].addr;
		if (k->syms[i].addr >= kw->text_hi)
			kw->text_hi = k->syms[i].addr + 1;
	}
}

/*
 * Only frames outside the kernel image (modules, BPF programs) can need a newer snapshot: a
 * machine where BPF programs come and go every second (other tracers) would otherwise get a
 * full kallsyms copy per interval, about 1 MiB each.
 */
bool rec_kwatch__needed(struct rec_kwatch *kw, const struct cap_interval *iv, uint64_t *sig)
{
	/*
	 * STKREC_KSYMS_ANY_CHANGE=1 (tests/e2e/ksyms.sh): snapshot on any change. BPF-sampled stacks
	 * rarely show BPF frames (tracing programs do not nest), so the test cannot wait for one.
	 */
	bool outside = getenv("STKREC_KSYMS_ANY_CHANGE") != NULL;

	for (uint32_t i = 0; i < iv->nkstacks && !outside; i++)
		for (uint32_t j = 0; j < iv->kstacks[i].nips && !outside; j++) {
			uint64_t ip = iv->kstacks[i].ips[j];

			outside = ip < kw->text_lo || ip >= kw->text_hi;
		}
	if (!outside)
		return false;
	*sig = rec_kallsyms_signature();
	return *sig != kw->sig;
}
