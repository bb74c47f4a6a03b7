/* SPDX-License-Identifier: MIT */
/*
 * mkelf.h: a small ELF64 shared object made in memory, for hostile captures (mkhostile,
 * tests/unit/rep_budget): MKELF_NFUNCS functions "hostile_fn_N" of 16 bytes in .text, a GNU
 * build-id, and a zlib-compressed (SHF_COMPRESSED) .debug_info of debug_bytes zero bytes, whose
 * compressed stream is a few KiB while libdw must inflate all of it to open the DWARF, and then
 * finds a unit of length 0 every 4 bytes when it looks for the unit of an address. With
 * MKELF_DEBUGDATA the symbols are in .dynsym instead of .symtab, and a .gnu_debugdata section
 * (MiniDebugInfo) holds an xz stream of debug_bytes zero bytes: what stkreport decompresses to
 * look for local functions. Nothing is read from the host.
 */
#ifndef STK_TESTS_TOOLS_MKELF_H
#define STK_TESTS_TOOLS_MKELF_H

#include <elf.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MKELF_NFUNCS 4u
#define MKELF_TEXT 0x100u		/* file offset = virtual address of .text */
#define MKELF_FUNC_SIZE 16u
#define MKELF_LOAD_END 0x164u		/* end of .text and the build-id note: the PT_LOAD */
#define MKELF_DEBUGDATA 0x1u

struct mkelf_buf {
	uint8_t *p;
	size_t len, cap;
};

static inline void mkelf_put(struct mkelf_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		while (b->len + n > b->cap)
			b->cap = b->cap ? b->cap * 2 : 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			fprintf(stderr, "mkelf: out of memory\n");
			exit(1);
		}
	}
	if (p)
		memcpy(b->p + b->len, p, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

static inline void mkelf_align(struct mkelf_buf *b, size_t a)
{
	while (b->len % a)
		mkelf_put(b, NULL, 1);
}

/* zlib stream of n zero bytes, appended to b, without holding n bytes anywhere. */
static inline void mkelf_zlib_zeros_raw(struct mkelf_buf *b, uint64_t n)
{
	static const uint8_t zeros[1 << 16];
	uint8_t out[1 << 16];
	z_stream z = { 0 };
	int ret;

	if (deflateInit(&z, Z_BEST_COMPRESSION) != Z_OK)
		exit(1);
	do {
		uint64_t chunk = n > sizeof(zeros) ? sizeof(zeros) : n;

		z.next_in = (uint8_t *)zeros;
		z.avail_in = (uInt)chunk;
		n -= chunk;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			ret = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
			mkelf_put(b, out, sizeof(out) - z.avail_out);
		} while (z.avail_out == 0);
	} while (n);
	if (ret != Z_STREAM_END)
		exit(1);
	deflateEnd(&z);
}

/* xz stream of n zero bytes (what `xz` makes of them), appended to b. */
static inline void mkelf_xz_zeros_raw(struct mkelf_buf *b, uint64_t n)
{
	static const uint8_t zeros[1 << 16];
	uint8_t out[1 << 16];
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret ret;

	if (lzma_easy_encoder(&s, 6, LZMA_CHECK_CRC64) != LZMA_OK)
		exit(1);
	do {
		uint64_t chunk = n > sizeof(zeros) ? sizeof(zeros) : n;

		s.next_in = zeros;
		s.avail_in = chunk;
		n -= chunk;
		do {
			s.next_out = out;
			s.avail_out = sizeof(out);
			ret = lzma_code(&s, n ? LZMA_RUN : LZMA_FINISH);
			mkelf_put(b, out, sizeof(out) - s.avail_out);
		} while (s.avail_out == 0 || (!n && ret == LZMA_OK));
	} while (n);
	lzma_end(&s);
}

/*
 * make's stream of n zero bytes (mkelf_zlib_zeros_raw or mkelf_xz_zeros_raw), appended to b,
 * made once per maker and size: a capture of hundreds of objects holds the same compressed
 * zeros in each (compressing them anew would take seconds per object). One slot per maker, so
 * that objects with both streams do not make them anew each time.
 */
static inline void mkelf_zeros(struct mkelf_buf *b, uint64_t n,
			       void (*make)(struct mkelf_buf *, uint64_t))
{
	static struct {
		void (*make)(struct mkelf_buf *, uint64_t);
		uint64_t n;
		struct mkelf_buf buf;
	} cache[2];
	size_t i = 0;

	/* the maker's slot, else a free one (the last slot is reused if a third maker comes) */
	while (i + 1 < sizeof(cache) / sizeof(cache[0]) && cache[i].make && cache[i].make != make)
		i++;
	if (cache[i].make != make || cache[i].n != n) {
		cache[i].buf.len = 0;
		make(&cache[i].buf, n);
		cache[i].make = make;
		cache[i].n = n;
	}
	mkelf_put(b, cache[i].buf.p, cache[i].buf.len);
}

struct mkelf_section {
	const char *name;
	uint32_t type, link, info;
	uint64_t flags, addr, off, size, align, entsize;
};

/*
 * The object into *b (malloc'ed, the caller frees b->p): build-id 20 bytes of id, flags
 * MKELF_DEBUGDATA or 0. Function i is at virtual address MKELF_TEXT + 16 * i.
 */
static inline void mkelf_make(struct mkelf_buf *b, const uint8_t id[20], uint64_t debug_bytes,
			      unsigned int flags)
{
	bool dd = flags & MKELF_DEBUGDATA;
	struct mkelf_section sec[10] = { { "" } };
	struct mkelf_buf names = { 0 }, shstr = { 0 };
	uint32_t nsec = 1, i, text, strtab;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Nhdr nh = { 4, 20, NT_GNU_BUILD_ID };
	Elf64_Chdr ch = { ELFCOMPRESS_ZLIB, 0, debug_bytes, 1 };
	uint8_t code[MKELF_NFUNCS * MKELF_FUNC_SIZE];

	*b = (struct mkelf_buf){ 0 };
	mkelf_put(b, NULL, MKELF_TEXT);	/* headers, filled at the end */
	memset(code, 0xc3, sizeof(code));	/* ret */
	text = nsec;
	sec[nsec++] = (struct mkelf_section){ ".text", SHT_PROGBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR,
					      MKELF_TEXT, b->len, sizeof(code), 16, 0 };
	mkelf_put(b, code, sizeof(code));
	sec[nsec++] = (struct mkelf_section){ ".note.gnu.build-id", SHT_NOTE, 0, 0, SHF_ALLOC,
					      b->len, b->len, sizeof(nh) + 4 + 20, 4, 0 };
	mkelf_put(b, &nh, sizeof(nh));
	mkelf_put(b, "GNU", 4);
	mkelf_put(b, id, 20);
	/* symbols: null symbol, then the functions */
	mkelf_align(b, 8);
	mkelf_put(&names, "", 1);
	strtab = nsec + 1;
	sec[nsec++] = (struct mkelf_section){ dd ? ".dynsym" : ".symtab", dd ? SHT_DYNSYM : SHT_SYMTAB,
					      strtab, 1, dd ? SHF_ALLOC : 0, 0, b->len,
					      (1 + MKELF_NFUNCS) * sizeof(Elf64_Sym), 8,
					      sizeof(Elf64_Sym) };
	mkelf_put(b, NULL, sizeof(Elf64_Sym));
	for (i = 0; i < MKELF_NFUNCS; i++) {
		char name[32];
		Elf64_Sym s = { 0 };

		snprintf(name, sizeof(name), "hostile_fn_%u", i);
		s.st_name = names.len;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_shndx = text;
		s.st_value = MKELF_TEXT + i * MKELF_FUNC_SIZE;
		s.st_size = MKELF_FUNC_SIZE;
		mkelf_put(&names, name, strlen(name) + 1);
		mkelf_put(b, &s, sizeof(s));
	}
	sec[nsec++] = (struct mkelf_section){ dd ? ".dynstr" : ".strtab", SHT_STRTAB, 0, 0,
					      dd ? SHF_ALLOC : 0, 0, b->len, names.len, 1, 0 };
	mkelf_put(b, names.p, names.len);
	/* .debug_info: an ELF compression header, then the zlib stream */
	if (debug_bytes) {
		size_t start;

		mkelf_align(b, 8);
		start = b->len;
		mkelf_put(b, &ch, sizeof(ch));
		mkelf_zeros(b, debug_bytes, mkelf_zlib_zeros_raw);
		sec[nsec++] = (struct mkelf_section){ ".debug_info", SHT_PROGBITS, 0, 0,
						      SHF_COMPRESSED, 0, start, b->len - start, 8,
						      0 };
	}
	if (dd && debug_bytes) {
		size_t start = b->len;

		mkelf_zeros(b, debug_bytes, mkelf_xz_zeros_raw);
		sec[nsec++] = (struct mkelf_section){ ".gnu_debugdata", SHT_PROGBITS, 0, 0, 0, 0,
						      start, b->len - start, 1, 0 };
	}
	sec[nsec] = (struct mkelf_section){ ".shstrtab", SHT_STRTAB, 0, 0, 0, 0, 0, 0, 1, 0 };
	nsec++;
	for (i = 0; i < nsec; i++)
		mkelf_put(&shstr, sec[i].name, strlen(sec[i].name) + 1);
	sec[nsec - 1].off = b->len;
	sec[nsec - 1].size = shstr.len;
	mkelf_put(b, shstr.p, shstr.len);
	mkelf_align(b, 8);
	eh.e_shoff = b->len;
	for (i = 0, shstr.len = 0; i < nsec; i++) {
		Elf64_Shdr sh = { 0 };

		sh.sh_name = shstr.len;	/* the names follow each other as put above */
		shstr.len += strlen(sec[i].name) + 1;
		sh.sh_type = sec[i].type;
		sh.sh_flags = sec[i].flags;
		sh.sh_addr = sec[i].addr;
		sh.sh_offset = sec[i].off;
		sh.sh_size = sec[i].size;
		sh.sh_link = sec[i].link;
		sh.sh_info = sec[i].info;
		sh.sh_addralign = sec[i].align;
		sh.sh_entsize = sec[i].entsize;
		mkelf_put(b, &sh, sizeof(sh));
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = nsec;
	eh.e_shstrndx = nsec - 1;
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_filesz = ph.p_memsz = MKELF_LOAD_END;
	ph.p_align = 0x1000;
	memcpy(b->p, &eh, sizeof(eh));
	memcpy(b->p + sizeof(eh), &ph, sizeof(ph));
	free(names.p);
	free(shstr.p);
}

#endif /* STK_TESTS_TOOLS_MKELF_H */
