// SPDX-License-Identifier: MIT
/*
 * spyre-smi's process view on the host: fdinfo text as Linux 6.12's
 * drm_show_fdinfo() and the driver's show_fdinfo print it, and a fixture
 * /proc (made here, under a temporary directory) with shared and dup'ed
 * files, other drivers' files and non-device fds.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smi.h"
#include "tap.h"

#define CARD0 "0000:01:00.0"
#define CARD1 "0000:02:00.0"

/* What the driver prints for a file with 64.5 MiB of buffers (6.12). */
static const char spyre_fdinfo[] =
	"pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t101\n"
	"drm-driver:\tspyre\n"
	"drm-client-id:\t7\n"
	"drm-pdev:\t" CARD0 "\n"
	"drm-engine-queue0:\t0 ns\n"
	"drm-engine-queue1:\t123456 ns\n"
	"drm-engine-queue2:\t0 ns\n"
	"drm-engine-queue3:\t10 ns\n"
	"drm-total-memory:\t66048 KiB\n"
	"drm-shared-memory:\t0\n"
	"drm-active-memory:\t4 MiB\n";

TEST(sizes_in_every_unit_drm_prints)
{
	uint64_t b = 0;

	EXPECT_EQ(smi_parse_size("123", &b), 0);
	EXPECT_EQ(b, 123);
	EXPECT_EQ(smi_parse_size("\t4 KiB\n", &b), 0);
	EXPECT_EQ(b, 4096);
	EXPECT_EQ(smi_parse_size("5 MiB", &b), 0);
	EXPECT_EQ(b, 5ull << 20);
	EXPECT_EQ(smi_parse_size("1 GiB", &b), 0);
	EXPECT_EQ(b, 1ull << 30);
	EXPECT_EQ(smi_parse_size("0", &b), 0);
	EXPECT_EQ(b, 0);
	EXPECT_EQ(smi_parse_size("x", &b), -1);
	EXPECT_EQ(smi_parse_size("4 TiB", &b), -1);
	EXPECT_EQ(smi_parse_size("4 KiBs", &b), -1);
	EXPECT_EQ(smi_parse_size("99999999999999999999", &b), -1);
}

TEST(spyre_fdinfo_keys_are_read)
{
	struct smi_client c;

	ASSERT_EQ(smi_fdinfo_parse(spyre_fdinfo, &c), 1);
	EXPECT_EQ(c.client_id, 7);
	EXPECT_STREQ(c.pdev, CARD0);
	EXPECT_EQ(c.engine_ns[0], 0);
	EXPECT_EQ(c.engine_ns[1], 123456);
	EXPECT_EQ(c.engine_ns[3], 10);
	EXPECT_EQ(c.engine_total_ns, 123466);
	EXPECT_EQ(c.mem_total, 66048ull << 10);
	EXPECT_EQ(c.mem_shared, 0);
	EXPECT_EQ(c.mem_active, 4ull << 20);
}

TEST(other_drivers_and_partial_records_are_not_clients)
{
	struct smi_client c;

	EXPECT_EQ(smi_fdinfo_parse("drm-driver:\tamdgpu\ndrm-client-id:\t3\n", &c), 0);
	EXPECT_EQ(smi_fdinfo_parse("drm-driver:\tspyrex\ndrm-client-id:\t3\n", &c), 0);
	EXPECT_EQ(smi_fdinfo_parse("drm-driver:\tspyre\n", &c), 0);	/* no client id */
	EXPECT_EQ(smi_fdinfo_parse("pos:\t0\nflags:\t02\n", &c), 0);
	EXPECT_EQ(smi_fdinfo_parse("", &c), 0);
	/* Regions other than "memory" add up; unknown keys are ignored. */
	ASSERT_EQ(smi_fdinfo_parse("drm-driver: spyre\ndrm-client-id: 9\ndrm-total-vram: 1 MiB\n"
				   "drm-total-gtt: 2 MiB\ndrm-cycles-queue0: 5\n"
				   "drm-engine-capacity-queue0: 1\n", &c), 1);
	EXPECT_EQ(c.mem_total, 3ull << 20);
}

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

static void fd(int pid, int n, const char *target, const char *info)
{
	char path[PATH_MAX], rel[64];

	snprintf(path, sizeof(path), "%s/%d/fd/%d", root, pid, n);
	if (symlink(target, path)) {
		perror(path);
		exit(1);
	}
	snprintf(rel, sizeof(rel), "%d/fdinfo/%d", pid, n);
	put(rel, info);
}

static void process(int pid, const char *comm)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d", pid);
	mk(rel);
	snprintf(rel, sizeof(rel), "%d/fd", pid);
	mk(rel);
	snprintf(rel, sizeof(rel), "%d/fdinfo", pid);
	mk(rel);
	snprintf(rel, sizeof(rel), "%d/comm", pid);
	put(rel, comm);
}

static const char *client(int id, const char *pdev, unsigned long long engine_ns,
			  const char *mem)
{
	static char buf[8][512];
	static int next;
	char *b = buf[next++ % 8];

	snprintf(b, 512, "pos:\t0\ndrm-driver:\tspyre\ndrm-client-id:\t%d\ndrm-pdev:\t%s\n"
		 "drm-engine-queue0:\t%llu ns\ndrm-engine-queue1:\t0 ns\n"
		 "drm-total-memory:\t%s\ndrm-shared-memory:\t0\n", id, pdev, engine_ns, mem);
	return b;
}

static void fd_link_self(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/self", root);
	if (symlink("300", path)) {
		perror(path);
		exit(1);
	}
}

/*
 * pid 100: client 7 on card 0 twice (dup), client 8 on card 0;
 * pid 150: client 7 too (inherited), client 9 on card 1;
 * pid 200: an amdgpu file and a socket whose fdinfo claims spyre (never read);
 * pid 300: spyre-smi itself (skipped); "self" and "sys": not processes.
 */
static void make_fixture(void)
{
	strcpy(root, "/tmp/smi-fdinfo.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	mk("sys");
	process(100, "trainer\n");
	fd(100, 3, "/dev/accel/accel0", client(7, CARD0, 1000000, "64 MiB"));
	fd(100, 4, "/dev/accel/accel0", client(7, CARD0, 1000000, "64 MiB"));
	fd(100, 5, "/dev/accel/accel0", client(8, CARD0, 500, "4 KiB"));
	fd(100, 6, "/usr/lib/libc.so.6", "pos:\t0\n");
	process(150, "trainer-child\n");
	fd(150, 3, "/dev/accel/accel0", client(7, CARD0, 1000000, "64 MiB"));
	fd(150, 4, "/dev/accel/accel1", client(9, CARD1, 42, "1 MiB"));
	process(200, "game\n");
	fd(200, 3, "/dev/dri/renderD128", "drm-driver:\tamdgpu\ndrm-client-id:\t1\n");
	fd(200, 4, "socket:[1234]", client(11, CARD0, 1, "1 GiB"));
	process(300, "spyre-smi\n");
	fd(300, 3, "/dev/accel/accel0", client(12, CARD0, 1, "1 GiB"));
	fd_link_self();
}

static void remove_fixture(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
}

TEST(a_fixture_proc_is_scanned_one_client_each)
{
	struct smi_clients c = { 0 };
	const struct smi_client *x;

	make_fixture();
	ASSERT_EQ(smi_clients_scan(root, 300, &c), 0);
	EXPECT_EQ(c.n, 3);
	x = smi_clients_find(&c, CARD0, 7);
	ASSERT_TRUE(x);
	EXPECT_EQ(x->pid, 100);		/* shared with 150: the lower pid */
	EXPECT_EQ(x->mem_total, 64ull << 20);
	x = smi_clients_find(&c, CARD0, 8);
	ASSERT_TRUE(x);
	EXPECT_EQ(x->pid, 100);
	x = smi_clients_find(&c, CARD1, 9);
	ASSERT_TRUE(x);
	EXPECT_EQ(x->pid, 150);
	EXPECT_TRUE(!smi_clients_find(&c, CARD0, 11));	/* a socket */
	EXPECT_TRUE(!smi_clients_find(&c, CARD0, 12));	/* spyre-smi's own */
	EXPECT_TRUE(!smi_clients_find(&c, CARD1, 7));	/* ids are per card */
	EXPECT_EQ(smi_clients_scan("/nonexistent-proc", 0, &c), -1);
	smi_clients_free(&c);
}

TEST(processes_add_up_their_clients_and_busy_share)
{
	struct smi_clients before = { 0 }, now = { 0 };
	struct smi_proc *p;
	int n;

	ASSERT_EQ(smi_clients_scan(root, 300, &now), 0);
	ASSERT_EQ(smi_clients_scan(root, 300, &before), 0);
	/* Client 7 ran 0.5 s of the last second, client 8 not at all. */
	((struct smi_client *)smi_clients_find(&before, CARD0, 7))->engine_total_ns = 500000000;
	((struct smi_client *)smi_clients_find(&now, CARD0, 7))->engine_total_ns = 1000000000;
	n = smi_procs_of(root, &now, &before, 1000000000, CARD0, &p);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(p[0].pid, 100);
	EXPECT_STREQ(p[0].name, "trainer");
	EXPECT_EQ(p[0].clients, 2);
	EXPECT_EQ(p[0].mem_bytes, (64ull << 20) + 4096);
	EXPECT_EQ(p[0].engine_ns, 1000000000 + 500);
	EXPECT_TRUE(p[0].busy_pct > 49.9 && p[0].busy_pct < 50.1);
	free(p);
	n = smi_procs_of(root, &now, NULL, 0, CARD1, &p);
	ASSERT_EQ(n, 1);
	EXPECT_STREQ(p[0].name, "trainer-child");
	EXPECT_TRUE(p[0].busy_pct < 0);		/* no earlier sample: unknown */
	free(p);
	n = smi_procs_of(root, &now, &before, 1000000000, "0000:09:00.0", &p);
	EXPECT_EQ(n, 0);
	free(p);
	smi_clients_free(&before);
	smi_clients_free(&now);
	remove_fixture();
}

TAP_MAIN()
