// SPDX-License-Identifier: MIT
/* sym_demangle.c: C++ and Rust symbol names made readable, with libiberty (see sym_internal.h). */
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

/*
 * Longest name tried: libiberty takes time and memory in proportion to the name (and refuses
 * C++ names over about 1000 bytes anyway), and a capture may hold names of megabytes.
 */
#define DEMANGLE_MAX 4096u

/* A PLT stub's name: the function's demangled, then CAP_SYMBOL_PLT, as perf prints it. */
static char *demangle_plt(const char *name, size_t len)
{
	char *base = strndup(name, len - strlen(CAP_SYMBOL_PLT)), *dem, *out = NULL;

	dem = base ? sym_demangle(base) : NULL;
	if (dem && asprintf(&out, "%s" CAP_SYMBOL_PLT, dem) < 0)
		out = NULL;
	free(dem);
	free(base);
	return out;
}

char *sym_demangle(const char *name)
{
	if (cap_symbol_is_plt(name))
		return demangle_plt(name, strlen(name));
	/*
	 * Only names that look mangled: C++ (_Z, and __Z as some toolchains emit it) and Rust v0
	 * (_R); legacy Rust names are C++-shaped (_ZN...17h<hash>E). Without this filter the
	 * automatic style would also try other languages' schemes on plain C names.
	 */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R' &&
			       !(name[1] == '_' && name[2] == 'Z')))
		return NULL;
	if (strnlen(name, DEMANGLE_MAX + 1) > DEMANGLE_MAX)
		return NULL;
	if (name[1] == '_')
		name++;
	/*
	 * No style bit: libiberty's automatic style tries Rust first (legacy Rust symbols are also
	 * valid Itanium names, and would come out with their hash as a path element), then the
	 * Itanium C++ ABI. DMGL_PARAMS|DMGL_ANSI: argument types and cv-qualifiers, as c++filt
	 * prints them. Rust's hash suffix is dropped (no DMGL_VERBOSE), as rustfilt does.
	 */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}
