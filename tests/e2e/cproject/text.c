#include "gen.h"

GEN(text_)

int text_all(int x)
{
	return text_100(x) + text_233(x) + text_423(x);
}
