/* test_tmpdir.h - a private temporary directory per cmocka test binary,
 * shared by the .sbt tests. Include after <cmocka.h>. */
#ifndef TEST_TMPDIR_H
#define TEST_TMPDIR_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define SAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAN 1
#endif
#endif
#ifndef SAN
#define SAN 0
#endif

static char dir[64];

/* DIR/name; four buffers so a call can hold several paths at once */
static const char *tpath(const char *name)
{
	static char p[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static int tmpdir_setup(const char *prefix)
{
	snprintf(dir, sizeof(dir), "/tmp/%s.XXXXXX", prefix);
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}
#endif
