/* SPDX-License-Identifier: MIT */
/*
 * test_malformed: record payloads that lie (format.md 4 decoder rules). Counts larger than the
 * bytes left, stack indexes past the tables, depths and lengths over the limits, strings with a
 * NUL, unsorted tables, trailing bytes: each must give the documented error, never a crash, and
 * never an allocation sized from the lying count (run under ASan, or by libFuzzer with
 * -malloc_limit_mb, a count of 4 billion elements would show).
 */
#include "craft.h"
#include "helpers.h"

static struct craft_payload p;

/* An interval header with one kernel stack of the given depth, no user stacks. */
static void interval_with_stack(uint32_t nips, uint32_t present)
{
	pl_reset(&p);
	pl_u32(pl_u64(pl_u64(pl_u32(&p, 0), 1), 2), 1);	/* seq, start, end, nkstacks */
	pl_u32(pl_u32(&p, 0), nips);
	for (uint32_t i = 0; i < present; i++)
		pl_u64(&p, 0xffffffff81000000ull + i);
}

static void test_meta(void)
{
	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 0);
	expect_decode(&p, "meta empty: ok", CAP_CHUNK_META, 0);

	pl_reset(&p);
	pl_u32(&p, 0xffffffff);
	pl_str(&p, "k");
	expect_decode(&p, "meta nkv 4G with 5 bytes: EBADMSG", CAP_CHUNK_META, -EBADMSG);

	pl_reset(&p);
	pl_u32(&p, 1);
	pl_u32(&p, 0xfffffff0);
	pl_bytes(&p, "abc", 3);
	pl_u32(&p, 0);
	expect_decode(&p, "meta key length past the end: EBADMSG", CAP_CHUNK_META, -EBADMSG);

	pl_reset(&p);
	pl_u32(&p, 1);
	pl_u32(&p, 3);
	pl_bytes(&p, "a\0b", 3);
	pl_str(&p, "v");
	pl_u32(&p, 0);
	expect_decode(&p, "meta key with a NUL: EBADMSG", CAP_CHUNK_META, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 0);
	pl_u32(&p, 0);
	expect_decode(&p, "meta trailing bytes: EBADMSG", CAP_CHUNK_META, -EBADMSG);

	pl_reset(&p);
	pl_u32(&p, 0);
	expect_decode(&p, "meta missing probe count: EBADMSG", CAP_CHUNK_META, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 0x10000000);
	pl_u32(pl_u32(pl_u32(&p, 1), 2), 3);
	expect_decode(&p, "meta nprobes past the data: EBADMSG", CAP_CHUNK_META, -EBADMSG);
}

static void test_ksyms(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 2);
	pl_str(pl_str(pl_u64(&p, 0x2000), "b"), "");
	pl_str(pl_str(pl_u64(&p, 0x1000), "a"), "");
	expect_decode(&p, "ksyms unsorted: EBADMSG", CAP_CHUNK_KSYMS, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 0x40000000);
	pl_str(pl_str(pl_u64(&p, 0x1000), "a"), "");
	expect_decode(&p, "ksyms count 1G with one symbol: EBADMSG", CAP_CHUNK_KSYMS, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u32(&p, CAP_KSYMS_F_HIDDEN), 2);
	pl_str(pl_str(pl_u64(&p, 0), "a"), "");
	pl_str(pl_str(pl_u64(&p, 0), "b"), "mod");
	ch = (struct cap_chunk){ .type = CAP_CHUNK_KSYMS, .len = (uint32_t)p.len, .data = p.buf };
	T_EQ_INT("ksyms hidden, equal addresses: ok", 0, cap_record__decode(&ch, &rec));
	T_CHECK("ksyms empty module is NULL, other kept", rec && !rec->ksyms.syms[0].module &&
		!strcmp(rec->ksyms.syms[1].module, "mod") &&
		rec->ksyms.flags == CAP_KSYMS_F_HIDDEN, "modules or flags wrong");
	cap_record__free(rec);
}

static void mapping(uint64_t start, uint64_t end, uint32_t build_id_len, uint32_t present)
{
	static const uint8_t id[64];

	pl_u64(pl_u64(pl_u64(pl_u64(pl_u64(&p, start), end), 0), 0), 0);
	pl_u32(pl_u32(pl_u32(&p, CAP_MAP_FILE), 0), build_id_len);
	pl_bytes(&p, id, present);
	pl_str(&p, "/bin/x");
}

static void process_head(const char *comm, uint32_t nmaps)
{
	pl_reset(&p);
	pl_u32(&p, 1);
	pl_u64(pl_u32(pl_u32(&p, 42), 0), 1);
	pl_str(pl_str(&p, comm), "/bin/x");
	pl_u32(&p, nmaps);
}

static void test_procs(void)
{
	process_head("x", 1);
	mapping(0x1000, 0x2000, 20, 20);
	expect_decode(&p, "procs one mapping: ok", CAP_CHUNK_PROCS, 0);

	process_head("x", 1);
	mapping(0x1000, 0x2000, CAP_BUILD_ID_MAX + 1, CAP_BUILD_ID_MAX + 1);
	expect_decode(&p, "procs build_id_len 33: EOVERFLOW", CAP_CHUNK_PROCS, -EOVERFLOW);

	process_head("x", 1);
	mapping(0x1000, 0x2000, 0xffffffff, 0);
	expect_decode(&p, "procs build_id_len 4G: EOVERFLOW", CAP_CHUNK_PROCS, -EOVERFLOW);

	process_head("x", 1);
	mapping(0x2000, 0x1000, 0, 0);
	expect_decode(&p, "procs end before start: EBADMSG", CAP_CHUNK_PROCS, -EBADMSG);

	process_head("x", 2);
	mapping(0x3000, 0x4000, 0, 0);
	mapping(0x1000, 0x2000, 0, 0);
	expect_decode(&p, "procs maps unsorted: EBADMSG", CAP_CHUNK_PROCS, -EBADMSG);

	process_head("0123456789abcdef", 0);
	expect_decode(&p, "procs comm of 16 bytes: EOVERFLOW", CAP_CHUNK_PROCS, -EOVERFLOW);

	process_head("x", 0x7fffffff);
	mapping(0x1000, 0x2000, 0, 0);
	expect_decode(&p, "procs nmaps 2G with one mapping: EBADMSG", CAP_CHUNK_PROCS, -EBADMSG);

	pl_reset(&p);
	pl_u32(&p, 0xffffffff);
	expect_decode(&p, "procs count 4G, nothing after: EBADMSG", CAP_CHUNK_PROCS, -EBADMSG);
}

static void row(const char *comm, uint32_t kstack, uint32_t ustack)
{
	pl_u32(pl_u32(pl_u32(pl_u32(&p, 0), 1), 1), 0);
	pl_str(&p, comm);
	pl_u64(pl_u32(pl_u32(&p, kstack), ustack), 5);
}

static void test_interval(void)
{
	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 1);
	row("x", 1, 0);
	expect_decode(&p, "interval one row: ok", CAP_CHUNK_INTERVAL, 0);

	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 1);
	row("x", 2, 0);
	/* up to 3.x rows refer to the record's own tables; 4.0: struct cap_stacks checks */
	expect_decode_major(&p, "interval kstack index past table: EBADMSG (3.x)",
			    CAP_CHUNK_INTERVAL, 3, -EBADMSG);
	expect_decode(&p, "interval kstack index past table: decoded (4.0: the file's stacks)",
		      CAP_CHUNK_INTERVAL, 0);

	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 1);
	row("x", 1, 1);
	expect_decode_major(&p, "interval ustack index past empty table: EBADMSG (3.x)",
			    CAP_CHUNK_INTERVAL, 3, -EBADMSG);

	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 1);
	row("0123456789abcdef", 1, 0);
	expect_decode(&p, "interval row comm of 16 bytes: EOVERFLOW", CAP_CHUNK_INTERVAL, -EOVERFLOW);

	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 1);
	row("0123456789abcde", 1, 0);
	expect_decode(&p, "interval row comm of 15 bytes: ok", CAP_CHUNK_INTERVAL, 0);

	interval_with_stack(CAP_MAX_STACK_DEPTH + 1, CAP_MAX_STACK_DEPTH + 1);
	pl_u32(pl_u32(&p, 0), 0);
	expect_decode(&p, "interval depth 1025: EOVERFLOW", CAP_CHUNK_INTERVAL, -EOVERFLOW);

	interval_with_stack(0xffffffff, 0);
	pl_u32(pl_u32(&p, 0), 0);
	expect_decode(&p, "interval depth 4G: EOVERFLOW", CAP_CHUNK_INTERVAL, -EOVERFLOW);

	interval_with_stack(CAP_MAX_STACK_DEPTH, 10);
	expect_decode(&p, "interval depth 1024 with 10 frames: EBADMSG", CAP_CHUNK_INTERVAL, -EBADMSG);

	interval_with_stack(CAP_MAX_STACK_DEPTH, CAP_MAX_STACK_DEPTH);
	pl_u32(pl_u32(&p, 0), 0);
	expect_decode(&p, "interval depth 1024: ok", CAP_CHUNK_INTERVAL, 0);

	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 0xffffffff);
	row("x", 1, 0);
	expect_decode(&p, "interval nrows 4G with one row: EBADMSG", CAP_CHUNK_INTERVAL, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u64(pl_u64(pl_u32(&p, 0), 1), 2), 0x20000000);
	expect_decode(&p, "interval nkstacks 512M, nothing after: EBADMSG", CAP_CHUNK_INTERVAL, -EBADMSG);

	interval_with_stack(3, 3);
	pl_u32(pl_u32(&p, 0), 0);
	pl_bytes(&p, "x", 1);
	expect_decode(&p, "interval trailing byte: EBADMSG", CAP_CHUNK_INTERVAL, -EBADMSG);
}

static void test_losses_end(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	pl_reset(&p);
	pl_u32(pl_u32(&p, 9), 3);
	pl_u64(pl_u32(&p, 1000), 5);	/* a kind from the future: ignored */
	pl_u64(pl_u32(&p, CAP_LOSS_COUNTS_FULL), 77);
	pl_u64(pl_u32(&p, CAP_LOSS_CPU_BASE - 1), 5);	/* below the per-CPU kinds: ignored */
	ch = (struct cap_chunk){ .type = CAP_CHUNK_LOSSES, .len = (uint32_t)p.len, .data = p.buf };
	T_EQ_INT("losses with unknown kinds: ok", 0, cap_record__decode(&ch, &rec));
	T_CHECK("losses unknown kinds ignored, known kept", rec && rec->losses.interval_seq == 9 &&
		rec->losses.counts[CAP_LOSS_COUNTS_FULL] == 77 &&
		rec->losses.counts[CAP_LOSS_KSTACK_COLLISION] == 0, "values wrong");
	cap_record__free(rec);

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 2);
	pl_u64(pl_u32(&p, CAP_LOSS_COUNTS_FULL), 1);
	pl_u64(pl_u32(&p, CAP_LOSS_COUNTS_FULL), 2);
	expect_decode(&p, "losses known kind twice: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u32(&p, 0), 0x15555556);
	pl_u64(pl_u32(&p, 0), 1);
	expect_decode(&p, "losses npairs past the data: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);

	pl_reset(&p);
	pl_u64(pl_u64(pl_u32(&p, 1), 2), 3);
	expect_decode(&p, "end: ok", CAP_CHUNK_END, 0);
	p.len--;
	expect_decode(&p, "end one byte short: EBADMSG", CAP_CHUNK_END, -EBADMSG);
	p.len += 2;
	expect_decode(&p, "end one byte long: EBADMSG", CAP_CHUNK_END, -EBADMSG);
	pl_reset(&p);
	expect_decode(&p, "end empty: EBADMSG", CAP_CHUNK_END, -EBADMSG);

	ch = (struct cap_chunk){ .type = CAP_CHUNK_END, .len = CAP_MAX_CHUNK_RAW + 1,
				 .data = p.buf };
	T_EQ_INT("decode over the size limit: EOVERFLOW", -EOVERFLOW,
		 cap_record__decode(&ch, &rec));
}

int main(void)
{
	test_meta();
	test_ksyms();
	test_procs();
	test_interval();
	test_losses_end();
	T_EXIT();
}
