// SPDX-License-Identifier: MIT
/*
 * emit_json.c: --json, the stacks as data (stkreport(1), "JSON"). One object, one stack per line,
 * in the order of the stack list (least to most frequent):
 *
 *   {"stacks": [
 *   {"count": 5, "pid": 100, "comm": "golden", "frames": [FRAME, ...]},
 *   ...
 *   ]}
 *
 * "pid" and "comm" appear when the layout keys on them (-P, profile captures), "time" with -T,
 * "group" with --by, "kernel_stack_lost"/"user_stack_lost" when true. Frames are leaf first,
 * kernel frames then user frames, each
 *
 *   {"name": "f", "offset": 16, "module": "libc.so.6", "file": null, "line": null,
 *    "inlined": false, "kernel": false}
 *
 * with "reason" (why it has no name) instead of a null name's silence. An interpreter frame
 * (Python, format.md 4.11) says "lang": "python" last; its offset is its instruction's (null
 * before the first), its file and line the code's. Frames are keyed exactly
 * (every field), so stacks that differ in an offset stay apart. Strings are escaped per RFC 8259;
 * bytes that are not UTF-8 become U+FFFD.
 */
#include <inttypes.h>

#include "../report.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0. */
int emit_utf8_len(const unsigned char *s)
{
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong 3- and 4-byte forms, surrogates, beyond U+10FFFF */
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void emit_json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*s) {
		int n;

		switch (*s) {
		case '"': fputs("\\\"", out); s++; continue;
		case '\\': fputs("\\\\", out); s++; continue;
		case '\n': fputs("\\n", out); s++; continue;
		case '\t': fputs("\\t", out); s++; continue;
		case '\r': fputs("\\r", out); s++; continue;
		}
		if (*s < 0x20) {
			fprintf(out, "\\u%04x", *s++);
			continue;
		}
		n = emit_utf8_len(s);
		if (!n) {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		fwrite(s, 1, n, out);
		s += n;
	}
	fputc('"', out);
}

static void json_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	/* keyed like the stack list of the capture's mode, frames on every field */
	cfg->key_pid = profile || o->perpid;
	cfg->key_comm = profile || o->perpid;
	cfg->addr_column = false;
	cfg->exact = true;
}

static void json_frame(FILE *out, const struct rep_model *m, uint32_t id, bool kernel)
{
	const struct rep_frame *f = rep_model_frame(m, id);
	bool py = f->flags & REP_FRAME_F_PYTHON;

	fputs("{\"name\": ", out);
	emit_json_string(out, f->name);
	if (py && f->offset == CAP_CODE_OFF_NONE)
		fputs(", \"offset\": null, \"module\": ", out);
	else
		fprintf(out, ", \"offset\": %" PRIu64 ", \"module\": ", f->offset);
	emit_json_string(out, f->module);
	fputs(", \"file\": ", out);
	emit_json_string(out, f->file);
	if (f->line)
		fprintf(out, ", \"line\": %" PRIu32, f->line);
	else
		fputs(", \"line\": null", out);
	fprintf(out, ", \"inlined\": %s, \"kernel\": %s",
		f->flags & REP_FRAME_F_INLINED ? "true" : "false", kernel ? "true" : "false");
	if (!f->name) {
		fputs(", \"reason\": ", out);
		emit_json_string(out, sym_reason_name(f->reason));
	}
	if (py)
		fputs(", \"lang\": \"python\"", out);
	fputc('}', out);
}

static void json_stack(FILE *out, const struct rep_model *m, const struct rep_opts *o,
		       const struct rep_stack *st)
{
	char t[32];
	uint32_t i;

	fprintf(out, "{\"count\": %" PRIu64, st->count);
	if (m->cfg.key_pid)
		fprintf(out, ", \"pid\": %" PRIu32, st->pid);
	if (m->cfg.key_comm) {
		fputs(", \"comm\": ", out);
		emit_json_string(out, rep_strtab__str(&m->strs, st->comm));
	}
	if (o->timestamp) {
		rep_model_section_time(m, st->section, t, sizeof(t));
		fprintf(out, ", \"time\": \"%s\"", t);
	}
	if (o->by != REP_BY_NONE) {
		fputs(", \"group\": ", out);
		emit_json_string(out, rep_strtab__str(&m->strs, m->groups[st->group].label));
	}
	if (st->flags & REP_STACK_F_KLOST)
		fputs(", \"kernel_stack_lost\": true", out);
	if (st->flags & REP_STACK_F_ULOST)
		fputs(", \"user_stack_lost\": true", out);
	fputs(", \"frames\": [", out);
	for (i = 0; i < st->nk + st->nu; i++) {
		if (i)
			fputs(", ", out);
		json_frame(out, m, st->frames[i], i < st->nk);
	}
	fputs("]}", out);
}

static int json_emit(FILE *out, const struct rep_model *m, const struct rep_opts *o)
{
	uint32_t i;

	fputs("{\"stacks\": [\n", out);
	for (i = 0; i < m->nstacks; i++) {
		json_stack(out, m, o, &m->stacks[i]);
		fputs(i + 1 < m->nstacks ? ",\n" : "\n", out);
	}
	fputs("]}\n", out);
	return 0;
}

const struct emitter emit_json = {
	.name = "json",
	.configure = json_configure,
	.emit = json_emit,
};
