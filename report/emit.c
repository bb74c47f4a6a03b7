// SPDX-License-Identifier: MIT
/* emit.c: the emitter table, emitter choice and what every layout shares (-T headings). */
#include <errno.h>
#include <time.h>

#include "report.h"

/* A new output format is one emit_<name>.c and one line here. */
const struct emitter *const rep_emitters[] = {
	&emit_stackcount,
	&emit_profile,
	&emit_folded,
	&emit_tree,
	NULL,
};

const struct emitter *rep_pick_emitter(const struct rep_opts *o, bool profile)
{
	if (o->tree)
		return &emit_tree;
	if (o->folded)
		return &emit_folded;
	return profile ? &emit_profile : &emit_stackcount;
}

void emit_section_time(char *buf, size_t len, const struct rep_capture *c, uint64_t end_ns)
{
	int64_t wall;
	time_t t;

	struct tm tm;

	/* without the clock pair the monotonic time is the best we have */
	if (!rep_capture_wall_ns(c, end_ns, &wall))
		wall = (int64_t)end_ns;
	t = wall / 1000000000;
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "??:??:??");
}

int rep_emit(FILE *out, const struct rep_capture *c, const struct rep_opts *o,
	     const struct emitter *e, struct rep_model *m)
{
	struct rep_model_cfg cfg = { 0 };
	int err;

	cfg.profile = rep_capture_is_profile(c);
	cfg.kernel = !o->user_only;
	cfg.user = !o->kernel_only;
	e->configure(o, cfg.profile, &cfg);
	err = rep_model__build(m, c, o, &cfg);
	if (err)
		return err;
	err = e->emit(out, m, c, o);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
