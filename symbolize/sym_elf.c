// SPDX-License-Identifier: MIT
/*
 * sym_elf.c: one ELF object as the symbolizer reads it (struct sym_elf, stk/symbolize.h): its
 * loadable segments, its symbols sorted by address (with MiniDebugInfo's), build-id and
 * .gnu_debuglink, from a file or an image in memory. symbolize.c names addresses with it and
 * sym_find.c checks the files it finds with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stk/elfobj.h>

#include "sym_internal.h"

int sym_segments_to_vaddr(const struct elfobj_segment *segs, uint32_t nsegs, uint64_t off,
			  uint64_t *vaddr)
{
	uint32_t i;

	for (i = 0; i < nsegs; i++) {
		if (off >= segs[i].offset && off - segs[i].offset < segs[i].filesz) {
			*vaddr = off - segs[i].offset + segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct sym_symbol *sym_symbols_find(const struct sym_symbol *syms, uint32_t nsyms,
					  uint64_t vaddr)
{
	uint32_t lo = 0, hi = nsyms, i, tries;

	if (!nsyms || vaddr < syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	/* sizeless symbols (hand-written assembly) reach up to the next symbol */
	if (!syms[lo].size)
		return &syms[lo];
	/* a sized symbol that ends before vaddr may sit inside a bigger, earlier one (nested
	 * local labels); look back a little, not the whole table */
	for (i = lo, tries = 0; tries < 8; i--, tries++) {
		if (syms[i].size && vaddr - syms[i].addr < syms[i].size)
			return &syms[i];
		if (!i)
			break;
	}
	return NULL;
}

static int read_segments(Elf *elf, struct sym_elf *e)
{
	int err = elfobj_segments(elf, &e->segs, &e->nsegs);

	if (!err)
		e->bytes += (uint64_t)(e->nsegs ? e->nsegs : 1) * sizeof(*e->segs);
	return err;
}

/* A decompressed .gnu_debugdata image and its ELF, which lend their symbols' names. */
struct debugdata {
	Elf *inner;
	uint8_t *image;
};

/*
 * MiniDebugInfo (.gnu_debugdata, as Fedora ships it): an xz-compressed ELF file whose .symtab
 * holds the local functions that .dynsym lacks. Added to l; a damaged section adds nothing. Their
 * names are lent by dd, which the caller frees once they are copied.
 */
static int read_debugdata(Elf *elf, struct elfobj_syms *l, bool *found,
			  struct sym_debug_budget *debug, struct debugdata *dd)
{
	/*
	 * A hostile capture may embed decompression bombs, a few KiB of xz each: stop at the chunk
	 * limit for one object, and at what the run's debug budget has left for all of them.
	 */
	uint64_t left = sym_debug_left(debug);
	const size_t limit = left < CAP_MAX_CHUNK_RAW ? left : CAP_MAX_CHUNK_RAW;
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 0;
	uint8_t *out = NULL;
	Elf *inner = NULL;
	GElf_Shdr shdr;
	Elf_Data *d = elfobj_section_named(elf, ".gnu_debugdata", &shdr);
	lzma_ret ret;
	int err = 0;

	if (!d || !d->d_size)
		return 0;
	if (!limit || lzma_stream_decoder(&strm, CAP_MAX_CHUNK_RAW, 0) != LZMA_OK) {
		if (!limit && debug)
			debug->skipped++;
		return 0;
	}
	strm.next_in = d->d_buf;
	strm.avail_in = d->d_size;
	do {
		if (!strm.avail_out) {
			size_t ncap = cap ? cap * 2 : 64 << 10;
			uint8_t *p;

			if (cap >= limit) {
				/* the stream may end right at the limit: one more byte tells */
				uint8_t extra;

				strm.next_out = &extra;
				strm.avail_out = 1;
				ret = lzma_code(&strm, LZMA_FINISH);
				if (ret == LZMA_STREAM_END && strm.avail_out == 1)
					break;
				/* not the whole of it within the budget: the run says so */
				if (limit < CAP_MAX_CHUNK_RAW && debug)
					debug->skipped++;
				goto out;
			}
			ncap = ncap < limit ? ncap : limit;
			p = realloc(out, ncap);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			out = p;
			strm.next_out = out + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (ret != LZMA_STREAM_END)
		goto out;
	inner = elf_memory((char *)out, strm.total_out);
	if (inner && elf_kind(inner) == ELF_K_ELF)
		err = elfobj_syms_add(l, inner, SHT_SYMTAB, 0);
	*found = err > 0;
	err = err < 0 ? err : 0;
out:
	/* what was inflated was work done, whether it was of use or not (at most limit bytes:
	 * a byte past it only told that the stream went on); limit is within what debug had
	 * left, so it always fits */
	sym_debug_inflate(debug, strm.total_out < limit ? strm.total_out : limit);
	lzma_end(&strm);
	dd->inner = inner;
	dd->image = out;
	return err;
}

/* e->syms and e->names: l's symbols, their names copied without their version (format.md 4.8),
 * as from an embedded table. */
static int copy_symbols(const struct elfobj_syms *l, struct sym_elf *e)
{
	size_t len = 0;
	char *p;

	for (uint32_t i = 0; i < l->n; i++)
		len += cap_symbol_base_len(l->v[i].c.name) + 1;
	e->syms = calloc(l->n ? l->n : 1, sizeof(*e->syms));
	e->names = p = malloc(len ? len : 1);
	if (!e->syms || !e->names)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->n; i++) {
		size_t base = cap_symbol_base_len(l->v[i].c.name);

		memcpy(p, l->v[i].c.name, base);
		p[base] = 0;
		e->syms[i] = (struct sym_symbol){ l->v[i].addr, l->v[i].c.size, p };
		p += base + 1;
	}
	e->nsyms = l->n;
	e->bytes += (uint64_t)(l->n ? l->n : 1) * sizeof(*e->syms) + (len ? len : 1);
	return 0;
}

static int collect_symbols(Elf *elf, struct sym_elf *e, struct sym_debug_budget *debug)
{
	struct elfobj_syms l = { 0 };
	struct debugdata dd = { 0 };
	int n, err;

	n = elfobj_syms_add(&l, elf, SHT_SYMTAB, 0);
	e->full_symtab = n > 0;
	/* a stripped binary keeps only .dynsym, perhaps with MiniDebugInfo beside it */
	if (!n) {
		n = elfobj_syms_add(&l, elf, SHT_DYNSYM, 0);
		if (n >= 0)
			n = read_debugdata(elf, &l, &e->from_debugdata, debug, &dd);
		e->full_symtab = e->from_debugdata;
	}
	/* its PLT stubs, from its relocations: stripped or not, as stkrec embeds them */
	if (n >= 0 && elfobj_syms_add_plt(&l, elf) < 0)
		n = -ENOMEM;
	err = n < 0 ? n : 0;
	if (!err) {
		elfobj_syms_unique(&l);
		err = copy_symbols(&l, e);
	}
	elfobj_syms_clear(&l);
	if (dd.inner)
		elf_end(dd.inner);
	free(dd.image);
	return err;
}

/* .gnu_debuglink: the debug file's name, NUL-padded to 4 bytes, then its CRC32. */
static int read_debuglink(Elf *elf, struct sym_elf *e)
{
	GElf_Shdr shdr;
	Elf_Data *d = elfobj_section_named(elf, ".gnu_debuglink", &shdr);
	const char *name;
	size_t len, crc_off;
	uint32_t crc;

	if (!d || !d->d_buf || d->d_size < 8)
		return 0;
	name = d->d_buf;
	len = strnlen(name, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || len == d->d_size || crc_off + 4 > d->d_size)
		return 0;
	memcpy(&crc, (const char *)d->d_buf + crc_off, 4);
	/* the CRC is stored in the object's byte order */
	if ((gelf_getclass(elf) == ELFCLASS32 || gelf_getclass(elf) == ELFCLASS64) &&
	    elf_getident(elf, NULL)[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
						ELFDATA2LSB : ELFDATA2MSB))
		crc = __builtin_bswap32(crc);
	e->debuglink = strndup(name, len);
	if (!e->debuglink)
		return -ENOMEM;
	e->debuglink_crc = crc;
	return 0;
}

/* Everything sym_elf holds, from an open Elf. NULL + errno. */
static struct sym_elf *elf_read(Elf *elf, struct sym_debug_budget *debug)
{
	struct sym_elf *e = NULL;
	int err = 0;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		errno = ENOEXEC;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	e->build_id_len = elfobj_build_id(elf, e->build_id);
	err = read_segments(elf, e);
	if (!err)
		err = collect_symbols(elf, e, debug);
	if (!err)
		err = read_debuglink(elf, e);
	e->has_dwarf = elfobj_has_dwarf(elf);
	if (err) {
		sym_elf__close(e);
		errno = -err;
		return NULL;
	}
	return e;
}

struct sym_elf *sym_elf__open(const char *path)
{
	return sym_elf__open_debug(path, NULL);
}

struct sym_elf *sym_elf__open_debug(const char *path, struct sym_debug_budget *debug)
{
	struct sym_elf *e = NULL;
	struct stat st;
	Elf *elf = NULL;
	int fd, err = 0;

	/* a capture names the files: never block on a FIFO or read a device */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = ENOEXEC;
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	e = elf_read(elf, debug);
	if (!e)
		err = errno;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	errno = err;
	return e;
}

struct sym_elf *sym_elf__open_mem(const void *buf, size_t len, struct sym_debug_budget *debug)
{
	struct sym_elf *e;
	Elf *elf;
	void *copy;
	int err;

	/* libelf wants a writable image; the capture's bytes are not ours to touch */
	copy = malloc(len ? len : 1);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, buf, len);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, len);
	e = elf_read(elf, debug);
	err = e ? 0 : errno;
	if (elf)
		elf_end(elf);
	free(copy);
	errno = err;
	return e;
}

int sym_elf__take_symbols(struct sym_elf *e, struct sym_elf *from)
{
	uint32_t nplt = 0, n = 0, i = 0, j = 0;
	struct sym_symbol *syms;
	size_t len = 1;
	char *names, *p;

	for (uint32_t k = 0; k < e->nsyms; k++)
		nplt += cap_symbol_is_plt(e->syms[k].name);
	syms = calloc(from->nsyms + nplt + 1, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	/* both sorted: merged, one per address, from's first */
	while (i < from->nsyms || j < e->nsyms) {
		const struct sym_symbol *s;

		if (j < e->nsyms && !cap_symbol_is_plt(e->syms[j].name)) {
			j++;
			continue;
		}
		s = j == e->nsyms || (i < from->nsyms && from->syms[i].addr <= e->syms[j].addr) ?
			    &from->syms[i++] : &e->syms[j++];
		if (!n || syms[n - 1].addr != s->addr) {
			syms[n++] = *s;
			len += strlen(s->name) + 1;
		}
	}
	names = p = malloc(len);
	if (!names) {
		free(syms);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < n; k++) {
		size_t l = strlen(syms[k].name) + 1;

		memcpy(p, syms[k].name, l);
		syms[k].name = p;
		p += l;
	}
	free(e->syms);
	free(e->names);
	free(from->syms);
	free(from->names);
	from->syms = NULL;
	from->names = NULL;
	from->nsyms = 0;
	e->syms = syms;
	e->names = names;
	e->nsyms = n;
	e->bytes += (uint64_t)(n + 1) * sizeof(*syms) + len;	/* an upper bound: the old went */
	e->full_symtab = true;
	return 0;
}

bool sym_elf__build_id_is(const struct sym_elf *e, const uint8_t *id, uint32_t len)
{
	return e->build_id_len == len && !memcmp(e->build_id, id, len);
}

void sym_elf__close(struct sym_elf *e)
{
	if (!e)
		return;
	free(e->segs);
	free(e->syms);
	free(e->names);
	free(e->debuglink);
	free(e);
}
