/* SPDX-License-Identifier: MIT */
/*
 * elfmap.h: the capture generators (mkgolden, mkbig) map tests/golden/elf binaries into made-up
 * processes; this is where a mapping's range comes from, as /proc/PID/maps would show it.
 */
#ifndef STK_TESTS_TOOLS_ELFMAP_H
#define STK_TESTS_TOOLS_ELFMAP_H

#include <stk/capture.h>

#include "stk/symbolize.h"

/*
 * Start, end and file offset of the page-aligned loadable segment of e holding addr (a link
 * address), loaded at bias; m is left as it is when no segment holds addr.
 */
static inline void elfmap_segment(const struct sym_elf *e, uint64_t addr, uint64_t bias,
				  struct cap_mapping *m)
{
	uint32_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct elfobj_segment *s = &e->segs[i];

		if (addr < s->vaddr || addr - s->vaddr >= s->filesz)
			continue;
		m->start = bias + (s->vaddr & ~0xfffull);
		m->end = bias + ((s->vaddr + s->filesz + 0xfff) & ~0xfffull);
		m->pgoff = s->offset & ~0xfffull;
	}
}

#endif /* STK_TESTS_TOOLS_ELFMAP_H */
