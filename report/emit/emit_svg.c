// SPDX-License-Identifier: MIT
/*
 * emit_svg.c: --svg OUT.svg, an interactive flame graph written by stkreport itself (stkreport(1),
 * "Flame graphs"). The stacks' folded paths (emit_folded_path(): [group;]comm;user...;kernel...,
 * without the empty comm field of a counting capture's -f) merge into a tree under a root
 * "all"; each node is one rectangle, its width proportional to its count, root at the bottom,
 * children in name order (as flamegraph.pl draws them). Each frame is
 *
 *   <g class="f" data-s="START" data-n="COUNT" data-d="DEPTH"><title>NAME (N samples, P%)</title>
 *   <rect .../><text ...>NAME, cut to the width</text></g>
 *
 * (START: samples left of the frame). Colours are deterministic: a hash of the name picks a warm
 * colour, a cool one for kernel frames, a green one for interpreter (Python) frames. With --diff the width is AFTER's count and the colour the
 * change against BEFORE (red grew, blue shrank, saturation by the change over the largest
 * change), the title adds "; before N".
 *
 * The embedded script (our own) gives what flamegraph.pl's output offers: the title of the frame
 * under the pointer at the bottom, click to zoom into a frame (its ancestors stay, greyed),
 * "Reset Zoom", and "Search" (a regular expression; matches turn magenta, the share of samples
 * under them is shown). Frames narrower than 0.1 px are left out, as flamegraph.pl does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../report.h"

#define DEFAULT_W 1200.0	/* flamegraph.pl's --width */
#define XPAD 10.0
#define FRAME_H 16.0
#define TOP_PAD 50.0	/* title and controls */
#define BOTTOM_PAD 30.0	/* details line */
#define FONT 12.0
#define CHAR_W (FONT * 0.59)
#define MIN_W 0.1

struct snode {
	uint32_t parent;
	uint32_t name;		/* string id */
	uint32_t depth;
	bool kernel;
	bool python;
	uint64_t count;		/* width: samples (AFTER's with --diff) */
	double before;		/* --diff: BEFORE's samples, scaled */
	uint64_t start;		/* samples left of the node, at its depth */
};

struct svg {
	struct snode *nodes;	/* [0] is "all" */
	uint32_t n, cap;
	struct rep_htab index;
	struct rep_strtab names;
	bool diff;
	uint32_t max_depth;
	double width;		/* --width (pixels) */
	bool inverted;		/* --inverted: icicle graph, the root on top */
	const char *title;	/* --title, or NULL: the default of the kind */
	struct rep_charge charge;	/* nodes (and layout()'s arrays), from the run's budget */
};

struct child_key {
	const struct svg *s;
	uint32_t parent, name;
};

static bool child_eq(const void *ctx, uint32_t val)
{
	const struct child_key *k = ctx;

	return k->s->nodes[val].parent == k->parent && k->s->nodes[val].name == k->name;
}

static int64_t child(struct svg *s, uint32_t parent, const struct emit_path_elem *e,
		     bool python)
{
	int64_t name = rep_strtab__intern(&s->names, e->name);
	struct child_key key = { s, parent, 0 };
	uint64_t h;
	uint32_t id;
	int err;

	if (name < 0)
		return name;
	key.name = name;
	h = rep_hash_u64(rep_hash_u64(0, parent), name);
	if (rep_htab__find(&s->index, h, child_eq, &key, &id))
		return id;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 256;
		struct snode *v;

		if (rep_charge__take(&s->charge, (uint64_t)(cap - s->cap) *
				     (sizeof(*v) + 2 * sizeof(uint32_t))))
			return -EFBIG;
		v = realloc(s->nodes, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->nodes = v;
		s->cap = cap;
	}
	err = rep_htab__insert(&s->index, h, s->n);
	if (err)
		return err;
	s->nodes[s->n] = (struct snode){ .parent = parent, .name = name,
					 .depth = s->nodes[parent].depth + 1,
					 .kernel = e->kernel, .python = python };
	if (s->nodes[s->n].depth > s->max_depth)
		s->max_depth = s->nodes[s->n].depth;
	return s->n++;
}

static int svg_init(struct svg *s, bool diff, const struct rep_opts *o)
{
	int64_t name;

	memset(s, 0, sizeof(*s));
	s->diff = diff;
	s->width = o->svg_width ? o->svg_width : DEFAULT_W;
	s->inverted = o->svg_inverted;
	s->title = o->svg_title;
	s->charge.budget = s->index.charge.budget = o->memory;
	rep_strtab__set_budget(&s->names, o->memory);
	if (rep_charge__take(&s->charge, 256 * (sizeof(*s->nodes) + 2 * sizeof(uint32_t))))
		return -EFBIG;
	s->nodes = calloc(256, sizeof(*s->nodes));
	name = rep_strtab__intern(&s->names, "all");
	if (!s->nodes || name < 0)
		return name < 0 ? name : -ENOMEM;
	s->cap = 256;
	s->n = 1;
	s->nodes[0].name = name;
	return 0;
}

static void svg_clear(struct svg *s)
{
	free(s->nodes);
	rep_htab__clear(&s->index);
	rep_strtab__clear(&s->names);
	rep_charge__clear(&s->charge);
}

static void node_add(struct snode *nd, uint64_t count, bool before, double factor)
{
	if (before)
		nd->before += (double)count * factor;
	else
		nd->count = rep_count_add(nd->count, count, NULL);
}

/* Add every stack of m: counts (before: false) or BEFORE's counts times factor. */
static int svg_add_model(struct svg *s, const struct rep_model *m, const struct rep_opts *o,
			 bool before, double factor)
{
	/* -f prints stackcount's empty comm field as bcc does; the graph draws no nameless bar */
	int64_t skip = emit_folded_blank_comm(m, o) ? 0 : -1;
	struct emit_path_elem *path = NULL;
	uint32_t i, cap = 0;
	int64_t n, j, at;
	int err = 0;

	for (i = 0; i < m->nstacks && !err; i++) {
		const struct rep_stack *st = &m->stacks[i];

		n = emit_folded_path(m, o, st, &path, &cap);
		err = n < 0 ? (int)n : 0;
		/* the stack counts for "all" (node 0) and for every node on its path */
		if (!err)
			node_add(&s->nodes[0], st->count, before, factor);
		for (j = 0, at = 0; j < n && !err; j++) {
			if (j == skip)
				continue;
			at = child(s, at, &path[j], rep_model_frame_python(m, path[j].frame));
			if (at < 0)
				err = at;
			else
				node_add(&s->nodes[at], st->count, before, factor);
		}
	}
	free(path);
	return err;
}

/* ---- layout -------------------------------------------------------------------------------- */

static int order_cmp(const void *a, const void *b, void *ctx)
{
	const struct svg *s = ctx;
	const struct snode *x = &s->nodes[*(const uint32_t *)a], *y = &s->nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(rep_strtab__str(&s->names, x->name), rep_strtab__str(&s->names, y->name));
}

/* start of every node: its parent's start plus the counts of the siblings before it */
static int layout(struct svg *s)
{
	uint32_t *order = malloc(s->n * sizeof(*order)), *next = calloc(s->n, sizeof(*next)), i;

	if (!order || !next) {
		free(order);
		free(next);
		return -ENOMEM;
	}
	for (i = 0; i < s->n; i++)
		order[i] = i;
	/* a node is created before its children, so sorting by parent id places every node
	 * before its children: parents' starts are known when their children are placed */
	qsort_r(order + 1, s->n - 1, sizeof(*order), order_cmp, s);
	for (i = 1; i < s->n; i++) {
		struct snode *c = &s->nodes[order[i]], *p = &s->nodes[c->parent];

		/* next[p]: samples of p's children placed so far */
		c->start = p->start + next[c->parent];
		next[c->parent] = rep_count_add(next[c->parent], c->count, NULL);
	}
	free(order);
	free(next);
	return 0;
}

/* ---- writing ------------------------------------------------------------------------------- */

static void xml_text(FILE *out, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t shown = 0;

	while (*s && shown < max) {
		int n = 1;

		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			n = emit_utf8_len(s);
			/* XML 1.0 allows no control characters: write what cannot be written as ? */
			if (!n || *s < 0x20) {
				fputc('?', out);
				n = 1;
			} else {
				fwrite(s, 1, n, out);
			}
		}
		s += n;
		shown++;
	}
}

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void colour(const struct svg *s, const struct snode *n, double max_delta, char *buf,
		   size_t len)
{
	const char *name = rep_strtab__str(&s->names, n->name);
	uint32_t h = hash_name(name);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;

	if (s->diff) {
		double d = (double)n->count - n->before;
		int c = max_delta > 0 ? (int)(210 * (1 - (d < 0 ? -d : d) / max_delta) + 0.5) : 210;

		if (d > 0)
			snprintf(buf, len, "rgb(255,%d,%d)", c, c);
		else if (d < 0)
			snprintf(buf, len, "rgb(%d,%d,255)", c, c);
		else
			snprintf(buf, len, "rgb(250,250,250)");
	} else if (n->kernel) {
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(50 + 60 * v1), (int)(160 + 60 * v2),
			 (int)(200 + 55 * v3));
	} else if (n->python) {
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(40 + 60 * v1), (int)(180 + 60 * v2),
			 (int)(50 + 60 * v3));
	} else {
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(205 + 50 * v3), (int)(230 * v1),
			 (int)(55 * v2));
	}
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W = %.1f, XPAD = %.1f, CHAR = %.3f, TOTAL = %" PRIu64 ";\n"
	"var frames = [], details, matched, unzoom, zoomed = null;\n"
	"function nameOf(g) {\n"
	"  var t = g.querySelector('title').textContent;\n"
	"  return t.substring(0, t.lastIndexOf(' ('));\n"
	"}\n"
	"function fit(g, x, w) {\n"
	"  var r = g.querySelector('rect'), t = g.querySelector('text'), name = nameOf(g);\n"
	"  var room = Math.floor((w - 6) / CHAR);\n"
	"  r.setAttribute('x', x.toFixed(1));\n"
	"  r.setAttribute('width', w.toFixed(1));\n"
	"  t.setAttribute('x', (x + 3).toFixed(1));\n"
	"  t.textContent = room < 3 ? '' : name.length <= room ? name :\n"
	"    name.substring(0, room - 2) + '..';\n"
	"}\n"
	"function zoom(g) {\n"
	"  var s = +g.dataset.s, n = +g.dataset.n, d = +g.dataset.d, scale = (W - 2 * XPAD) / n;\n"
	"  zoomed = g;\n"
	"  unzoom.style.opacity = 1;\n"
	"  frames.forEach(function (f) {\n"
	"    var fs = +f.dataset.s, fn = +f.dataset.n, fd = +f.dataset.d;\n"
	"    var inside = fd >= d && fs >= s && fs + fn <= s + n;\n"
	"    var above = fd < d && fs <= s && fs + fn >= s + n;\n"
	"    if (inside && fn * scale >= 0.1) {\n"
	"      f.style.display = ''; f.style.opacity = 1;\n"
	"      fit(f, XPAD + (fs - s) * scale, fn * scale);\n"
	"    } else if (above) {\n"
	"      f.style.display = ''; f.style.opacity = 0.5;\n"
	"      fit(f, XPAD, W - 2 * XPAD);\n"
	"    } else {\n"
	"      f.style.display = 'none';\n"
	"    }\n"
	"  });\n"
	"}\n"
	"function resetZoom() {\n"
	"  zoom(frames[0]);\n"
	"  zoomed = null;\n"
	"  unzoom.style.opacity = 0;\n"
	"}\n"
	"function ask() {\n"
	"  var term = prompt('Search frames (regular expression), empty to clear', '');\n"
	"  if (term !== null) search(term);\n"
	"}\n"
	"function search(term) {\n"
	"  var re, spans = [], covered = 0, end = -1;\n"
	"  try { re = new RegExp(term); } catch (e) { alert(e.message); return; }\n"
	"  frames.forEach(function (f) {\n"
	"    var r = f.querySelector('rect');\n"
	"    r.setAttribute('fill', r.dataset.fill);\n"
	"    if (term !== '' && re.test(nameOf(f))) {\n"
	"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"      spans.push([+f.dataset.s, +f.dataset.s + +f.dataset.n]);\n"
	"    }\n"
	"  });\n"
	"  /* samples under any match, each counted once: union of the spans */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  spans.forEach(function (p) {\n"
	"    if (p[0] >= end) { covered += p[1] - p[0]; end = p[1]; }\n"
	"    else if (p[1] > end) { covered += p[1] - end; end = p[1]; }\n"
	"  });\n"
	"  matched.textContent = term === '' ? '' :\n"
	"    'Matched: ' + (100 * covered / TOTAL).toFixed(2) + '%%';\n"
	"}\n"
	"function init() {\n"
	"  details = document.getElementById('details');\n"
	"  matched = document.getElementById('matched');\n"
	"  unzoom = document.getElementById('unzoom');\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  frames.forEach(function (f) {\n"
	"    var r = f.querySelector('rect');\n"
	"    r.dataset.fill = r.getAttribute('fill');\n"
	"    f.addEventListener('click', function () { zoom(f); });\n"
	"    f.addEventListener('mouseover', function () {\n"
	"      details.textContent = f.querySelector('title').textContent;\n"
	"    });\n"
	"    f.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  });\n"
	"  unzoom.addEventListener('click', resetZoom);\n"
	"  document.getElementById('search').addEventListener('click', ask);\n"
	"  /* Ctrl-F (Cmd-F) searches frames, as in flamegraph.pl; ?s=REGEX searches on load */\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {\n"
	"      e.preventDefault();\n"
	"      ask();\n"
	"    }\n"
	"  });\n"
	"  var q = new URLSearchParams(window.location.search).get('s');\n"
	"  if (q) search(q);\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

static void write_frame(FILE *out, const struct svg *s, const struct snode *n, double height,
			double max_delta)
{
	const char *name = rep_strtab__str(&s->names, n->name);
	double total = (double)s->nodes[0].count;
	double x = XPAD + (double)n->start / total * (s->width - 2 * XPAD);
	double w = (double)n->count / total * (s->width - 2 * XPAD);
	double y = s->inverted ? TOP_PAD + n->depth * FRAME_H :
				 height - BOTTOM_PAD - (n->depth + 1) * FRAME_H;
	long room = (long)((w - 6) / CHAR_W);
	size_t len = strlen(name);
	char fill[32];

	colour(s, n, max_delta, fill, sizeof(fill));
	fprintf(out, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\" data-d=\"%" PRIu32
		"\"><title>", n->start, n->count, n->depth);
	xml_text(out, name, SIZE_MAX);
	fprintf(out, " (%" PRIu64 " samples, %.2f%%", n->count, 100.0 * (double)n->count / total);
	if (s->diff)
		fprintf(out, "; before %.0f", n->before);
	fprintf(out, ")</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.1f\" y=\"%.1f\">", x, y, w, FRAME_H - 1,
		fill, x + 3, y + FRAME_H - 5);
	/* the name, or its first characters and "..", when it fits at all */
	if (room >= 3 && (size_t)room >= len) {
		xml_text(out, name, SIZE_MAX);
	} else if (room >= 3) {
		xml_text(out, name, room - 2);
		fputs("..", out);
	}
	fputs("</text></g>\n", out);
}

/* The document of s, laid out already (layout()). Returns 0 or -EIO (a write error on out). */
static int svg_write(const struct svg *s, FILE *out)
{
	const char *title = s->title ? s->title : s->diff ? "Differential Flame Graph" : "Flame Graph";
	double height = (s->max_depth + 1) * FRAME_H + TOP_PAD + BOTTOM_PAD, max_delta = 0;
	double total = (double)s->nodes[0].count;
	uint32_t i;

	/* the root's change is the change of the totals: leave it out of the scale */
	for (i = 1; i < s->n; i++) {
		double d = (double)s->nodes[i].count - s->nodes[i].before;

		if ((d < 0 ? -d : d) > max_delta)
			max_delta = d < 0 ? -d : d;
	}
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", s->width, height, s->width, height);
	fprintf(out, script, s->width, XPAD, CHAR_W, s->nodes[0].count);
	fprintf(out, "<style>text { font-family: Verdana, sans-serif; font-size: %.0fpx; "
		"fill: rgb(0,0,0); } g.f:hover rect { stroke: black; stroke-width: 0.5; } "
		"g.f { cursor: pointer; } #unzoom, #search { cursor: pointer; }</style>\n", FONT);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(248,248,248)\"/>\n",
		s->width, height);
	fprintf(out, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" "
		"style=\"font-size: 17px\">", s->width / 2);
	xml_text(out, title, SIZE_MAX);	/* --title is the user's text */
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" x=\"%.1f\" y=\"24\" style=\"opacity: 0\">Reset Zoom</text>\n",
		XPAD);
	fprintf(out, "<text id=\"search\" x=\"%.1f\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		s->width - XPAD);
	fprintf(out, "<text id=\"matched\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"> </text>\n",
		s->width - XPAD, height - 10);
	fprintf(out, "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n", XPAD, height - 10);
	for (i = 0; i < s->n && total > 0; i++)
		if ((double)s->nodes[i].count / total * (s->width - 2 * XPAD) >= MIN_W)
			write_frame(out, s, &s->nodes[i], height, max_delta);
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}

/*
 * s laid out, then written to out (flushed), or when out is NULL to a file created at path
 * (cap_create_output()) only then: a graph that fails to lay out leaves no file. 0, -ENOMEM,
 * -EIO or the file's error.
 */
static int svg_output(struct svg *s, FILE *out, const char *path)
{
	int err = layout(s);

	if (err)
		return err;
	if (out) {
		err = svg_write(s, out);
		return !err && fflush(out) ? -EIO : err;
	}
	out = cap_fopen_output(path, false);
	if (!out)
		return -errno;
	err = svg_write(s, out);
	if (fclose(out) && !err)
		err = -errno;
	return err;
}

/* The differential flame graph into s (see the top of the file). */
static int svg_diff(struct svg *s, const struct rep_model *before, const struct rep_model *after,
		    const struct rep_opts *o, double factor)
{
	int err = svg_init(s, true, o);

	if (!err)
		err = svg_add_model(s, after, o, false, 1);
	if (!err)
		err = svg_add_model(s, before, o, true, factor);
	return err;
}

int emit_svg(FILE *out, const char *path, const struct rep_model *m, const struct rep_opts *o)
{
	struct svg s = { 0 };
	int err = svg_init(&s, false, o);

	if (!err)
		err = svg_add_model(&s, m, o, false, 1);
	if (!err)
		err = svg_output(&s, out, path);
	svg_clear(&s);
	return err;
}

int emit_svg_diff(FILE *out, const char *path, const struct rep_model *before,
		  const struct rep_model *after, const struct rep_opts *o, double factor)
{
	struct svg s = { 0 };
	int err = svg_diff(&s, before, after, o, factor);

	if (!err)
		err = svg_output(&s, out, path);
	svg_clear(&s);
	return err;
}
