// SPDX-License-Identifier: MIT
/*
 * Eight cards (scripts/vm-run.sh --cards 8; 8 per I/O drawer on the real
 * system) and peer copies between them: every card is found, numbered by
 * PCI address and reachable through SPYRE_VISIBLE_DEVICES; one program
 * opens all of them and copies a pattern around the ring 0 -> 1 -> ... ->
 * 7 -> 0 with spyre_memcpy_peer_async (all hops queued before any wait,
 * sizes that are not a multiple of the chunk, odd offsets) and with the
 * blocking call the other way round, small and large copies (1 MiB to
 * 16 MiB chunks); stream and event order; the same
 * open, two opens of one card; then 2 processes per card copying to the
 * next card and back for a bounded time, every result checked.
 *
 * usage: test_peer [CARDS]   (default: what is there, at least 2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre/spyre.h"
#include "tap.h"

#define MAXC		8
#define RING_BYTES	((12u << 20) + 12345)	/* three chunks and a bit */
#define PROCS_PER_CARD	2
#define STRESS_SECONDS	8

static int ncards, want_cards;
static spyre_device *dev[MAXC];
static spyre_stream *str[MAXC];
static spyre_buffer *buf[MAXC];
static uint8_t *pattern, *back;

/* Card @k of the ring, for fewer cards than eight too. */
#define C(k) ((k) % ncards)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + (i >> 10) * 7 + seed * 29) ^ (seed >> 3));
}

/* Offset of card @k's copy in its buffer: odd, different on every card. */
static uint64_t off_of(int k)
{
	return (uint64_t)k * 4093 + 1;
}

#define OK(call)								\
	do {									\
		spyre_status st_ = (call);					\
		if (st_ != SPYRE_SUCCESS) {					\
			TAP_FAIL_("%s: %s: %s", #call, spyre_strerror(st_),	\
				  spyre_last_error_detail());			\
			return;							\
		}								\
	} while (0)

TEST(every_card_is_found_and_opened)
{
	spyre_device_properties p[MAXC];

	OK(spyre_device_count(&ncards));
	if (want_cards)
		EXPECT_EQ(ncards, want_cards);
	ASSERT_TRUE(ncards >= 2);
	if (ncards > MAXC)
		ncards = MAXC;
	for (int i = 0; i < ncards; i++) {
		OK(spyre_device_open(i, &dev[i]));
		OK(spyre_device_get_properties(dev[i], &p[i]));
		OK(spyre_stream_create(dev[i], SPYRE_STREAM_PRIORITY_NORMAL, &str[i]));
		OK(spyre_buffer_alloc(dev[i], RING_BYTES + off_of(MAXC) + 4096, 0, &buf[i]));
		if (i)
			EXPECT_TRUE(strcmp(p[i - 1].pci_address, p[i].pci_address) < 0);
	}
	printf("# %d cards: %s ... %s\n", ncards, p[0].pci_address, p[ncards - 1].pci_address);
}

/* Each card alone through SPYRE_VISIBLE_DEVICES (a child: the variable is
 * read once per process): index i names the i-th card's PCI address. */
TEST(visible_devices_picks_any_card)
{
	for (int i = 0; i < ncards; i++) {
		spyre_device_properties p;
		char idx[16];
		pid_t pid;
		int status;

		OK(spyre_device_get_properties(dev[i], &p));
		snprintf(idx, sizeof(idx), "%d", i);
		pid = fork();
		ASSERT_TRUE(pid >= 0);
		if (pid == 0) {
			setenv("SPYRE_VISIBLE_DEVICES", idx, 1);
			execl("/proc/self/exe", "test_peer", "--visible", p.pci_address, (char *)NULL);
			_exit(127);
		}
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

static int visible_child(const char *pci)
{
	spyre_device_properties p;
	spyre_device *d;
	int n;

	if (spyre_device_count(&n) || n != 1 || spyre_device_open(0, &d) ||
	    spyre_device_get_properties(d, &p) || strcmp(p.pci_address, pci))
		return 1;
	return spyre_device_close(d) ? 1 : 0;
}

/* Card k's buffer at off_of(k) must hold the pattern. */
static void expect_pattern(int k, const char *what)
{
	memset(back, 0, RING_BYTES);
	OK(spyre_memcpy_dtoh(back, buf[k], off_of(k), RING_BYTES));
	if (memcmp(back, pattern, RING_BYTES))
		TAP_FAIL_("%s: card %d differs", what, k);
}

/* 0 -> 1 -> ... -> n-1 -> 0, every hop queued before anything is waited for:
 * the source side of hop k+1 must wait for hop k's destination jobs. */
TEST(ring_of_async_peer_copies)
{
	double t0;

	fill(pattern, RING_BYTES, 1);
	OK(spyre_memcpy_htod(buf[0], off_of(0), pattern, RING_BYTES));
	t0 = now();
	for (int k = 0; k < ncards; k++) {
		int d = (k + 1) % ncards;

		/* The last hop lands at card 0's offset of card n, not over its source. */
		OK(spyre_memcpy_peer_async(str[d], buf[d], d ? off_of(d) : off_of(MAXC), buf[k],
					   off_of(k), RING_BYTES));
	}
	OK(spyre_stream_synchronize(str[0]));
	printf("# ring of %d async hops of %u bytes: %.3f s\n", ncards, RING_BYTES, now() - t0);
	for (int k = 1; k < ncards; k++)
		expect_pattern(k, "async ring");
	memset(back, 0, RING_BYTES);
	OK(spyre_memcpy_dtoh(back, buf[0], off_of(MAXC), RING_BYTES));
	EXPECT_TRUE(!memcmp(back, pattern, RING_BYTES));
}

/* The other way round with the blocking call, and small sizes. */
TEST(ring_of_blocking_peer_copies_backwards)
{
	static const uint64_t sizes[] = { 1, 4095, 4u << 20, (4u << 20) + 1, (8u << 20) - 3 };

	fill(pattern, RING_BYTES, 2);
	OK(spyre_memcpy_htod(buf[0], off_of(0), pattern, RING_BYTES));
	for (int k = 0; k < ncards; k++) {
		int s = (ncards - k) % ncards, d = (s + ncards - 1) % ncards;

		if (d == 0)
			break;
		OK(spyre_memcpy_peer(buf[d], off_of(d), buf[s], off_of(s), RING_BYTES));
		expect_pattern(d, "blocking ring");
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(back, 0xee, RING_BYTES);
		OK(spyre_memset64(buf[1], 0, 0, 9u << 20));
		OK(spyre_memcpy_peer(buf[1], 3, buf[0], off_of(0), sizes[i]));
		OK(spyre_memcpy_dtoh(back, buf[1], 0, sizes[i] + 6));
		EXPECT_TRUE(!back[0] && !back[1] && !back[2] && !back[sizes[i] + 3]);
		if (memcmp(back + 3, pattern, sizes[i]))
			TAP_FAIL_("%llu bytes differ", (unsigned long long)sizes[i]);
	}
}

/* 40 MiB and 7 bytes: the link's slots grow to 16 MiB, three chunks. */
TEST(large_copy_in_three_chunks)
{
	const size_t n = (40u << 20) + 7;
	spyre_buffer *a, *b;
	uint8_t *p = malloc(n), *q = malloc(n);
	double t0;

	ASSERT_TRUE(p && q);
	fill(p, n, 5);
	OK(spyre_buffer_alloc(dev[C(6)], n + 64, 0, &a));
	OK(spyre_buffer_alloc(dev[C(7)], n + 64, 0, &b));
	OK(spyre_memcpy_htod(a, 5, p, n));
	t0 = now();
	OK(spyre_memcpy_peer(b, 60, a, 5, n));
	printf("# %zu bytes card %d -> %d: %.1f ms\n", n, C(6), C(7), (now() - t0) * 1e3);
	OK(spyre_memcpy_dtoh(q, b, 60, n));
	EXPECT_TRUE(!memcmp(p, q, n));
	OK(spyre_buffer_free(a));
	OK(spyre_buffer_free(b));
	free(p);
	free(q);
}

/* The destination stream's later work and events wait for the copy. */
TEST(stream_order_and_events)
{
	spyre_event *ev;
	uint64_t first;

	fill(pattern, RING_BYTES, 3);
	OK(spyre_memcpy_htod(buf[C(2)], 0, pattern, RING_BYTES));
	OK(spyre_event_create(dev[C(3)], &ev));
	OK(spyre_memcpy_peer_async(str[C(3)], buf[C(3)], 0, buf[C(2)], 0, RING_BYTES));
	OK(spyre_event_record(ev, str[C(3)]));
	OK(spyre_event_synchronize(ev));
	OK(spyre_memcpy_dtoh(back, buf[C(3)], 0, RING_BYTES));
	EXPECT_TRUE(!memcmp(back, pattern, RING_BYTES));
	/* A fill queued after the copy overwrites its first 8 bytes. */
	OK(spyre_memcpy_peer_async(str[C(3)], buf[C(3)], 0, buf[C(2)], 0, RING_BYTES));
	OK(spyre_memset64_async(str[C(3)], buf[C(3)], 0, 0x1122334455667788ull, 8));
	OK(spyre_memcpy_dtoh_async(str[C(3)], back, buf[C(3)], 0, RING_BYTES));
	OK(spyre_stream_synchronize(str[C(3)]));
	memcpy(&first, back, 8);
	EXPECT_EQ(first, 0x1122334455667788ull);
	EXPECT_TRUE(!memcmp(back + 8, pattern + 8, RING_BYTES - 8));
	OK(spyre_event_destroy(ev));
}

/* One open: a dtod copy.  Two opens of one card: a peer copy between them. */
TEST(same_open_and_two_opens_of_one_card)
{
	spyre_device *again;
	spyre_buffer *b;

	fill(pattern, RING_BYTES, 4);
	OK(spyre_memcpy_htod(buf[C(4)], 0, pattern, 1 << 20));
	OK(spyre_memcpy_peer_async(str[C(4)], buf[C(4)], 2 << 20, buf[C(4)], 0, 1 << 20));
	EXPECT_EQ(spyre_memcpy_peer(buf[C(4)], 100, buf[C(4)], 0, 200), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "overlap") != NULL);
	OK(spyre_stream_synchronize(str[C(4)]));
	OK(spyre_memcpy_dtoh(back, buf[C(4)], 2 << 20, 1 << 20));
	EXPECT_TRUE(!memcmp(back, pattern, 1 << 20));
	OK(spyre_device_open(C(4), &again));
	OK(spyre_buffer_alloc(again, 5 << 20, 0, &b));
	OK(spyre_memcpy_peer(b, 7, buf[C(4)], 0, 1 << 20));
	OK(spyre_memcpy_dtoh(back, b, 7, 1 << 20));
	EXPECT_TRUE(!memcmp(back, pattern, 1 << 20));
	OK(spyre_device_close(again));
}

/* Misuse on real cards: stream of the source's card, freed buffers, ranges. */
TEST(misuse_is_refused)
{
	spyre_buffer *gone;

	EXPECT_EQ(spyre_memcpy_peer_async(str[C(5)], buf[C(6)], 0, buf[C(5)], 0, 8),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "destination buffer's device") != NULL);
	OK(spyre_buffer_alloc(dev[C(5)], 4096, 0, &gone));
	OK(spyre_buffer_free(gone));
	EXPECT_EQ(spyre_memcpy_peer(buf[C(6)], 0, gone, 0, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_peer_async(str[C(5)], gone, 0, buf[C(6)], 0, 8),
		  SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_peer(buf[C(6)], spyre_buffer_size(buf[C(6)]) - 4, buf[C(5)], 0, 8),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "destination range") != NULL);
}

/* The parent's opens go (and their links' pinned buffers) before the children come. */
TEST(close_every_card)
{
	for (int i = 0; i < ncards; i++)
		OK(spyre_device_close(dev[i]));
}

/* Child: copies between card @a and the next one for @seconds (after its
 * set-up; one round trip at least); 0 if all good. */
static int stress_child(int a, int id, int seconds)
{
	int b = (a + 1) % ncards, n = 0;
	spyre_device *da, *db;
	spyre_buffer *ba, *bb;
	spyre_stream *sa, *sb;
	uint8_t *p, *q;
	double end;
	size_t max = (3u << 20) + 777;

	p = malloc(max);
	q = malloc(max);
	if (!p || !q || spyre_device_open(a, &da) || spyre_device_open(b, &db) ||
	    spyre_buffer_alloc(da, max + 4096, 0, &ba) || spyre_buffer_alloc(db, max + 4096, 0, &bb) ||
	    spyre_stream_create(da, id % 4, &sa) || spyre_stream_create(db, (id + 1) % 4, &sb))
		return 2;
	srand((unsigned int)id * 7919u);
	/* @seconds from the end of the set-up (slow under the debug kernel),
	 * and one round trip at least. */
	end = now() + seconds;
	do {
		size_t bytes = 1 + (size_t)rand() % max;
		uint64_t o1 = (uint64_t)rand() % 4096, o2 = (uint64_t)rand() % 4096;

		fill(p, bytes, (uint32_t)(id * 1000 + n));
		if (spyre_memcpy_htod_async(sa, ba, o1, p, bytes) ||
		    spyre_stream_synchronize(sa) ||
		    spyre_memcpy_peer_async(sb, bb, o2, ba, o1, bytes) ||
		    spyre_memcpy_peer_async(sa, ba, 0, bb, o2, bytes) ||
		    spyre_memcpy_dtoh_async(sa, q, ba, 0, bytes) || spyre_stream_synchronize(sa)) {
			fprintf(stderr, "# child %d: %s\n", id, spyre_last_error_detail());
			return 3;
		}
		if (memcmp(p, q, bytes)) {
			fprintf(stderr, "# child %d: round %d of %zu bytes differs\n", id, n, bytes);
			return 4;
		}
		n++;
	} while (now() < end);
	printf("# child %d: cards %d <-> %d: %d round trips\n", id, a, b, n);
	return spyre_device_close(da) || spyre_device_close(db) || !n ? 5 : 0;
}

/* Two processes per card at once, each to the next card and back. */
TEST(processes_on_every_card_at_once)
{
	int nproc = ncards * PROCS_PER_CARD, failed = 0;
	pid_t pids[MAXC * PROCS_PER_CARD];
	double t0 = now();

	fflush(stdout);
	for (int i = 0; i < nproc; i++) {
		pids[i] = fork();
		ASSERT_TRUE(pids[i] >= 0);
		if (pids[i] == 0) {
			alarm(STRESS_SECONDS + 120);	/* bounded, whatever happens */
			_exit(stress_child(i % ncards, i, STRESS_SECONDS));
		}
	}
	for (int i = 0; i < nproc; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			TAP_FAIL_("child %d ended with status 0x%x", i, status);
			failed++;
		}
	}
	printf("# %d processes on %d cards: %.1f s, %d failed\n", nproc, ncards, now() - t0,
	       failed);
}

#define main tap_main
TAP_MAIN()
#undef main

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--visible"))
		return visible_child(argv[2]);
	want_cards = argc > 1 ? atoi(argv[1]) : 0;
	pattern = malloc(RING_BYTES + 8);
	back = malloc(RING_BYTES + off_of(MAXC) + 8);
	if (!pattern || !back)
		return 1;
	return tap_main();
}
