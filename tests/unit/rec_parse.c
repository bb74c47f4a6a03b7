// SPDX-License-Identifier: MIT
/* Unit tests of record/'s line parsers: /proc/PID/maps, /proc/PID/stat, /proc/kallsyms, options. */
#include <errno.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include "../test.h"
#include "../../record/rec.h"

static void test_maps_line(void)
{
	struct cap_mapping m;
	char path[256];
	const char *p = path;
	int r;

	r = rec_maps_line("7f5c79dcd000-7f5c79f23000 r-xp 00026000 fe:00 332835    "
			  "                /usr/lib/x86_64-linux-gnu/libc.so.6\n",
			  &m, path, sizeof(path));
	if (T_EQ_INT("test_rec_maps_file_rc", 1, r)) {
		(void)T_EQ_U64("test_rec_maps_file_start", 0x7f5c79dcd000ull, m.start);
		(void)T_EQ_U64("test_rec_maps_file_end", 0x7f5c79f23000ull, m.end);
		(void)T_EQ_U64("test_rec_maps_file_pgoff", 0x26000, m.pgoff);
		(void)T_EQ_U64("test_rec_maps_file_dev", makedev(0xfe, 0), m.dev);
		(void)T_EQ_U64("test_rec_maps_file_inode", 332835, m.inode);
		(void)T_EQ_INT("test_rec_maps_file_kind", CAP_MAP_FILE, m.kind);
		(void)T_EQ_INT("test_rec_maps_file_flags", 0, m.flags);
		(void)T_EQ_STR("test_rec_maps_file_path", "/usr/lib/x86_64-linux-gnu/libc.so.6", p);
	}
	r = rec_maps_line("55d0c0a00000-55d0c0a01000 r-xp 00001000 08:01 42 /tmp/a b (deleted)\n",
			  &m, path, sizeof(path));
	if (T_EQ_INT("test_rec_maps_deleted_rc", 1, r)) {
		(void)T_EQ_STR("test_rec_maps_deleted_path", "/tmp/a b", p);
		(void)T_EQ_INT("test_rec_maps_deleted_flag", CAP_MAP_F_DELETED, m.flags);
	}
	r = rec_maps_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]\n", &m,
			  path, sizeof(path));
	(void)T_EQ_INT("test_rec_maps_vdso", CAP_MAP_VDSO, r == 1 ? (int)m.kind : -1);
	r = rec_maps_line("7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n", &m, path,
			  sizeof(path));
	(void)T_EQ_INT("test_rec_maps_anon", CAP_MAP_ANON_EXEC, r == 1 ? (int)m.kind : -1);
	r = rec_maps_line("7f0000000000-7f0000001000 r-xs 00000000 00:01 7 /memfd:jit (deleted)\n",
			  &m, path, sizeof(path));
	(void)T_EQ_INT("test_rec_maps_memfd", CAP_MAP_MEMFD, r == 1 ? (int)m.kind : -1);
	r = rec_maps_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n",
			  &m, path, sizeof(path));
	(void)T_EQ_INT("test_rec_maps_vsyscall", CAP_MAP_OTHER, r == 1 ? (int)m.kind : -1);
	r = rec_maps_line("7f5c79dcd000-7f5c79f23000 r--p 00000000 fe:00 332835 /lib/libc.so.6\n",
			  &m, path, sizeof(path));
	(void)T_EQ_INT("test_rec_maps_not_exec", 0, r);
	r = rec_maps_line("garbage\n", &m, path, sizeof(path));
	(void)T_EQ_INT("test_rec_maps_garbage", -EINVAL, r);
}

static void test_stat_line(void)
{
	char comm[16];
	const char *c = comm;
	uint64_t start = 0;
	int r = rec_stat_line("4242 (a) b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			      "987654 1000000 100 18446744073709551615\n",
			      comm, sizeof(comm), &start);

	if (T_EQ_INT("test_rec_stat_rc", 0, r)) {
		(void)T_EQ_STR("test_rec_stat_comm_parens", "a) b) c", c);
		(void)T_EQ_U64("test_rec_stat_starttime", 987654, start);
	}
	(void)T_EQ_INT("test_rec_stat_short", -EINVAL, rec_stat_line("1 (x) S 1 2\n", comm, sizeof(comm),
							      &start));
}

static void test_kallsyms_line(void)
{
	char name[64], mod[64];
	const char *pn = name, *pm = mod;
	uint64_t addr;
	int r;

	r = rec_kallsyms_line("ffffffff81000000 T _text\n", &addr, name, sizeof(name), mod,
			      sizeof(mod));
	if (T_EQ_INT("test_rec_kallsyms_text_rc", 1, r)) {
		(void)T_EQ_U64("test_rec_kallsyms_text_addr", 0xffffffff81000000ull, addr);
		(void)T_EQ_STR("test_rec_kallsyms_text_name", "_text", pn);
		(void)T_EQ_STR("test_rec_kallsyms_text_nomod", "", pm);
	}
	r = rec_kallsyms_line("ffffffffc0a01000 t ext4_foo\t[ext4]\n", &addr, name, sizeof(name),
			      mod, sizeof(mod));
	if (T_EQ_INT("test_rec_kallsyms_module_rc", 1, r))
		(void)T_EQ_STR("test_rec_kallsyms_module", "ext4", pm);
	r = rec_kallsyms_line("0000000000000000 W weak_fn\n", &addr, name, sizeof(name), mod,
			      sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_weak_hidden", 1, r == 1 && addr == 0);
	r = rec_kallsyms_line("ffffffff82000000 D some_data\n", &addr, name, sizeof(name), mod,
			      sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_data_skipped", 0, r);
	r = rec_kallsyms_line("zz\n", &addr, name, sizeof(name), mod, sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_garbage", -EINVAL, r);
	r = rec_kallsyms_line("1ffffffff81000000 T too_many_digits\n", &addr, name, sizeof(name),
			      mod, sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_17_digits", -EINVAL, r);
	r = rec_kallsyms_line("FFFFFFFF81000000 T upper", &addr, name, sizeof(name), mod,
			      sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_upper_hex_no_newline", 1,
		       r == 1 && addr == 0xffffffff81000000ull && !strcmp(name, "upper"));
	r = rec_kallsyms_line("ffffffffc0a01000 t f\t[ext4\n", &addr, name, sizeof(name), mod,
			      sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_module_unclosed", -EINVAL, r);
	r = rec_kallsyms_line("ffffffff81000000 T \n", &addr, name, sizeof(name), mod, sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_no_name", -EINVAL, r);
	r = rec_kallsyms_line("ffffffff81000000 T a_name_longer_than_the_buffer_of_sixty_four_bytes_"
			      "given_here_and_then_some\n", &addr, name, sizeof(name), mod, sizeof(mod));
	(void)T_EQ_INT("test_rec_kallsyms_name_too_long", -EINVAL, r);
}

static void test_numbers(void)
{
	uint32_t *ids = NULL, n = 0;
	uint64_t v;

	if (T_EQ_INT("test_rec_idlist_rc", 0, rec_parse_id_list("12,345,6", &ids, &n))) {
		(void)T_EQ_INT("test_rec_idlist_n", 3, n);
		(void)T_EQ_INT("test_rec_idlist_v1", 345, ids[1]);
	}
	free(ids);
	(void)T_EQ_INT("test_rec_idlist_trailing", -EINVAL, rec_parse_id_list("1,", &ids, &n));
	(void)T_EQ_INT("test_rec_idlist_zero", -EINVAL, rec_parse_id_list("0", &ids, &n));
	(void)T_EQ_INT("test_rec_idlist_neg", -EINVAL, rec_parse_id_list("-3", &ids, &n));
	(void)T_EQ_INT("test_rec_idlist_empty_item", -EINVAL, rec_parse_id_list("1,,2", &ids, &n));
	(void)T_EQ_INT("test_rec_u64_range", -EINVAL, rec_parse_u64("0", 1, 10, &v));
	(void)T_EQ_INT("test_rec_u64_junk", -EINVAL, rec_parse_u64("5s", 1, 10, &v));
	(void)T_EQ_INT("test_rec_u64_sign", -EINVAL, rec_parse_u64("+5", 1, 10, &v));
	(void)T_EQ_INT("test_rec_u64_ok", 7, rec_parse_u64("7", 1, 10, &v) ? -1 : (int)v);
}

static int parse(struct rec_opts *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return rec_parse_opts(argc, argv, o);
}

static void test_opts(void)
{
	struct rec_opts o;
	char *a1[] = { "stkrec", "-o", "x.stk", "t:a:b", "-i", "2", "c:malloc", "--", "ls", "-l",
		       NULL };
	char *a2[] = { "stkrec", "-F", "99", "5", NULL };
	char *a3[] = { "stkrec", "-K", "-U", NULL };
	char *a4[] = { "stkrec", "--stack-storage-size", "100", "-p", "1,2", "-C", "1",
		       "--all-kallsyms", NULL };
	char *a5[] = { "stkrec", "-i", "0", NULL };
	/* bcc profile's positional duration, after SPECs too: never a kernel function "5" */
	char *a6[] = { "stkrec", "t:a:b", "c:malloc", "5", NULL };

	if (T_EQ_INT("test_rec_opts_spec_cmd_rc", 0, parse(&o, a1))) {
		(void)T_EQ_STR("test_rec_opts_output", "x.stk", o.output);
		(void)T_EQ_INT("test_rec_opts_nspecs", 2, o.nspecs);
		(void)T_EQ_STR("test_rec_opts_spec1", "c:malloc", o.nspecs == 2 ? o.specs[1] : "");
		(void)T_EQ_INT("test_rec_opts_interval", 2, o.interval_s);
		(void)T_EQ_STR("test_rec_opts_command", "ls", o.command ? o.command[0] : "");
		(void)T_EQ_STR("test_rec_opts_command_arg", "-l", o.command ? o.command[1] : "");
		(void)T_EQ_INT("test_rec_opts_default_stacks", 16384, o.stack_storage_size);
		(void)T_EQ_INT("test_rec_opts_default_hash", 40960, o.hash_storage_size);
	}
	rec_opts__free(&o);
	if (T_EQ_INT("test_rec_opts_profile_duration_rc", 0, parse(&o, a2))) {
		(void)T_EQ_INT("test_rec_opts_profile_nspecs", 0, o.nspecs);
		(void)T_EQ_INT("test_rec_opts_profile_duration", 5, o.duration_s);
		(void)T_EQ_INT("test_rec_opts_profile_freq", 99, o.freq_hz);
		(void)T_EQ_INT("test_rec_opts_kallsyms_hits_by_default", 0, o.all_kallsyms);
	}
	rec_opts__free(&o);
	(void)T_EQ_INT("test_rec_opts_k_and_u", -EINVAL, parse(&o, a3));
	rec_opts__free(&o);
	if (T_EQ_INT("test_rec_opts_long_rc", 0, parse(&o, a4))) {
		(void)T_EQ_INT("test_rec_opts_stack_storage", 100, o.stack_storage_size);
		(void)T_EQ_INT("test_rec_opts_npids", 2, o.npids);
		(void)T_EQ_INT("test_rec_opts_cpu", 1, o.cpu);
		/* a 49 Hz profile of one CPU: the smallest maps */
		(void)T_EQ_INT("test_rec_opts_profile_hash", 1024, o.hash_storage_size);
		(void)T_EQ_INT("test_rec_opts_all_kallsyms", 1, o.all_kallsyms);
	}
	rec_opts__free(&o);
	(void)T_EQ_INT("test_rec_opts_bad_interval", -EINVAL, parse(&o, a5));
	rec_opts__free(&o);
	if (T_EQ_INT("test_rec_opts_spec_duration_rc", 0, parse(&o, a6))) {
		(void)T_EQ_INT("test_rec_opts_spec_duration_nspecs", 2, o.nspecs);
		(void)T_EQ_INT("test_rec_opts_spec_duration", 5, o.duration_s);
	}
	rec_opts__free(&o);
}

int main(void)
{
	test_maps_line();
	test_stat_line();
	test_kallsyms_line();
	test_numbers();
	test_opts();
	T_EXIT();
}
