#include "gen.h"

GEN(sort_)

int sort_all(int x)
{
	return sort_100(x) + sort_233(x) + sort_423(x);
}
