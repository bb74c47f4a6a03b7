// SPDX-License-Identifier: GPL-2.0
/*
 * floor.bpf.c: the least a BPF tool must do to count stacks per event (bench/run's "floor"):
 * a pid filter, bpf_get_stackid() for the kernel and the user stack (frame pointers, the
 * kernel's walk), one hash-map count. bcc's stackcount and bpftrace's @[kstack, ustack] =
 * count() do this much and a little more; stkrec is measured against it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 cfg_tgid = 0;

struct key {
	__u32 tgid;
	__s32 kstack, ustack;
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 40960);
	__type(key, struct key);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline int count(void *ctx)
{
	struct key k = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	__u64 one = 1, *c;

	if (k.tgid != cfg_tgid)
		return 0;
	k.kstack = bpf_get_stackid(ctx, &stacks, 0);
	k.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	c = bpf_map_lookup_elem(&counts, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
	else
		bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	return 0;
}

SEC("tracepoint")
int floor_tp(void *ctx)
{
	return count(ctx);
}

SEC("uprobe")
int floor_uprobe(void *ctx)
{
	return count(ctx);
}

SEC("usdt")
int floor_usdt(void *ctx)
{
	return count(ctx);
}
