// SPDX-License-Identifier: MIT
/*
 * rec_kallsyms.c: the kernel symbols stkrec writes (record/ksyms/kallsyms.c, docs/format.md 4.10)
 * from a made-up kallsyms file: nothing is read before an interval with kernel stacks; each
 * KSYMS_ADD holds exactly the symbols hit and not written before, sorted, sized up to the next
 * symbol (the last one up to 2^64), one per alias group; kallsyms is read again only for a frame
 * outside the kernel image once the signature changed, and then only changed symbols are written
 * again; kptr_restrict gives one HIDDEN record; --all-kallsyms a whole KSYMS first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "../test.h"
#include "../../record/rec.h"

#define K_TEXT 0xffffffff81000000ull
#define K_SYSCALL 0xffffffff81000100ull
#define K_ENTRY 0xffffffff81000180ull
#define K_EXT4 0xffffffffc0001000ull
#define K_BPF 0xffffffffc0002000ull

/* Unsorted as kallsyms is (modules after the kernel), aliases, data and a weak symbol. */
static const char kallsyms_v1[] =
	"ffffffffc0001000 t ext4_read\t[ext4]\n"
	"ffffffffc0001100 t ext4_write\t[ext4]\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 t __pi__text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81000100 T zz_alias_of_do_syscall_64\n"
	"ffffffff81000120 d some_data\n"
	"ffffffff81000180 T entry_SYSCALL_64\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffffc0002000 t bpf_prog_aaaaaaaaaaaaaaaa_x\t[bpf]\n";

/* ext4 unloaded, a BPF program where ext4_read was. */
static const char kallsyms_v2[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81000180 T entry_SYSCALL_64\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffffc0001000 t bpf_prog_bbbbbbbbbbbbbbbb_y\t[bpf]\n"
	"ffffffffc0002000 t bpf_prog_aaaaaaaaaaaaaaaa_x\t[bpf]\n";

/* A new kernel-image symbol splits do_syscall_64. */
static const char kallsyms_v3[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81000140 t do_syscall_64_cold\n"
	"ffffffff81000180 T entry_SYSCALL_64\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffffc0001000 t bpf_prog_bbbbbbbbbbbbbbbb_y\t[bpf]\n"
	"ffffffffc0002000 t bpf_prog_aaaaaaaaaaaaaaaa_x\t[bpf]\n";

static const char kallsyms_hidden[] =
	"0000000000000000 T _text\n"
	"0000000000000000 T do_syscall_64\n"
	"0000000000000000 t ext4_read\t[ext4]\n";

static char ksyms_path[128], cap_path[64];
static uint64_t fake_sig;
static unsigned int sig_calls;

static uint64_t signature(void)
{
	sig_calls++;
	return fake_sig;
}

static void write_kallsyms(const char *text)
{
	FILE *f = fopen(ksyms_path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("not ok rec_kallsyms: cannot write %s\n", ksyms_path);
		exit(1);
	}
}

/* One interval with one kernel stack of n addresses. */
static int put(struct rec_kallsyms *k, struct cap_writer *w, uint64_t *ips, uint32_t n)
{
	struct cap_stack st = { .nips = n, .ips = ips };
	struct cap_interval iv = { .nkstacks = 1, .kstacks = &st };

	return rec_kallsyms__put(k, &iv, w);
}

/* The records written to cap_path, as text: "add F: addr+size name [mod], ..." per record. */
static const char *records(void)
{
	static char out[2048];
	struct cap_reader *r = cap_reader__open(cap_path);
	struct cap_record *rec;
	struct cap_chunk ch;
	size_t len = 0;

	out[0] = 0;
	while (r && cap_reader__next(r, &ch) == 1 && !cap_record__decode(&ch, &rec)) {
		const struct cap_ksyms *ks = &rec->ksyms;

		len += snprintf(out + len, sizeof(out) - len, "%s%s %x:", len ? "; " : "",
				rec->type == CAP_CHUNK_KSYMS ? "ksyms" : "add", ks->flags);
		for (uint32_t i = 0; i < ks->count && len < sizeof(out); i++)
			len += snprintf(out + len, sizeof(out) - len, " %" PRIx64 "+%" PRIx64 " %s%s%s",
					ks->syms[i].addr, ks->syms[i].size, ks->syms[i].name,
					ks->syms[i].module ? " " : "",
					ks->syms[i].module ? ks->syms[i].module : "");
		cap_record__free(rec);
	}
	cap_reader__close(r);
	return out;
}

static void test_lazy_and_hits(void)
{
	uint64_t first[] = { K_SYSCALL + 0x10, K_TEXT + 5, K_EXT4 + 0x10, K_TEXT - 1 };
	uint64_t second[] = { K_BPF + 0x10, K_SYSCALL, K_EXT4 + 0xff };
	struct cap_writer *w = cap_writer__open(cap_path);
	struct rec_kallsyms *k;
	unsigned int calls;

	snprintf(ksyms_path, sizeof(ksyms_path), "/nonexistent/kallsyms");
	k = rec_kallsyms__new(ksyms_path, signature);
	T_EQ_INT("test_rec_kallsyms_no_kernel_stack_reads_nothing", 0, put(k, w, NULL, 0));
	T_EQ_U64("test_rec_kallsyms_no_kernel_stack_no_signature", 0, sig_calls);
	T_EQ_INT("test_rec_kallsyms_unreadable_is_not_fatal", 0, put(k, w, first, 4));
	T_EQ_STR("test_rec_kallsyms_unreadable_writes_nothing", "", records());
	rec_kallsyms__free(k);

	snprintf(ksyms_path, sizeof(ksyms_path), "%s.kallsyms", cap_path);
	write_kallsyms(kallsyms_v1);
	k = rec_kallsyms__new(ksyms_path, signature);
	T_EQ_INT("test_rec_kallsyms_first_put", 0, put(k, w, first, 4));
	/* _text and do_syscall_64: of aliases the first kallsyms lists, as the kernel names it
	 * (and a KSYMS reader, which takes the last of a snapshot's); ext4_read: outside
	 * the kernel image, the signature was read, unchanged */
	T_EQ_STR("test_rec_kallsyms_first_record",
		 "add 0: ffffffff81000000+100 _text ffffffff81000100+80 do_syscall_64 "
		 "ffffffffc0001000+100 ext4_read ext4", records());
	calls = sig_calls;
	T_EQ_INT("test_rec_kallsyms_second_put", 0, put(k, w, second, 3));
	T_EQ_STR("test_rec_kallsyms_only_new_symbols",
		 "add 0: ffffffff81000000+100 _text ffffffff81000100+80 do_syscall_64 "
		 "ffffffffc0001000+100 ext4_read ext4; "
		 "add 0: ffffffffc0002000+3fffe000 bpf_prog_aaaaaaaaaaaaaaaa_x bpf", records());
	T_EQ_U64("test_rec_kallsyms_signature_once_per_drain", calls + 1, sig_calls);
	put(k, w, second, 3);
	T_EQ_STR("test_rec_kallsyms_nothing_new_no_record",
		 "add 0: ffffffff81000000+100 _text ffffffff81000100+80 do_syscall_64 "
		 "ffffffffc0001000+100 ext4_read ext4; "
		 "add 0: ffffffffc0002000+3fffe000 bpf_prog_aaaaaaaaaaaaaaaa_x bpf", records());

	/* ext4 gone, a BPF program in its place: read again, only it is written */
	write_kallsyms(kallsyms_v2);
	fake_sig++;
	put(k, w, first, 4);
	T_EQ_STR("test_rec_kallsyms_reread_on_change",
		 "add 0: ffffffff81000000+100 _text ffffffff81000100+80 do_syscall_64 "
		 "ffffffffc0001000+100 ext4_read ext4; "
		 "add 0: ffffffffc0002000+3fffe000 bpf_prog_aaaaaaaaaaaaaaaa_x bpf; "
		 "add 0: ffffffffc0001000+1000 bpf_prog_bbbbbbbbbbbbbbbb_y bpf", records());

	/* kernel-image frames only: no signature, no new read, though the file changed */
	write_kallsyms(kallsyms_v3);
	fake_sig++;
	calls = sig_calls;
	put(k, w, first, 2);
	T_EQ_U64("test_rec_kallsyms_kernel_image_no_signature", calls, sig_calls);
	/* a module frame: read again; do_syscall_64's range changed, it is written again */
	put(k, w, first, 3);
	T_EQ_STR("test_rec_kallsyms_changed_range_written_again",
		 "add 0: ffffffff81000000+100 _text ffffffff81000100+80 do_syscall_64 "
		 "ffffffffc0001000+100 ext4_read ext4; "
		 "add 0: ffffffffc0002000+3fffe000 bpf_prog_aaaaaaaaaaaaaaaa_x bpf; "
		 "add 0: ffffffffc0001000+1000 bpf_prog_bbbbbbbbbbbbbbbb_y bpf; "
		 "add 0: ffffffff81000100+40 do_syscall_64", records());
	rec_kallsyms__free(k);
	cap_writer__close(w);
}

static void test_hidden(void)
{
	uint64_t ips[] = { K_SYSCALL };
	struct cap_writer *w = cap_writer__open(cap_path);
	struct rec_kallsyms *k = rec_kallsyms__new(ksyms_path, signature);

	write_kallsyms(kallsyms_hidden);
	put(k, w, ips, 1);
	put(k, w, ips, 1);
	T_EQ_STR("test_rec_kallsyms_hidden_once", "add 1:", records());
	rec_kallsyms__free(k);
	cap_writer__close(w);
}

static void test_all(void)
{
	uint64_t ips[] = { K_SYSCALL, K_ENTRY + 1 };
	uint64_t bpf[] = { K_EXT4 + 4 };
	struct cap_writer *w = cap_writer__open(cap_path);
	struct rec_kallsyms *k = rec_kallsyms__new(ksyms_path, signature);

	write_kallsyms(kallsyms_v1);
	T_EQ_INT("test_rec_kallsyms_all_put", 0, rec_kallsyms__put_all(k, w));
	put(k, w, ips, 2);
	T_EQ_STR("test_rec_kallsyms_all_snapshot_then_nothing",
		 "ksyms 0: ffffffff81000000+0 _stext ffffffff81000000+0 __pi__text "
		 "ffffffff81000000+0 _text ffffffff81000100+0 zz_alias_of_do_syscall_64 "
		 "ffffffff81000100+0 do_syscall_64 "
		 "ffffffff81000180+0 entry_SYSCALL_64 ffffffff81000200+0 weak_fn "
		 "ffffffffc0001000+0 ext4_read ext4 ffffffffc0001100+0 ext4_write ext4 "
		 "ffffffffc0002000+0 bpf_prog_aaaaaaaaaaaaaaaa_x bpf", records());
	write_kallsyms(kallsyms_v2);
	fake_sig++;
	put(k, w, bpf, 1);
	T_EQ_STR("test_rec_kallsyms_all_then_changes",
		 "ksyms 0: ffffffff81000000+0 _stext ffffffff81000000+0 __pi__text "
		 "ffffffff81000000+0 _text ffffffff81000100+0 zz_alias_of_do_syscall_64 "
		 "ffffffff81000100+0 do_syscall_64 "
		 "ffffffff81000180+0 entry_SYSCALL_64 ffffffff81000200+0 weak_fn "
		 "ffffffffc0001000+0 ext4_read ext4 ffffffffc0001100+0 ext4_write ext4 "
		 "ffffffffc0002000+0 bpf_prog_aaaaaaaaaaaaaaaa_x bpf; "
		 "add 0: ffffffffc0001000+1000 bpf_prog_bbbbbbbbbbbbbbbb_y bpf", records());
	rec_kallsyms__free(k);
	cap_writer__close(w);
}

struct line {
	uint64_t addr;
	uint32_t at;		/* its line in the file */
	char name[32];
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->at < y->at ? 1 : x->at > y->at ? -1 : 0;
}

/*
 * The snapshot's order is by address, of aliases the first in the file last, whatever the file's
 * order: kallsyms' own shape (the image in address order, modules in no order) and worse (image
 * symbols after the modules, modules below the image), against qsort of the same lines.
 */
static void test_sort_order(void)
{
	enum { N = 3000 };
	static struct line l[N];
	static char text[N * 64];
	struct cap_writer *w = cap_writer__open(cap_path);
	struct rec_kallsyms *k = rec_kallsyms__new(ksyms_path, signature);
	struct cap_reader *r;
	struct cap_record *rec = NULL;
	struct cap_chunk ch;
	uint32_t same = 0, seed = 7;
	size_t len = 0;

	for (uint32_t i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		if (i < 2000)	/* the image: runs of three aliases */
			l[i].addr = K_TEXT + (i / 3) * 0x10;
		else		/* modules, shuffled, some below the image */
			l[i].addr = (i % 7 ? K_EXT4 : K_TEXT - 0x100000) + (seed >> 8) % 4096 * 0x10;
		/* names in no order: aliases are ordered by their place in the file */
		snprintf(l[i].name, sizeof(l[i].name), "f%05u", (seed >> 12) % 100000);
		l[i].at = i < 10 ? N - 10 + i : i - 10;	/* the first ten go last, below */
		len += snprintf(text + len, sizeof(text) - len, "%016" PRIx64 " t %s%s\n",
				l[i].addr, l[i].name, i < 2000 ? "" : "\t[mod]");
	}
	/* the first ten image symbols (26 bytes a line) moved past the modules */
	memmove(text + len, text, 10 * 26);
	text[len + 10 * 26] = 0;
	write_kallsyms(text + 10 * 26);
	T_EQ_INT("test_rec_kallsyms_sort_put_all", 0, rec_kallsyms__put_all(k, w));
	cap_writer__close(w);
	qsort(l, N, sizeof(*l), cmp_line);
	r = cap_reader__open(cap_path);
	/* how many lead the snapshot in qsort's order */
	if (r && cap_reader__next(r, &ch) == 1 && !cap_record__decode(&ch, &rec) &&
	    rec->ksyms.count == N)
		while (same < N && rec->ksyms.syms[same].addr == l[same].addr &&
		       !strcmp(rec->ksyms.syms[same].name, l[same].name))
			same++;
	T_EQ_U64("test_rec_kallsyms_sort_as_qsort", N, same);
	cap_record__free(rec);
	cap_reader__close(r);
	rec_kallsyms__free(k);
}

static const char *fmt(const char *f, ...)
{
	static char out[256];
	va_list ap;

	va_start(ap, f);
	vsnprintf(out, sizeof(out), f, ap);
	va_end(ap);
	return out;
}

/* The kernel's "%pS" texts (record/ksyms/ksymname.c) into symbols. */
static void test_parse_named(void)
{
	struct rec_ksym_named s;

	T_EQ_INT("test_rec_ksymname_parse_image", 1,
		 rec_ksymname_parse("__do_sys_getppid+0x5/0x40", 0xffffffff81377be5ull, &s));
	T_EQ_STR("test_rec_ksymname_parse_image_symbol", "ffffffff81377be0 40 __do_sys_getppid -",
		 fmt("%" PRIx64 " %" PRIx64 " %s %s", s.addr, s.size, s.name,
		     s.module[0] ? s.module : "-"));
	T_EQ_INT("test_rec_ksymname_parse_module", 1,
		 rec_ksymname_parse("ext4_read+0x10/0x100 [ext4]", K_EXT4 + 0x10, &s));
	T_EQ_STR("test_rec_ksymname_parse_module_symbol", "ffffffffc0001000 100 ext4_read ext4",
		 fmt("%" PRIx64 " %" PRIx64 " %s %s", s.addr, s.size, s.name, s.module));
	T_EQ_INT("test_rec_ksymname_parse_plus_in_name", 1,
		 rec_ksymname_parse("a+b+0x0/0x8", K_TEXT, &s));
	T_EQ_STR("test_rec_ksymname_parse_plus_in_name_symbol", "a+b", s.name);
	T_EQ_INT("test_rec_ksymname_parse_none", 0,
		 rec_ksymname_parse("0xffffffffa0000000", 0xffffffffa0000000ull, &s));
	T_EQ_INT("test_rec_ksymname_parse_offset_past_size", -EINVAL,
		 rec_ksymname_parse("f+0x50/0x40", K_TEXT, &s));
	T_EQ_INT("test_rec_ksymname_parse_unclosed_module", -EINVAL,
		 rec_ksymname_parse("f+0x1/0x40 [ext4", K_TEXT, &s));
	T_EQ_INT("test_rec_ksymname_parse_trailing", -EINVAL,
		 rec_ksymname_parse("f+0x1/0x40x", K_TEXT, &s));
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(cap_path, sizeof(cap_path), "%s/rec_kallsyms.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(cap_path);
	if (fd < 0) {
		printf("not ok rec_kallsyms: mkstemp: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	test_lazy_and_hits();
	test_hidden();
	test_all();
	test_sort_order();
	test_parse_named();
	unlink(cap_path);
	unlink(ksyms_path);
	T_EXIT();
}
