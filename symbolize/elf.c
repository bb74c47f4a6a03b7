// SPDX-License-Identifier: MIT
/*
 * elf.c: what both tools read from any ELF image (see include/stk/elfobj.h): build-id,
 * sections, loadable segments.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwelf.h>

#include "stk/elfobj.h"

uint32_t elfobj_build_id(Elf *e, uint8_t id[CAP_BUILD_ID_MAX])
{
	const void *p;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;

	/* a longer note does not fit a capture's field: the object is treated as having none */
	if (n <= 0 || n > (ssize_t)CAP_BUILD_ID_MAX)
		return 0;
	memcpy(id, p, n);
	return n;
}

void elfobj_hex(const uint8_t *id, uint32_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (uint32_t i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 0xf];
	}
	hex[2 * len] = 0;
}

Elf_Scn *elfobj_section(Elf *e, uint32_t type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

Elf_Scn *elfobj_scn_named(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

Elf_Data *elfobj_section_named(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = elfobj_scn_named(e, name, sh);

	return scn ? elf_getdata(scn, NULL) : NULL;
}

bool elfobj_has_dwarf(Elf *e)
{
	GElf_Shdr shdr;

	return elfobj_section_named(e, ".debug_info", &shdr) ||
	       elfobj_section_named(e, ".zdebug_info", &shdr);
}

int elfobj_segments(Elf *e, struct elfobj_segment **segs, uint32_t *n)
{
	size_t nph = 0;
	GElf_Phdr ph;

	*n = 0;
	if (elf_getphdrnum(e, &nph))
		nph = 0;
	*segs = calloc(nph ? nph : 1, sizeof(**segs));
	if (!*segs)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		(*segs)[(*n)++] = (struct elfobj_segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
							   ph.p_memsz, ph.p_flags };
	}
	return 0;
}
