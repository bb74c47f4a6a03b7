// SPDX-License-Identifier: MIT
/* emit.c: the emitter table, emitter choice and the model each emitter asks for. */
#include <errno.h>
#include <string.h>

#include "../report.h"

/* A new output format is one emit_<name>.c and one line here. */
const struct emitter *const rep_emitters[] = {
	&emit_stackcount,
	&emit_profile,
	&emit_folded,
	&emit_tree,
	&emit_json,
	&emit_snoop,
	NULL,
};

const struct emitter *rep_pick_emitter(const struct rep_opts *o, const struct rep_capture *c)
{
	bool profile = rep_capture_is_profile(c);

	if (o->json)
		return &emit_json;
	if (o->tree)
		return &emit_tree;
	if (o->folded)
		return &emit_folded;
	/* per-event captures print as stacksnoop unless a stack-list option asks for counts */
	if (c->has_events && !o->perpid && !o->delimited && !o->timestamp && !o->annotations &&
	    !o->address_stacks && o->by == REP_BY_NONE)
		return &emit_snoop;
	return profile ? &emit_profile : &emit_stackcount;
}

void rep_model_cfg_for(const struct emitter *e, const struct rep_opts *o,
		       const struct rep_capture *c, struct rep_model_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->profile = rep_capture_is_profile(c);
	cfg->offcpu = rep_capture_weight_us(c);
	cfg->kernel = !o->user_only;
	cfg->user = !o->kernel_only;
	e->configure(o, cfg->profile, cfg);
}

int rep_emit(FILE *out, const struct rep_capture *c, const struct rep_opts *o,
	     const struct emitter *e, struct rep_model *m)
{
	struct rep_model_cfg cfg;
	int err;

	rep_model_cfg_for(e, o, c, &cfg);
	err = rep_model__build(m, c, o, &cfg);
	if (err)
		return err;
	err = e->emit(out, m, c, o);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}

int rep_emit_many(FILE *out, const struct rep_capture *const *caps, const char *const *names,
		  uint32_t n, const struct rep_opts *o, const struct emitter *e, struct rep_model *m)
{
	struct rep_model_cfg cfg;
	int err;

	/* merged captures of mixed modes take the first one's layout */
	rep_model_cfg_for(e, o, caps[0], &cfg);
	err = rep_model__build_many(m, caps, names, n, o, &cfg);
	if (err)
		return err;
	err = e->emit(out, m, caps[0], o);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
