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
/*
 * .debug_info holds one unit instead of zeros: a function covering .text whose one lexical
 * block (without an address range) holds debug_bytes childless entries, one byte each. A walk
 * down to an address passes that block: libdw skips its children to find its sibling.
 */
#define MKELF_DIES 0x2u
/*
 * .debug_info holds one unit whose function covering .text holds debug_bytes inlined
 * subroutines, each inside the one before and covering .text too: every address is in that
 * many inlined functions ("i").
 */
#define MKELF_INLINES 0x4u
/* with functions of func_size bytes (mkelf_make_sized()): end of .text and the note */
#define MKELF_LOAD_END_SIZED(func_size) (MKELF_TEXT + MKELF_NFUNCS * (func_size) + 36u)

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

/* DWARF 4 (MKELF_DIES): compile unit (1), subprogram "f" (2), lexical block (3), variable (4) */
static const uint8_t mkelf_abbrev[] = {
	1, 0x11, 1, 0x11, 0x01, 0x12, 0x07, 0, 0,	/* low_pc addr, high_pc data8 */
	2, 0x2e, 1, 0x03, 0x08, 0x11, 0x01, 0x12, 0x07, 0, 0,	/* name string, low, high */
	3, 0x0b, 1, 0, 0,
	4, 0x34, 0, 0, 0,
	5, 0x1d, 1, 0x03, 0x08, 0x11, 0x01, 0x12, 0x07, 0, 0,	/* inlined: name, low, high */
	0,
};

#define MKELF_DIES_HEAD 48u	/* unit header and the first three entries */
#define MKELF_DIES_TAIL 3u	/* the ends of three lists of children */

static inline void mkelf_dies_head(uint8_t *h, uint64_t n)
{
	uint64_t unit = MKELF_DIES_HEAD + n + MKELF_DIES_TAIL - 4, lo = MKELF_TEXT,
		 len = 0x10000000;
	size_t i = 0;

	memcpy(h, &unit, 4);	/* little-endian hosts only, as the rest of this file */
	h[4] = 4, h[5] = 0;	/* version */
	memset(h + 6, 0, 4);	/* .debug_abbrev offset */
	h[10] = 8;		/* address size */
	i = 11;
	h[i++] = 1;
	memcpy(h + i, &lo, 8), i += 8;
	memcpy(h + i, &len, 8), i += 8;
	h[i++] = 2;
	h[i++] = 'f', h[i++] = 0;
	memcpy(h + i, &lo, 8), i += 8;
	memcpy(h + i, &len, 8), i += 8;
	h[i++] = 3;
}

/* zlib stream of the MKELF_DIES unit with n childless entries, appended to b. */
static inline void mkelf_zlib_dies_raw(struct mkelf_buf *b, uint64_t n)
{
	static uint8_t fill[1 << 16];
	uint8_t out[1 << 16], head[MKELF_DIES_HEAD], tail[MKELF_DIES_TAIL] = { 0 };
	z_stream z = { 0 };
	int step, ret = Z_OK;

	memset(fill, 4, sizeof(fill));
	mkelf_dies_head(head, n);
	if (deflateInit(&z, Z_BEST_COMPRESSION) != Z_OK)
		exit(1);
	for (step = 0; step < 3; step++) {
		uint64_t left = step == 1 ? n : 0;
		const uint8_t *in = step == 0 ? head : step == 1 ? fill : tail;
		uInt len = step == 0 ? sizeof(head) : step == 2 ? sizeof(tail) : 0;

		do {
			if (step == 1) {
				len = left > sizeof(fill) ? sizeof(fill) : (uInt)left;
				left -= len;
			}
			z.next_in = (uint8_t *)in;
			z.avail_in = len;
			do {
				z.next_out = out;
				z.avail_out = sizeof(out);
				ret = deflate(&z, step == 2 ? Z_FINISH : Z_NO_FLUSH);
				mkelf_put(b, out, sizeof(out) - z.avail_out);
			} while (z.avail_out == 0);
		} while (left);
	}
	if (ret != Z_STREAM_END)
		exit(1);
	deflateEnd(&z);
}

/* The MKELF_INLINES unit with n nested inlined subroutines, plain (*len bytes, malloc'ed). */
static inline uint8_t *mkelf_inlines_unit(uint64_t n, size_t *len)
{
	uint8_t head[MKELF_DIES_HEAD];
	uint64_t lo = MKELF_TEXT, span = 0x10000000;
	size_t each = 1 + 2 + 8 + 8, i, k = MKELF_DIES_HEAD - 1;
	uint8_t *u;
	uint32_t unit;

	*len = MKELF_DIES_HEAD - 1 + n * each + n + 2;
	u = malloc(*len);
	if (!u)
		exit(1);
	mkelf_dies_head(head, 0);
	memcpy(u, head, k);	/* unit header, unit, function: not the block */
	unit = (uint32_t)(*len - 4);
	memcpy(u, &unit, 4);
	for (i = 0; i < n; i++) {
		u[k++] = 5;
		u[k++] = 'i', u[k++] = 0;
		memcpy(u + k, &lo, 8), k += 8;
		memcpy(u + k, &span, 8), k += 8;
	}
	memset(u + k, 0, n + 2);	/* the ends of the inlined, the function's and the unit's */
	return u;
}

/* zlib stream of the MKELF_INLINES unit with n nested inlined subroutines, appended to b. */
static inline void mkelf_zlib_inlines_raw(struct mkelf_buf *b, uint64_t n)
{
	size_t len;
	uint8_t *u = mkelf_inlines_unit(n, &len);
	uLongf out = compressBound(len);

	mkelf_put(b, NULL, out);
	b->len -= out;
	if (compress2(b->p + b->len, &out, u, len, Z_BEST_COMPRESSION) != Z_OK)
		exit(1);
	b->len += out;
	free(u);
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
 * MKELF_DEBUGDATA or 0. Function i is at virtual address MKELF_TEXT + func_size * i (a
 * multiple of 16), func_size bytes long; the PT_LOAD ends at MKELF_LOAD_END_SIZED(func_size).
 */
static inline void mkelf_make_sized(struct mkelf_buf *b, const uint8_t id[20],
				    uint64_t debug_bytes, unsigned int flags, uint32_t func_size)
{
	bool dd = flags & MKELF_DEBUGDATA;
	struct mkelf_section sec[10] = { { "" } };
	struct mkelf_buf names = { 0 }, shstr = { 0 };
	uint32_t nsec = 1, i, text, strtab;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Nhdr nh = { 4, 20, NT_GNU_BUILD_ID };
	bool dies = flags & MKELF_DIES, inl = flags & MKELF_INLINES;
	size_t inl_len = 0;
	Elf64_Chdr ch = { ELFCOMPRESS_ZLIB, 0, dies ? MKELF_DIES_HEAD + debug_bytes +
			  MKELF_DIES_TAIL : debug_bytes, 1 };

	if (inl) {
		free(mkelf_inlines_unit(debug_bytes, &inl_len));
		ch.ch_size = inl_len;
	}
	size_t code_len = (size_t)MKELF_NFUNCS * func_size;
	uint8_t *code = malloc(code_len);

	if (!code) {
		fprintf(stderr, "mkelf: out of memory\n");
		exit(1);
	}
	*b = (struct mkelf_buf){ 0 };
	mkelf_put(b, NULL, MKELF_TEXT);	/* headers, filled at the end */
	memset(code, 0xc3, code_len);	/* ret */
	text = nsec;
	sec[nsec++] = (struct mkelf_section){ ".text", SHT_PROGBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR,
					      MKELF_TEXT, b->len, code_len, 16, 0 };
	mkelf_put(b, code, code_len);
	free(code);
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
		s.st_value = MKELF_TEXT + i * func_size;
		s.st_size = func_size;
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
		mkelf_zeros(b, debug_bytes, inl ? mkelf_zlib_inlines_raw : dies ? mkelf_zlib_dies_raw
									    : mkelf_zlib_zeros_raw);
		sec[nsec++] = (struct mkelf_section){ ".debug_info", SHT_PROGBITS, 0, 0,
						      SHF_COMPRESSED, 0, start, b->len - start, 8,
						      0 };
	}
	if (dies || inl) {
		sec[nsec++] = (struct mkelf_section){ ".debug_abbrev", SHT_PROGBITS, 0, 0, 0, 0,
						      b->len, sizeof(mkelf_abbrev), 1, 0 };
		mkelf_put(b, mkelf_abbrev, sizeof(mkelf_abbrev));
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
	ph.p_filesz = ph.p_memsz = MKELF_LOAD_END_SIZED(func_size);
	ph.p_align = 0x1000;
	memcpy(b->p, &eh, sizeof(eh));
	memcpy(b->p + sizeof(eh), &ph, sizeof(ph));
	free(names.p);
	free(shstr.p);
}

/* mkelf_make_sized() with functions of MKELF_FUNC_SIZE bytes */
static inline void mkelf_make(struct mkelf_buf *b, const uint8_t id[20], uint64_t debug_bytes,
			      unsigned int flags)
{
	mkelf_make_sized(b, id, debug_bytes, flags, MKELF_FUNC_SIZE);
}

#endif /* STK_TESTS_TOOLS_MKELF_H */
