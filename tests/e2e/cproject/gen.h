/*
 * gen.h: GEN(prefix) defines 64 small functions and a table of them, so that each file gives
 * cc1 some work at -O2 (tens of milliseconds) for a handful of lines.
 */
#define GEN1(p, n)							\
	int p##n(int x)							\
	{								\
		int s = x;						\
		for (int i = 0; i < (x & 15) + n; i++)			\
			s = s * 31 + (i ^ n) + (s >> 3);		\
		return s % 9973;					\
	}
#define GEN4(p, n) GEN1(p, n##0) GEN1(p, n##1) GEN1(p, n##2) GEN1(p, n##3)
#define GEN16(p, n) GEN4(p, n##0) GEN4(p, n##1) GEN4(p, n##2) GEN4(p, n##3)
#define GEN(p) GEN16(p, 1) GEN16(p, 2) GEN16(p, 3) GEN16(p, 4)
