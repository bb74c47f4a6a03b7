#include <stdio.h>

int table_all(int x);
int sort_all(int x);
int text_all(int x);

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", table_all(argc) + sort_all(argc) + text_all(argc));
	return 0;
}
