/* SPDX-License-Identifier: MIT */
/*
 * ksyms.h: ksyms/, the kernel symbols a capture carries: /proc/kallsyms (kallsyms.c) and the
 * names the kernel gives (ksymname.c, bpf/ksyms.bpf.c), written as KSYMS records.
 */
#ifndef STK_REC_KSYMS_H
#define STK_REC_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "stk/abi.h"
#include "stk/capture.h"

/* Parse one /proc/kallsyms line: 1 for a text symbol, 0 to skip, -EINVAL. */
int rec_kallsyms_line(const char *line, uint64_t *addr, char *name, size_t nsz, char *mod,
		      size_t msz);

/*
 * The kernel symbols of a capture (kallsyms.c, format.md 4.10): kallsyms held in memory, read
 * when first needed, and which symbols the capture holds.
 */
struct rec_kallsyms;
/*
 * path: /proc/kallsyms (tests: a file like it). signature: rec_kallsyms_signature (tests: their
 * own), read before each read of path: path is read again when it changed. Reads nothing yet.
 * NULL with errno set.
 */
struct rec_kallsyms *rec_kallsyms__new(const char *path, uint64_t (*signature)(void));
void rec_kallsyms__free(struct rec_kallsyms *k);
/*
 * --all-kallsyms, at the start: read path and write a KSYMS record of every text symbol (with
 * HIDDEN and none under kptr_restrict); they then count as written. 0, -errno of the read or a
 * write error.
 */
int rec_kallsyms__put_all(struct rec_kallsyms *k, struct cap_writer *w);
/*
 * Before iv's INTERVAL or EVENTS record: one KSYMS_ADD record with the symbols iv's kernel
 * stacks hit that the capture does not hold yet (new, or their range changed), or, under
 * kptr_restrict, once with HIDDEN. Reads path the first time, and again when a frame lies
 * outside the kernel image and the signature changed. A failed read is a warning (printed
 * once): frames stay unnamed. Returns 0 or a write error (-ENOMEM).
 */
int rec_kallsyms__put(struct rec_kallsyms *k, const struct cap_interval *iv, struct cap_writer *w);
/*
 * A new capture file holds no kernel symbol: from now on every symbol is written again before
 * the first row that needs it (and an address left unnamed may be named), as in a first file.
 */
void rec_kallsyms__new_file(struct rec_kallsyms *k);
/* Kernel symbols change when modules or BPF programs come and go: a hash of both. */
uint64_t rec_kallsyms_signature(void);

/*
 * Kernel addresses named by the kernel (ksymname.c, bpf/ksyms.bpf.c): the default, instead of
 * reading kallsyms. NULL with errno set where the program does not load, or EPERM where
 * kptr_restrict hides kernel addresses (then kallsyms is read).
 */
struct rec_ksymname;
struct rec_ksym_named {
	uint64_t addr, size;	/* the symbol's range; size 0: no symbol holds the address */
	char name[STK_KSYMNAME_TEXT];
	char module[64];	/* "" for none */
};
struct rec_ksymname *rec_ksymname__open(void);
void rec_ksymname__close(struct rec_ksymname *kn);
/* Is addr in the kernel image's text (_stext to _etext)? */
bool rec_ksymname__in_image(const struct rec_ksymname *kn, uint64_t addr);
/* Name addrs[0, n) (n <= STK_KSYMNAME_BATCH) into out[]. 0 or -errno of the run. */
int rec_ksymname__name(struct rec_ksymname *kn, const uint64_t *addrs, uint32_t n,
		       struct rec_ksym_named *out);
/* One "%pS" text of addr ("name+0xOFF/0xSIZE [module]"): 1 named, 0 none ("0x..."), -EINVAL. */
int rec_ksymname_parse(const char *text, uint64_t addr, struct rec_ksym_named *s);
/* From now on rec_kallsyms__put() asks kn instead of reading kallsyms; k owns kn. */
void rec_kallsyms__use_names(struct rec_kallsyms *k, struct rec_ksymname *kn);

#endif /* STK_REC_KSYMS_H */
