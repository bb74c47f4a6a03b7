/* SPDX-License-Identifier: MIT */
/*
 * test_budget: the memory budget of a reader of hostile input (format.md 2, "Limits";
 * capture.h, struct cap_budget). Taking and giving back; a decoded record charges what it
 * holds, small records little, and gives it all back when freed; a record, or the reader's
 * buffer, that would exceed the budget is -EFBIG (the reader's sticky, naming the chunk) with
 * nothing kept; lying counts and lz4 ratios are refused before anything is taken.
 */
#include "craft.h"
#include "helpers.h"

#define MiB (1u << 20)

static void test_take_give(void)
{
	struct cap_budget b = { .limit = 100 };

	T_EQ_INT("budget take 60 of 100", 0, cap_budget__take(&b, 60));
	T_EQ_INT("budget take 50 more: EFBIG", -EFBIG, cap_budget__take(&b, 50));
	T_CHECK("budget refused: nothing taken, counted", b.used == 60 && b.refused == 1,
		"used %llu refused %llu", (unsigned long long)b.used,
		(unsigned long long)b.refused);
	T_EQ_INT("budget take the last 40", 0, cap_budget__take(&b, 40));
	cap_budget__give(&b, 30);
	T_CHECK("budget give back 30", b.used == 70 && b.peak == 100, "used %llu peak %llu",
		(unsigned long long)b.used, (unsigned long long)b.peak);
	/* used + n must not wrap into "fits" */
	T_EQ_INT("budget take UINT64_MAX: EFBIG", -EFBIG, cap_budget__take(&b, UINT64_MAX));
	T_EQ_INT("budget NULL takes anything", 0, cap_budget__take(NULL, UINT64_MAX));
	b = (struct cap_budget){ 0 };
	T_EQ_INT("budget limit 0: no limit", 0, cap_budget__take(&b, UINT64_MAX / 2));
}

/* The chunk of a one-record capture written to dir/name, read into *ch; the reader returned. */
static struct cap_reader *one_chunk(const char *dir, const char *name,
				    const struct cap_record *rec, struct cap_chunk *ch)
{
	char path[512];
	struct cap_writer *w;
	struct cap_reader *r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	w = cap_writer__open(path);
	if (!w || cap_writer__put(w, rec)) {
		cap_writer__close(w);
		return NULL;
	}
	cap_writer__close(w);
	r = cap_reader__open(path);
	if (r && cap_reader__next(r, ch) != 1) {
		cap_reader__close(r);
		return NULL;
	}
	return r;
}

static void test_records(const char *dir)
{
	static struct cap_ksym syms[1000];
	struct cap_record ks = { .type = CAP_CHUNK_KSYMS }, end = { .type = CAP_CHUNK_END };
	struct cap_budget b = { 0 };
	struct cap_record *rec = NULL;
	struct cap_reader *r;
	struct cap_chunk ch;
	uint64_t whole;
	int ret;

	for (uint32_t i = 0; i < 1000; i++)
		syms[i] = (struct cap_ksym){ 0xffffffff81000000ull + 16 * i, "some_kernel_function",
					     NULL };
	ks.ksyms = (struct cap_ksyms){ 0, 1000, syms };
	r = one_chunk(dir, "ksyms.stk", &ks, &ch);
	if (!T_CHECK("budget record setup", r, "cannot write and read back a KSYMS record"))
		return;
	ret = cap_record__decode_budget(&ch, &b, &rec);
	whole = b.used;
	/* 1000 symbols of 32 bytes and two strings of 8 and 24 bytes each */
	T_CHECK("budget record charges what it holds", !ret && whole >= 1000 * 56 &&
		whole <= 4 * (uint64_t)ch.len + 65536, "ret %d, %llu bytes for a %u-byte payload",
		ret, (unsigned long long)whole, ch.len);
	cap_record__free(rec);
	T_EQ_U64("budget record free gives it all back", 0, b.used);

	/* over the budget: -EFBIG, no record, nothing kept */
	b = (struct cap_budget){ .limit = whole / 2 };
	rec = NULL;
	ret = cap_record__decode_budget(&ch, &b, &rec);
	T_CHECK("budget record over the limit: EFBIG, nothing kept",
		ret == -EFBIG && !rec && b.used == 0 && b.refused == 1 && b.peak <= whole / 2,
		"ret %d rec %p used %llu refused %llu", ret, (void *)rec,
		(unsigned long long)b.used, (unsigned long long)b.refused);
	cap_reader__close(r);

	/*
	 * A small record charges a small arena: a file of many tiny chunks must not hold (nor
	 * charge) 64 KiB per record.
	 */
	end.end = (struct cap_end){ 1, 2, 3 };
	r = one_chunk(dir, "end.stk", &end, &ch);
	b = (struct cap_budget){ 0 };
	rec = NULL;
	ret = r ? cap_record__decode_budget(&ch, &b, &rec) : -1;
	T_CHECK("budget small record: under 1 KiB", !ret && b.used > 0 && b.used < 1024,
		"ret %d, %llu bytes", ret, (unsigned long long)b.used);
	cap_record__free(rec);
	cap_reader__close(r);
}

/* An lz4 bomb: KSYMS chunks of zeros (empty symbols at address 0), 4 MiB each. */
static void test_reader_bomb(const char *dir)
{
	size_t len = 4 * MiB - 8, n = 0;
	uint8_t *payload = calloc(1, len);
	struct cap_budget b = { .limit = 3 * MiB };
	struct cap_reader *r = NULL;
	struct cap_writer *w;
	struct cap_chunk ch;
	uint64_t off = 0;
	char path[512];
	uint8_t *file;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/bomb.stk", dir);
	craft_le(payload + 4, (len - 8) / 16, 4);	/* flags, count, count * 16 zero bytes */
	w = cap_writer__open(path);
	for (int i = 0; w && i < 4; i++)
		ret |= cap_writer__put_raw(w, CAP_CHUNK_KSYMS, CAP_CHUNK_F_MANDATORY, payload, len);
	cap_writer__close(w);
	free(payload);
	file = slurp(path, &n);
	if (!T_CHECK("budget bomb setup", w && !ret && file && n < 100000,
		     "cannot write it (%d), or it is %zu bytes", ret, n))
		goto out;
	/* the 4 MiB buffer of the first chunk does not fit in 3 MiB */
	r = cap_reader__open_mem(file, n);
	cap_reader__set_budget(r, &b);
	ret = cap_reader__next(r, &ch);
	T_EQ_INT("budget bomb reader: EFBIG", -EFBIG, ret);
	T_CHECK("budget bomb reader names chunk 0 at 0x10",
		cap_reader__chunk_index(r) == 0 && cap_reader__offset(r) == 16,
		"chunk %u at 0x%llx", cap_reader__chunk_index(r),
		(unsigned long long)cap_reader__offset(r));
	T_EQ_INT("budget bomb reader: sticky", -EFBIG, cap_reader__next(r, &ch));
	T_EQ_U64("budget bomb reader: nothing taken", 0, b.used);
	cap_reader__close(r);

	/* records kept as a loader keeps them: the budget ends the walk, never malloc */
	{
		struct cap_record *kept[4] = { 0 };
		uint32_t nkept = 0;

		b = (struct cap_budget){ .limit = 24 * MiB };
		r = cap_reader__open_mem(file, n);
		cap_reader__set_budget(r, &b);
		while ((ret = cap_reader__next(r, &ch)) == 1) {
			off = ch.offset;
			ret = cap_record__decode_budget(&ch, &b, &kept[nkept]);
			if (ret)
				break;
			nkept++;
		}
		T_CHECK("budget bomb records: EFBIG after some were kept",
			ret == -EFBIG && nkept >= 1 && nkept < 4 && b.peak <= b.limit,
			"ret %d, %u kept, peak %llu", ret, nkept, (unsigned long long)b.peak);
		T_CHECK("budget bomb records: at a later chunk", off > 16, "offset 0x%llx",
			(unsigned long long)off);
		while (nkept)
			cap_record__free(kept[--nkept]);
		cap_reader__close(r);
		T_EQ_U64("budget bomb records: all given back", 0, b.used);
	}
out:
	free(file);
}

/* Counts and ratios that lie are refused before a byte is taken. */
static void test_lies(void)
{
	static struct craft c;
	static struct craft_payload p;
	struct cap_budget b = { 0 };
	struct cap_record *rec = NULL;
	struct cap_chunk ch;
	struct cap_reader *r;
	uint8_t junk[200];
	int ret;

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 0xffffffff);	/* KSYMS: flags, 4 billion symbols, 8 bytes */
	pl_u64(&p, 0);
	ch = (struct cap_chunk){ .type = CAP_CHUNK_KSYMS, .len = (uint32_t)p.len, .data = p.buf };
	ret = cap_record__decode_budget(&ch, &b, &rec);
	T_CHECK("budget count of 4G symbols: EBADMSG, nothing sized by it",
		ret == -EBADMSG && !rec && b.peak < 1024 && b.used == 0,
		"ret %d peak %llu used %llu", ret, (unsigned long long)b.peak,
		(unsigned long long)b.used);

	/* format.md 3.3 step 9: 64 MiB declared by a 200-byte frame is past lz4's 255:1 */
	memset(junk, 0x5a, sizeof(junk));
	craft_header(&c, CAP_MAJOR, CAP_MINOR);
	craft_chunk_stored(&c, CAP_CHUNK_KSYMS, CAP_CHUNK_F_MANDATORY, 0, 64 * MiB, junk,
			   sizeof(junk));
	b = (struct cap_budget){ 0 };
	r = cap_reader__open_mem(c.buf, c.len);
	cap_reader__set_budget(r, &b);
	ret = cap_reader__next(r, &ch);
	T_CHECK("budget raw_len over 255x stored: EBADMSG, no buffer",
		ret == -EBADMSG && b.peak == 0, "ret %d peak %llu", ret,
		(unsigned long long)b.peak);
	cap_reader__close(r);
}

int main(void)
{
	char *dir = tmp_dir();

	if (!T_CHECK("budget tmp dir", dir, "mkdtemp failed"))
		T_EXIT();
	test_take_give();
	test_records(dir);
	test_reader_bomb(dir);
	test_lies();
	rm_tree(dir);
	T_EXIT();
}
