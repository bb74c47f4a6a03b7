// SPDX-License-Identifier: MIT
/*
 * kfunc.c: what this kernel offers to probe kernel functions: kprobe.multi (one link for many
 * functions, 5.18+ with CONFIG_FPROBE), single kprobes (CONFIG_KPROBES), or fentry (BPF
 * trampolines). Probed with tiny raw programs, before the skeleton is loaded, so the skeleton
 * loads only the program that can attach.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "rec.h"

/* r0 = 0; exit */
static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static bool has_kprobes(void)
{
	/* The perf kprobe PMU (what libbpf uses) or the legacy tracefs interface. */
	return !access("/sys/bus/event_source/devices/kprobe/type", F_OK) ||
	       !access("/sys/kernel/tracing/kprobe_events", F_OK) ||
	       !access("/sys/kernel/debug/tracing/kprobe_events", F_OK);
}

/*
 * A kernel without kprobe.multi either does not know the attach type (-EINVAL) or was built
 * without fprobe (-EOPNOTSUPP). A kernel with it looks up the bogus symbol and fails otherwise.
 */
static bool has_kprobe_multi(void)
{
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_KPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	const char *syms[] = { "stkrec_no_such_function__" };
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "stkrec_probe", "GPL", return_zero, 2, &popts);
	if (prog < 0)
		return false;
	lopts.kprobe_multi.syms = syms;
	lopts.kprobe_multi.cnt = 1;
	link = bpf_link_create(prog, 0, BPF_TRACE_KPROBE_MULTI, &lopts);
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0 || (link != -EINVAL && link != -EOPNOTSUPP);
}

static int fentry_load_error(const char *func)
{
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_FENTRY);
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, prog;

	if (!vmlinux)
		return -errno;
	id = btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC);
	if (id < 0)	/* a pattern, or not in BTF: any traceable function answers the question */
		id = btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC);
	btf__free(vmlinux);
	if (id < 0)
		return id;
	popts.attach_btf_id = id;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "stkrec_probe", "GPL", return_zero, 2, &popts);
	if (prog < 0)
		return prog;
	close(prog);
	return 0;
}

enum rec_kfunc_mode rec_kfunc_mode(const char *func, int *fentry_err)
{
	*fentry_err = 0;
	if (has_kprobes())
		return has_kprobe_multi() ? REC_KFUNC_KPROBE_MULTI : REC_KFUNC_KPROBE;
	*fentry_err = -fentry_load_error(func);
	return *fentry_err ? REC_KFUNC_NONE : REC_KFUNC_FENTRY;
}
