// SPDX-License-Identifier: MIT
/*
 * A user's broken kernels, run on the card: each is refused or stopped by
 * the card's engine, and the user is told exactly what broke, in words
 * (spyre_last_error_detail) and field by field (spyre_stream_get_fault),
 * with the same verdict the engine gives on the host
 * (tests/host/test_engine_broken.c).  Also a broken kernel inside a graph:
 * the card names the failing operation, not a guess.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broken_kernels.h"
#include "spyre/spyre.h"
#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"

#define BYTES (BROKEN_STICKS * 128)	/* what the kernel copies */
#define BUFFER_BYTES 4096		/* one page: the next one is not mapped */

struct setup {
	spyre_device *dev;
	spyre_stream *s;
	spyre_buffer *src, *dst;
};

static int setup_open(struct setup *t)
{
	memset(t, 0, sizeof(*t));
	if (spyre_device_open(0, &t->dev) != SPYRE_SUCCESS ||
	    spyre_stream_create(t->dev, 0, &t->s) != SPYRE_SUCCESS ||
	    spyre_buffer_alloc(t->dev, BUFFER_BYTES, 0, &t->src) != SPYRE_SUCCESS ||
	    spyre_buffer_alloc(t->dev, BUFFER_BYTES, 0, &t->dst) != SPYRE_SUCCESS) {
		printf("  # set-up: %s\n", spyre_last_error_detail());
		return -1;
	}
	return 0;
}

/* The device refuses work after a fault: every case gets a fresh open. */
static void setup_close(struct setup *t)
{
	spyre_stream_destroy(t->s);
	spyre_buffer_free(t->src);
	spyre_buffer_free(t->dst);
	spyre_device_close(t->dev);
}

static spyre_kernel *load(spyre_device *dev, const struct broken_kernel *b)
{
	static struct pb_program prog;
	spyre_kernel *k = NULL;
	uint8_t *img;
	size_t len;

	broken_base(&prog);
	if (b)
		b->breaks(&prog);
	img = pb_serialize(&prog, &len);
	if (!img || spyre_kernel_load(dev, img, len, &k) != SPYRE_SUCCESS)
		printf("  # load: %s\n", spyre_last_error_detail());
	free(img);
	return k;
}

static int set_args(spyre_kernel *k, const struct setup *t)
{
	return spyre_kernel_set_arg(k, 0, t->src, 0) != SPYRE_SUCCESS ||
	       spyre_kernel_set_arg(k, 1, t->dst, 0) != SPYRE_SUCCESS;
}

/*
 * Open, load broken kernel @b, launch it and wait: the stream's fault in
 * @fi and its words in @detail.  Returns the kernel (the caller destroys it
 * and closes @t), NULL if a step before the card failed.
 */
static spyre_kernel *run_broken(struct setup *t, const struct broken_kernel *b,
				spyre_fault_info *fi, char *detail, size_t size)
{
	spyre_kernel *k;

	if (setup_open(t))
		return NULL;
	k = load(t->dev, b);
	if (!k || set_args(k, t) || spyre_kernel_launch(t->s, k) != SPYRE_SUCCESS) {
		printf("  # %s: %s\n", b->name, spyre_last_error_detail());
		return NULL;
	}
	EXPECT_EQ(spyre_stream_synchronize(t->s), SPYRE_ERROR_DEVICE_FAULT);
	snprintf(detail, size, "%s", spyre_last_error_detail());
	printf("  # %s: %s\n", b->name, detail);
	EXPECT_EQ(spyre_stream_get_fault(t->s, fi), SPYRE_SUCCESS);
	return k;
}

/* The engine's fields as the host engine gives them, and in the words. */
static void expect_engine_verdict(const struct broken_kernel *b, const spyre_fault_info *fi,
				  const char *detail)
{
	char want[256];

	EXPECT_EQ(fi->status, SPYRE_ERROR_DEVICE_FAULT);
	EXPECT_EQ(fi->job_status, 1u);
	EXPECT_EQ(fi->card_reported, 1);
	EXPECT_EQ(fi->command_status, b->status == SPYRE_ENGINE_E_DEADLOCK ?
					      (uint32_t)SPYRE_CMD_STATUS_DEADLOCK :
					      (uint32_t)SPYRE_CMD_STATUS_BAD_PROGRAM);
	EXPECT_EQ(fi->engine_status, (uint32_t)b->status);
	EXPECT_STREQ(fi->engine_status_name, spyre_engine_status_name(b->status));
	EXPECT_EQ(fi->engine_core, 0);
	EXPECT_EQ(fi->engine_site, (uint32_t)b->site);
	EXPECT_EQ(fi->engine_index, b->index);
	EXPECT_TRUE(fi->engine_detail[0] != '\0');
	/* The words carry the engine's own, naming the kernel. */
	EXPECT_TRUE(strstr(detail, fi->engine_detail) != NULL);
	if (b->status == SPYRE_ENGINE_E_DEADLOCK)
		snprintf(want, sizeof(want), "kernel '%s' deadlocked: core 0 ", fi->operation);
	else
		snprintf(want, sizeof(want), "kernel '%s' was refused by the card's engine (%s): ",
			 fi->operation, fi->engine_status_name);
	EXPECT_TRUE(strstr(detail, want) != NULL);
}

TEST(each_broken_kernel_is_explained)
{
	for (unsigned i = 0; i < NUM_BROKEN_KERNELS; i++) {
		const struct broken_kernel *b = &broken_kernels[i];
		char detail[1024];
		spyre_fault_info fi;
		struct setup t;
		spyre_kernel *k = run_broken(&t, b, &fi, detail, sizeof(detail));

		ASSERT_TRUE(k != NULL);
		expect_engine_verdict(b, &fi, detail);
		EXPECT_EQ(fi.operation_index, 0u);
		spyre_kernel_destroy(k);
		setup_close(&t);
	}
}

/* The deadlock in full: who waits, on what, and how far it got. */
TEST(a_deadlock_says_who_waits_on_what)
{
	const struct broken_kernel *b = &broken_kernels[NUM_BROKEN_KERNELS - 1];
	char detail[1024];
	spyre_fault_info fi;
	struct setup t;
	spyre_kernel *k;

	ASSERT_EQ(b->status, SPYRE_ENGINE_E_DEADLOCK);
	k = run_broken(&t, b, &fi, detail, sizeof(detail));
	ASSERT_TRUE(k != NULL);
	EXPECT_TRUE(strstr(detail, "deadlocked: core 0 stream 2's source waits on stream 1 "
			   "(ordered after it), 0 of 8 sticks delivered") != NULL);
	EXPECT_EQ(fi.engine_wait, (uint32_t)SPYRE_ENGINE_WAIT_AFTER);
	EXPECT_EQ(fi.engine_stream, 1);
	EXPECT_EQ(fi.sticks_done, 0u);
	EXPECT_EQ(fi.sticks_total, (uint32_t)BROKEN_STICKS);
	spyre_kernel_destroy(k);
	setup_close(&t);
}

/*
 * A graph: fill, a good launch, the broken one, a copy.  The card names
 * operation 2 (the broken launch); the copy after it never ran.
 */
TEST(a_broken_kernel_inside_a_graph_is_named_by_the_card)
{
	const struct broken_kernel *b = &broken_kernels[0];
	spyre_kernel *good, *bad;
	spyre_graph_exec *x = NULL;
	spyre_graph *g = NULL;
	spyre_fault_info fi;
	char detail[1024];
	struct setup t;

	ASSERT_EQ(setup_open(&t), 0);
	good = load(t.dev, NULL);
	bad = load(t.dev, b);
	ASSERT_TRUE(good && bad);
	ASSERT_EQ(set_args(good, &t), 0);
	ASSERT_EQ(set_args(bad, &t), 0);
	ASSERT_EQ(spyre_stream_begin_capture(t.s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memset64_async(t.s, t.src, 0, 0x3c003c003c003c00ull, BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(t.s, good), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(t.s, bad), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtod_async(t.s, t.dst, 0, t.src, 0, BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_end_capture(t.s, &g), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_graph_instantiate(g, &x), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_graph_launch(x, t.s), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(t.s), SPYRE_ERROR_DEVICE_FAULT);
	snprintf(detail, sizeof(detail), "%s", spyre_last_error_detail());
	printf("  # graph: %s\n", detail);
	ASSERT_EQ(spyre_stream_get_fault(t.s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.operation_index, 2u);
	expect_engine_verdict(b, &fi, detail);
	EXPECT_TRUE(strstr(detail, ", operation 2: ") != NULL);
	spyre_graph_exec_destroy(x);
	spyre_graph_destroy(g);
	spyre_kernel_destroy(good);
	spyre_kernel_destroy(bad);
	setup_close(&t);
}

/*
 * A replay that fails after replays of the same exec that ran: replays
 * reuse the exec's own command buffers (docs/runtime.md "Graphs"), so what
 * the earlier ones wrote there must not make the failed one look finished.
 * The third replay's CALL fails with an injected DMA error: no node ran.
 */
TEST(a_graph_replay_failing_after_good_ones_is_reported)
{
	spyre_graph_exec *x = NULL;
	spyre_graph *g = NULL;
	spyre_fault_info fi;
	struct setup t;

	ASSERT_EQ(setup_open(&t), 0);
	ASSERT_EQ(spyre_stream_begin_capture(t.s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memset64_async(t.s, t.src, 0, 0x3c003c003c003c00ull, BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtod_async(t.s, t.dst, 0, t.src, 0, BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_end_capture(t.s, &g), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_graph_instantiate(g, &x), SPYRE_SUCCESS);
	/* Two in flight at once: each of the exec's buffers is used. */
	ASSERT_EQ(spyre_graph_launch(x, t.s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_graph_launch(x, t.s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(t.s), SPYRE_SUCCESS);
	/* Stream priority 0 is queue 0; its next command is the replay's CALL. */
	ASSERT_EQ(debugfs_write("inject_dma_error", "0 0"), 0);
	ASSERT_EQ(spyre_graph_launch(x, t.s), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(t.s), SPYRE_ERROR_DEVICE_FAULT);
	printf("  # %s\n", spyre_last_error_detail());
	ASSERT_EQ(spyre_stream_get_fault(t.s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.operation_index, 0u);
	spyre_graph_exec_destroy(x);
	spyre_graph_destroy(g);
	setup_close(&t);
}

/*
 * A kernel reading past its buffer: the card reports an MMU fault, and the
 * engine's record says which stream of the kernel made the access.
 */
TEST(a_kernel_reading_past_its_buffer_is_named_with_its_stream)
{
	char detail[1024];
	spyre_fault_info fi;
	struct setup t;
	spyre_kernel *k;

	ASSERT_EQ(setup_open(&t), 0);
	/* No fault yet: nothing reported, the engine fields say "none". */
	ASSERT_EQ(spyre_stream_get_fault(t.s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.card_reported, 0);
	EXPECT_EQ(fi.engine_status, 0u);
	EXPECT_EQ(fi.engine_core, -1);
	EXPECT_EQ(fi.engine_index, -1);
	k = load(t.dev, NULL);
	ASSERT_TRUE(k != NULL);
	/* The source's last stick: the next seven are past the buffer's page. */
	ASSERT_EQ(spyre_kernel_set_arg(k, 0, t.src, BUFFER_BYTES - 128), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_set_arg(k, 1, t.dst, 0), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(t.s, k), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(t.s), SPYRE_ERROR_DEVICE_FAULT);
	snprintf(detail, sizeof(detail), "%s", spyre_last_error_detail());
	printf("  # past the buffer: %s\n", detail);
	EXPECT_TRUE(strstr(detail, "could not reach device memory (MMU fault): core 0 stream 0: ") !=
		    NULL);
	EXPECT_TRUE(strstr(detail, "nothing mapped there") != NULL);
	ASSERT_EQ(spyre_stream_get_fault(t.s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.job_status, 2u);
	EXPECT_EQ(fi.card_reported, 1);
	EXPECT_EQ(fi.command_status, (uint32_t)SPYRE_CMD_STATUS_MMU_FAULT);
	EXPECT_EQ(fi.engine_status, (uint32_t)SPYRE_ENGINE_E_MEMORY);
	EXPECT_EQ(fi.engine_site, (uint32_t)SPYRE_ENGINE_AT_STREAM);
	EXPECT_EQ(fi.engine_index, 0);
	EXPECT_EQ(fi.address_known, 1);
	EXPECT_EQ(fi.address, spyre_buffer_device_address(t.src) + BUFFER_BYTES);
	spyre_kernel_destroy(k);
	setup_close(&t);
}

TAP_MAIN()
