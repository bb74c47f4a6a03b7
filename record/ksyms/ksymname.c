// SPDX-License-Identifier: MIT
/*
 * ksymname.c: kernel addresses named by the kernel itself (bpf/ksyms.bpf.c), for the symbols a
 * drain writes (record/ksyms/kallsyms.c). One BPF_PROG_TEST_RUN names a batch of addresses with the
 * lookup behind %pS: the symbol holding each, its offset and size, its module. No kallsyms text
 * is formatted or parsed, and the names are the ones the kernel's own stack traces print (of
 * aliases, the one kallsyms lists first at their address).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ksyms.h"
#include "ksyms.skel.h"

struct rec_ksymname {
	struct ksyms_bpf *skel;
};

void rec_ksymname__close(struct rec_ksymname *kn)
{
	if (!kn)
		return;
	ksyms_bpf__destroy(kn->skel);
	free(kn);
}

static int run_batch(struct rec_ksymname *kn, uint32_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);

	kn->skel->bss->n = n;
	if (bpf_prog_test_run_opts(bpf_program__fd(kn->skel->progs.name_addrs), &run))
		return -errno;
	return 0;
}

struct rec_ksymname *rec_ksymname__open(void)
{
	struct rec_ksymname *kn = calloc(1, sizeof(*kn));
	int err = kn ? 0 : -ENOMEM;

	if (!err) {
		kn->skel = ksyms_bpf__open_and_load();
		err = kn->skel ? run_batch(kn, 0) : -errno;
	}
	/*
	 * kptr_restrict 2 hides kernel addresses from root too: the kernel then refuses
	 * bpf_kallsyms_lookup_name(), and stkrec reads kallsyms, which shows only zeros, and the
	 * capture says the symbols were hidden (format.md 4.10).
	 */
	if (!err && kn->skel->bss->image_hi <= kn->skel->bss->image_lo)
		err = -EPERM;
	if (err) {
		rec_ksymname__close(kn);
		errno = -err;
		return NULL;
	}
	return kn;
}

bool rec_ksymname__in_image(const struct rec_ksymname *kn, uint64_t addr)
{
	return addr >= kn->skel->bss->image_lo && addr < kn->skel->bss->image_hi;
}

/* A hex number of at most 16 digits at *p, after "0x"; advances *p past it. */
static bool hex_at(const char **p, uint64_t *v)
{
	const char *q = *p;
	int digits = 0;

	if (q[0] != '0' || q[1] != 'x')
		return false;
	*v = 0;
	for (q += 2; digits < 17; q++, digits++) {
		char c = *q;
		unsigned int d = c >= '0' && c <= '9' ? (unsigned int)(c - '0') :
				 c >= 'a' && c <= 'f' ? (unsigned int)(c - 'a' + 10) : 16;

		if (d == 16)
			break;
		*v = *v << 4 | d;
	}
	if (!digits || digits > 16)
		return false;
	*p = q;
	return true;
}

int rec_ksymname_parse(const char *text, uint64_t addr, struct rec_ksym_named *s)
{
	const char *plus = strrchr(text, '+'), *p, *mod;
	uint64_t off, size;
	size_t len;

	memset(s, 0, sizeof(*s));
	/* "0xADDR": no symbol holds it */
	if (!plus || plus == text)
		return 0;
	p = plus + 1;
	if (!hex_at(&p, &off) || *p++ != '/' || !hex_at(&p, &size) || off >= size || off > addr)
		return -EINVAL;
	if (*p == ' ' && p[1] == '[') {
		mod = p + 2;
		len = strcspn(mod, "]");
		if (!len || len >= sizeof(s->module) || mod[len] != ']' || mod[len + 1])
			return -EINVAL;
		memcpy(s->module, mod, len);
	} else if (*p) {
		return -EINVAL;
	}
	len = (size_t)(plus - text);
	if (len >= sizeof(s->name))
		return -EINVAL;
	memcpy(s->name, text, len);
	s->addr = addr - off;
	s->size = size;
	return 1;
}

int rec_ksymname__name(struct rec_ksymname *kn, const uint64_t *addrs, uint32_t n,
		       struct rec_ksym_named *out)
{
	struct ksyms_bpf__bss *bss = kn->skel->bss;
	int err;

	if (n > STK_KSYMNAME_BATCH)
		return -EINVAL;
	memcpy(bss->addrs, addrs, n * sizeof(*addrs));
	err = run_batch(kn, n);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++) {
		bss->names[i][STK_KSYMNAME_TEXT - 1] = 0;
		/* a text this code cannot read names nothing: the frame stays unnamed, counted */
		if (rec_ksymname_parse(bss->names[i], addrs[i], &out[i]) < 0)
			memset(&out[i], 0, sizeof(out[i]));
	}
	return 0;
}
