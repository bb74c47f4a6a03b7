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

int rep_emit__begin(struct rep_emit_run *r, FILE *out, const struct emitter *e,
		    const struct rep_capture *first, const struct rep_opts *o, struct rep_model *m)
{
	struct rep_model_cfg cfg;
	int err;

	*r = (struct rep_emit_run){ .out = out, .e = e, .o = o, .m = m };
	rep_model_cfg_for(e, o, first, &cfg);
	err = rep_model__begin(m, o, &cfg);
	if (err || !e->stream_new)
		return err;
	r->stream = e->stream_new(out, o);
	return r->stream ? 0 : -errno;
}

int rep_emit__add(struct rep_emit_run *r, const struct rep_capture *c, const char *name)
{
	int err = rep_model__add(r->m, c, name);

	if (!err && r->stream)
		err = r->e->stream_add(r->stream, c);
	return err;
}

int rep_emit__finish(struct rep_emit_run *r, int err)
{
	if (!err)
		err = rep_model__finish(r->m);
	if (!err)
		err = r->e->emit(r->out, r->m, r->o);
	if (r->stream)
		r->e->stream_free(r->stream);
	r->stream = NULL;
	if (!err && (fflush(r->out) || ferror(r->out)))
		err = -EIO;
	return err;
}

int rep_emit(FILE *out, const struct rep_capture *c, const struct rep_opts *o,
	     const struct emitter *e, struct rep_model *m)
{
	struct rep_emit_run r;
	int err;

	err = rep_emit__begin(&r, out, e, c, o, m);
	if (!err)
		err = rep_emit__add(&r, c, o->input ? o->input : "?");
	return rep_emit__finish(&r, err);
}
