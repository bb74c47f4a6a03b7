// SPDX-License-Identifier: MIT
/*
 * wl_plt N: compares two strings N times through memcmp's PLT stub: main -> wl_outer ->
 * wl_middle -> memcmp@plt -> memcmp (tests/e2e/plt.sh puts a uprobe on the stub, memcmp@plt:
 * its N events must be named so, not after the symbol before the PLT, _init, nor [unknown] when
 * the binary is stripped). C++ built as release C++ is (the Makefile's nofp/).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {

__attribute__((noinline)) int wl_middle(const std::string &a, const std::string &b)
{
	int r = memcmp(a.data(), b.data(), a.size() < b.size() ? a.size() : b.size());

	__asm__ __volatile__("");	/* the call above is not a tail call */
	return r;
}

__attribute__((noinline)) long wl_outer(unsigned long n, const std::string &a, const std::string &b)
{
	long sum = 0;

	for (unsigned long i = 0; i < n; i++)
		sum += wl_middle(a, b);
	return sum;
}

}

int main(int argc, char **argv)
{
	std::string a(argc > 2 ? argv[2] : "abcdefgh"), b("abcdefgx");
	char *end;
	unsigned long n;

	if (argc < 2 || !(n = strtoul(argv[1], &end, 10)) || *end) {
		fprintf(stderr, "usage: wl_plt N\n");
		return 2;
	}
	return wl_outer(n, a, b) < 0 ? 0 : 1;
}
