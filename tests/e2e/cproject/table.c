#include "gen.h"

GEN(table_)

int table_all(int x)
{
	return table_100(x) + table_233(x) + table_423(x);
}
