/* SPDX-License-Identifier: MIT */
/*
 * names.c: lookups over decoded records and human names of enum values.
 */
#include "internal.h"

const char *cap_meta_get(const struct cap_meta *meta, const char *key)
{
	uint32_t i;

	if (!meta || !key)
		return NULL;
	/* The first pair wins: stkrec writes each key once, format.md 4.1. */
	for (i = 0; i < meta->nkv; i++)
		if (meta->kv[i].key && !strcmp(meta->kv[i].key, key))
			return meta->kv[i].value;
	return NULL;
}

const char *cap_loss_name(unsigned int kind)
{
	static const char *const names[CAP_LOSS__COUNT] = {
		[CAP_LOSS_KSTACK_COLLISION] = "kernel stacks lost (stack map full or collision)",
		[CAP_LOSS_USTACK_COLLISION] = "user stacks lost (stack map full or collision)",
		[CAP_LOSS_KSTACK_ERROR] = "kernel stacks lost to other errors",
		[CAP_LOSS_USTACK_MISSING] = "user stacks missing (no readable user stack)",
		[CAP_LOSS_COUNTS_FULL] = "events not counted (counts map full)",
		[CAP_LOSS_KSTACK_TRUNCATED] = "kernel stacks truncated at the depth limit",
		[CAP_LOSS_USTACK_TRUNCATED] = "user stacks truncated at the depth limit",
		[CAP_LOSS_NOTIFY_DROPPED] = "new-process notifications dropped",
		[CAP_LOSS_MAPS_UNREAD] = "events of processes exited before their maps were read",
		[CAP_LOSS_EVENTS_DROPPED] = "events dropped (ring buffer full)",
		[CAP_LOSS_USTACK_PROC_UNKNOWN] = "user stacks cut: process mappings not loaded yet",
		[CAP_LOSS_USTACK_NO_MAPPING] = "user stacks cut at an address in no known mapping",
		[CAP_LOSS_USTACK_NO_CFI] = "user stacks cut at code without CFI",
		[CAP_LOSS_USTACK_UNSUPPORTED] = "user stacks cut at an unsupported CFI rule",
		[CAP_LOSS_USTACK_READ_FAULT] = "user stacks cut: stack memory not readable",
		[CAP_LOSS_USTACK_BAD_FRAME] = "user stacks cut at a frame not moving up the stack",
		[CAP_LOSS_USTACK_TABLE_LIMIT] = "user stacks cut: unwind table over --unwind-memory",
		[CAP_LOSS_DRAIN_RACE] = "events counted while their generation was drained",
		[CAP_LOSS_NESTED] = "events not counted (BPF programs nested too deep)",
		[CAP_LOSS_USTACK_COPY_END] = "user stacks cut: deeper than the 64 KiB copied",
		[CAP_LOSS_USTACK_DEFER_FULL] = "user stacks cut: the ring of deferred events was full",
		[CAP_LOSS_RETRY_PENDING] = "events not counted: their task had not returned to user space",
		[CAP_LOSS_PY_VERSION] = "Python processes of a version without a layout: native frames",
		[CAP_LOSS_PY_NO_RUNTIME] = "Python processes without the _PyRuntime symbol: native frames",
		[CAP_LOSS_PY_TRUNCATED] = "Python frames cut: more than a chain holds",
		[CAP_LOSS_PY_READ_FAULT] = "Python frames cut: interpreter memory not readable",
		[CAP_LOSS_PY_BAD_FRAME] = "Python frames cut at a frame without a code object",
		[CAP_LOSS_PY_NO_THREAD] = "Python frames missing: no thread state found",
		[CAP_LOSS_PY_UNNAMED] = "Python code objects whose names could not be read",
		[CAP_LOSS_PY_NAMES_FULL] = "Python frames past the names table (--python-names): unnamed",
		[CAP_LOSS_PERFMAP_LEFT_OUT] = "bytes of JIT perf maps left out (over stkrec's bounds)",
	};

	if (kind < CAP_LOSS__COUNT && names[kind])
		return names[kind];
	return "unknown loss";
}

const char *cap_probe_kind_name(unsigned int kind)
{
	switch (kind) {
	case CAP_PROBE_KFUNC:
		return "kernel function";
	case CAP_PROBE_TRACEPOINT:
		return "tracepoint";
	case CAP_PROBE_UPROBE:
		return "uprobe";
	case CAP_PROBE_USDT:
		return "USDT probe";
	case CAP_PROBE_SAMPLE:
		return "sampling";
	default:
		return "unknown probe kind";
	}
}
