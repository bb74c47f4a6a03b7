// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/probe/kfunc.c that need no BPF: mechanism names (the meta key
 * probe.N.mechanism) and STKREC_KFUNC, which forces a mechanism without probing the kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test.h"
#include "../../record/rec.h"

static void test_names(void)
{
	T_EQ_STR("test_rec_kfunc_name_multi", "kprobe.multi",
		 rec_kfunc_mode_name(REC_KFUNC_KPROBE_MULTI));
	T_EQ_STR("test_rec_kfunc_name_kprobe", "kprobe", rec_kfunc_mode_name(REC_KFUNC_KPROBE));
	T_EQ_STR("test_rec_kfunc_name_fentry", "fentry", rec_kfunc_mode_name(REC_KFUNC_FENTRY));
	T_EQ_STR("test_rec_kfunc_name_none", "none", rec_kfunc_mode_name(REC_KFUNC_NONE));
}

static void check_forced(const char *name, const char *env, enum rec_kfunc_mode want)
{
	char n[96];
	int ferr = -1;

	setenv("STKREC_KFUNC", env, 1);
	T_EQ_INT(name, (int)want, (int)rec_kfunc_mode("vfs_read", &ferr));
	snprintf(n, sizeof(n), "%s_no_fentry_error", name);
	T_EQ_INT(n, 0, ferr);
}

int main(void)
{
	test_names();
	check_forced("test_rec_kfunc_forced_multi", "kprobe.multi", REC_KFUNC_KPROBE_MULTI);
	check_forced("test_rec_kfunc_forced_kprobe", "kprobe", REC_KFUNC_KPROBE);
	check_forced("test_rec_kfunc_forced_fentry", "fentry", REC_KFUNC_FENTRY);
	unsetenv("STKREC_KFUNC");
	T_EXIT();
}
