// SPDX-License-Identifier: MIT
/*
 * libspyre on a host without cards: argument checking, error strings and the
 * per-thread error detail.  Runs against the shared library and, built with
 * ASan/UBSan, against the library's objects; that build (SPYRE_TEST_INTERNALS)
 * also checks internals: command encoding, SPYRE_VISIBLE_DEVICES, SPYRE_LOG
 * parsing, the handle registry and the trace JSON.
 */
#include <pthread.h>

#include "spyre/spyre.h"
#include "spyre_program.h"
#include "tap.h"
#ifdef SPYRE_TEST_INTERNALS
#include "discover.h"
#include "encode.h"
#include "error.h"
#include "memory.h"
#include "object.h"
#include "stream.h"
#include "spyre_cmd.h"
#include "trace.h"
#endif

#define LAST_STATUS SPYRE_ERROR_CAPTURE

/* Every status has its own non-empty text and name; unknown ones too. */
TEST(strerror_covers_every_status)
{
	for (int i = 0; i <= LAST_STATUS; i++) {
		const char *text = spyre_strerror((spyre_status)i);
		const char *name = spyre_status_name((spyre_status)i);

		ASSERT_TRUE(text && *text && name && !strncmp(name, "SPYRE_", 6));
		for (int j = 0; j < i; j++) {
			EXPECT_TRUE(strcmp(text, spyre_strerror((spyre_status)j)));
			EXPECT_TRUE(strcmp(name, spyre_status_name((spyre_status)j)));
		}
	}
	EXPECT_STREQ(spyre_status_name(SPYRE_ERROR_NO_DEVICE), "SPYRE_ERROR_NO_DEVICE");
	EXPECT_STREQ(spyre_strerror(SPYRE_SUCCESS), "success");
}

TEST(strerror_unknown_status_is_not_null)
{
	EXPECT_STREQ(spyre_strerror((spyre_status)(LAST_STATUS + 1)), "unknown libspyre status");
	EXPECT_STREQ(spyre_strerror((spyre_status)-1), "unknown libspyre status");
	EXPECT_STREQ(spyre_status_name((spyre_status)1000), "SPYRE_STATUS_UNKNOWN");
}

TEST(version_matches_header)
{
	EXPECT_EQ(spyre_version(), SPYRE_VERSION_MAJOR << 16 | SPYRE_VERSION_MINOR << 8 |
				   SPYRE_VERSION_PATCH);
}

TEST(count_rejects_null)
{
	EXPECT_EQ(spyre_device_count(NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "count is NULL");
}

/* The build machine has no Spyre card: discovery works and finds none. */
TEST(count_is_zero_without_cards)
{
	int count = -1;

	ASSERT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	EXPECT_EQ(count, 0);
	EXPECT_STREQ(spyre_last_error_detail(), "");
}

TEST(open_rejects_bad_arguments)
{
	spyre_device *dev = (spyre_device *)&dev;

	EXPECT_EQ(spyre_device_open(0, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_device_open(-1, &dev), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(dev == NULL);
	EXPECT_STREQ(spyre_last_error_detail(), "negative index -1");
}

TEST(open_missing_index_is_no_device)
{
	spyre_device *dev = NULL;

	EXPECT_EQ(spyre_device_open(0, &dev), SPYRE_ERROR_NO_DEVICE);
	EXPECT_TRUE(dev == NULL);
	EXPECT_STREQ(spyre_last_error_detail(), "device 0 requested, 0 present");
	EXPECT_EQ(spyre_device_open(63, &dev), SPYRE_ERROR_NO_DEVICE);
}

TEST(open_pci_rejects_malformed_addresses)
{
	static const char *const bad[] = {
		"", "0", "zz:00.0", "00:00", "0000:01:00.0x", "01:00.8", "01:20.0",
		"00000:01:00.0", "0000:001:00.0", " 01:00.0", "01:00.0 ", "-1:00.0",
		"0000:01:00.00", "01:0.0", "+1:00.0", "0000;01:00.0",
	};
	spyre_device *dev;

	EXPECT_EQ(spyre_device_open_pci(NULL, &dev), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_device_open_pci("01:00.0", NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dev = (spyre_device *)&dev;
		if (spyre_device_open_pci(bad[i], &dev) != SPYRE_ERROR_INVALID_ARGUMENT) {
			tap_failed_checks++;
			printf("  # \"%s\" was not rejected as malformed\n", bad[i]);
		}
		EXPECT_TRUE(dev == NULL);
	}
}

TEST(open_pci_well_formed_but_absent)
{
	spyre_device *dev;

	EXPECT_EQ(spyre_device_open_pci("7f:1f.7", &dev), SPYRE_ERROR_NO_DEVICE);
	EXPECT_STREQ(spyre_last_error_detail(), "no Spyre card at 0000:7f:1f.7");
	EXPECT_EQ(spyre_device_open_pci("ABCD:01:00.0", &dev), SPYRE_ERROR_NO_DEVICE);
	EXPECT_STREQ(spyre_last_error_detail(), "no Spyre card at abcd:01:00.0");
}

TEST(properties_and_close_check_arguments)
{
	spyre_device_properties props;

	EXPECT_EQ(spyre_device_get_properties(NULL, &props), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "device is NULL");
	EXPECT_EQ(spyre_device_close(NULL), SPYRE_SUCCESS);
	EXPECT_STREQ(spyre_last_error_detail(), "");
}

static void *fail_in_thread(void *arg)
{
	int *seen_own_error = arg;

	spyre_device_count(NULL);
	*seen_own_error = !strcmp(spyre_last_error_detail(), "count is NULL");
	return NULL;
}

/* A failure on one thread does not show up in another thread's detail. */
TEST(error_detail_is_per_thread)
{
	pthread_t t;
	int seen_own_error = 0;

	spyre_device_close(NULL);
	ASSERT_EQ(pthread_create(&t, NULL, fail_in_thread, &seen_own_error), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	EXPECT_TRUE(seen_own_error);
	EXPECT_STREQ(spyre_last_error_detail(), "");
}

/* A pointer that was never a handle: must be refused without being read. */
static char junk[256];
#define BOGUS(type) ((type *)(void *)junk)

TEST(runtime_calls_reject_null_and_bogus_handles)
{
	spyre_buffer *buf = BOGUS(spyre_buffer);
	spyre_stream *s = BOGUS(spyre_stream);
	spyre_event *ev = BOGUS(spyre_event);
	spyre_kernel *k = BOGUS(spyre_kernel);
	spyre_graph *g = BOGUS(spyre_graph);
	spyre_graph_exec *x = BOGUS(spyre_graph_exec);
	spyre_device *dev = BOGUS(spyre_device);
	spyre_launch_profile prof;
	uint8_t host[64];
	double ms;
	void *p;

	memset(junk, 0x5a, sizeof(junk));
	EXPECT_EQ(spyre_buffer_alloc(NULL, 64, 0, &buf), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(buf == NULL);
	EXPECT_EQ(spyre_buffer_alloc(dev, 64, 0, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_buffer_alloc(dev, 64, 0, &buf), SPYRE_ERROR_INVALID_HANDLE);
	buf = BOGUS(spyre_buffer);
	EXPECT_EQ(spyre_buffer_free(buf), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "not a live buffer") != NULL);
	EXPECT_EQ(spyre_buffer_free(NULL), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_buffer_size(buf), 0);
	EXPECT_TRUE(spyre_buffer_device(buf) == NULL);
	EXPECT_EQ(spyre_buffer_device_address(NULL), 0);
	EXPECT_EQ(spyre_buffer_flags(buf), 0);
	EXPECT_EQ(spyre_buffer_map(buf, &p), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_buffer_map(buf, NULL), SPYRE_ERROR_INVALID_ARGUMENT);

	EXPECT_EQ(spyre_stream_create(NULL, 0, &s), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_stream_create(dev, 0, &s), SPYRE_ERROR_INVALID_HANDLE);
	s = BOGUS(spyre_stream);
	EXPECT_EQ(spyre_stream_synchronize(NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_stream_query(s), SPYRE_ERROR_INVALID_HANDLE);
	{
		spyre_fault_info fi;

		EXPECT_EQ(spyre_stream_get_fault(s, &fi), SPYRE_ERROR_INVALID_HANDLE);
		EXPECT_EQ(spyre_stream_get_fault(NULL, &fi), SPYRE_ERROR_INVALID_ARGUMENT);
	}
	EXPECT_EQ(spyre_stream_destroy(s), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_stream_destroy(NULL), SPYRE_SUCCESS);
	EXPECT_TRUE(spyre_stream_device(s) == NULL);
	EXPECT_EQ(spyre_memcpy_htod_async(s, buf, 0, host, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_dtoh_async(s, host, buf, 0, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_dtod_async(s, buf, 0, NULL, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memset64_async(s, NULL, 0, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memcpy_htod(buf, 0, host, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_dtoh(host, NULL, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memcpy_dtod(buf, 0, buf, 0, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memset64(buf, 0, 0, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_peer_async(NULL, buf, 0, buf, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "stream is NULL");
	EXPECT_EQ(spyre_memcpy_peer_async(s, buf, 0, buf, 0, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_peer(NULL, 0, buf, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "destination buffer is NULL");
	EXPECT_EQ(spyre_memcpy_peer(buf, 0, NULL, 0, 8), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "destination buffer") != NULL);
	EXPECT_EQ(spyre_memcpy_peer(buf, 0, buf, 0, 8), SPYRE_ERROR_INVALID_HANDLE);

	EXPECT_EQ(spyre_event_create(NULL, &ev), SPYRE_ERROR_INVALID_ARGUMENT);
	ev = BOGUS(spyre_event);
	EXPECT_EQ(spyre_event_record(ev, s), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_stream_wait_event(s, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_event_synchronize(ev), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_event_query(ev), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_event_elapsed_ms(ev, ev, &ms), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_event_destroy(ev), SPYRE_ERROR_INVALID_HANDLE);

	EXPECT_EQ(spyre_kernel_num_args(k), 0);
	EXPECT_EQ(spyre_kernel_set_arg(k, 0, buf, 0), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_set_arg_u64(NULL, 0, 1), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_launch(s, k), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_launch_profiled(s, k, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_last_profile(k, &prof), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_destroy(k), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_destroy(NULL), SPYRE_SUCCESS);

	EXPECT_EQ(spyre_stream_begin_capture(s), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_stream_end_capture(s, &g), SPYRE_ERROR_INVALID_HANDLE);
	g = BOGUS(spyre_graph);
	EXPECT_EQ(spyre_graph_num_nodes(g), 0);
	EXPECT_EQ(spyre_graph_instantiate(g, &x), SPYRE_ERROR_INVALID_HANDLE);
	x = BOGUS(spyre_graph_exec);
	EXPECT_EQ(spyre_graph_launch(x, s), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_graph_exec_profile(x, 0, &prof), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_graph_exec_destroy(x), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_graph_destroy(g), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_graph_destroy(NULL), SPYRE_SUCCESS);
	/* Nothing above wrote through the bogus pointer. */
	for (size_t i = 0; i < sizeof(junk); i++)
		if (junk[i] != 0x5a)
			TAP_FAIL_("junk[%zu] was written", i);
}

/* A minimal program header: magic, version, size, arguments. */
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

TEST(kernel_load_checks_the_image_before_the_device)
{
	uint8_t img[SPK_HDR_BYTES] = { 0 };
	spyre_kernel *k = BOGUS(spyre_kernel);

	put32(img + SPK_HDR_MAGIC, SPK_MAGIC);
	img[SPK_HDR_VERSION_MAJOR] = SPK_VERSION_MAJOR;
	put32(img + SPK_HDR_IMAGE_BYTES, sizeof(img));
	put32(img + SPK_HDR_NUM_ARGS, 2);
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), &k), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "device is NULL");
	EXPECT_TRUE(k == NULL);
	EXPECT_EQ(spyre_kernel_load(NULL, NULL, 64, &k), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_load(NULL, img, 63, &k), SPYRE_ERROR_INVALID_ARGUMENT);
	put32(img + SPK_HDR_NUM_ARGS, SPK_MAX_ARGS + 1);
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), &k), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "65 arguments; at most 64");
	put32(img + SPK_HDR_NUM_ARGS, 2);
	put32(img + SPK_HDR_FLAGS, 1);
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), &k), SPYRE_ERROR_INVALID_ARGUMENT);
	put32(img + SPK_HDR_FLAGS, 0);
	put32(img + SPK_HDR_IMAGE_BYTES, 128);
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), &k), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "the image says 128 bytes, 64 given");
	put32(img + SPK_HDR_IMAGE_BYTES, sizeof(img));
	img[SPK_HDR_VERSION_MAJOR] = SPK_VERSION_MAJOR + 1;
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), &k), SPYRE_ERROR_VERSION_MISMATCH);
	put32(img + SPK_HDR_MAGIC, 0x12345678);
	EXPECT_EQ(spyre_kernel_load(NULL, img, sizeof(img), &k), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "not a Spyre program (magic 0x12345678)");
}

TEST(trace_flush_without_spyre_trace_does_nothing)
{
	EXPECT_EQ(spyre_trace_flush(), SPYRE_SUCCESS);
}

#ifdef SPYRE_TEST_INTERNALS
#define le64_at spyre_get_le64

/* A launch node: [TIMESTAMP t0][LAUNCH][TIMESTAMP t1], then its data slots. */
TEST(internal_launch_node_layout)
{
	struct spyre_node n = { .kind = NODE_LAUNCH, .a0 = 0x100000000ULL, .nargs = 9 };
	uint8_t cmd[3 * SPYRE_CMD_SIZE], data[16 * SPYRE_CMD_SIZE];
	const uint64_t va = 0x200000000ULL;
	uint32_t slots;

	for (uint32_t i = 0; i < n.nargs; i++)
		n.args[i] = 0x1000 * (i + 1);
	/* 1 timestamp slot + 72 argument bytes in 2 slots + 320 stats bytes in 5. */
	EXPECT_EQ(spyre_node_data_slots(&n), 8);
	memset(data, 0xff, sizeof(data));
	slots = spyre_node_encode(&n, cmd, data, va);
	EXPECT_EQ(slots, 8);
	EXPECT_EQ(cmd[SPYRE_CMD_OFF_OPCODE], SPYRE_OP_TIMESTAMP);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_OFF_ARGS), va);
	EXPECT_EQ(cmd[SPYRE_CMD_SIZE + SPYRE_CMD_OFF_OPCODE], SPYRE_OP_LAUNCH);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS), n.a0);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS + 8), va + 64);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS + 16), 72);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS + 24), va + 3 * 64);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS + 32), 0);
	EXPECT_EQ(cmd[2 * SPYRE_CMD_SIZE + SPYRE_CMD_OFF_OPCODE], SPYRE_OP_TIMESTAMP);
	EXPECT_EQ(le64_at(cmd + 2 * SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS), va + 8);
	/* Timestamps start at 0 (the "did it run" marker), arguments in place. */
	EXPECT_EQ(le64_at(data), 0);
	EXPECT_EQ(le64_at(data + 8), 0);
	for (uint32_t i = 0; i < n.nargs; i++)
		EXPECT_EQ(le64_at(data + 64 + 8 * i), 0x1000 * (i + 1));
	EXPECT_EQ(le64_at(data + 3 * 64), 0);
	EXPECT_EQ(data[8 * 64], 0xff);	/* nothing written past the node */
	/* Flags, status and reserved bytes of every command are 0. */
	for (int c = 0; c < 3; c++)
		for (int b = 1; b < SPYRE_CMD_OFF_ARGS; b++)
			EXPECT_EQ(cmd[c * SPYRE_CMD_SIZE + b], 0);
}

TEST(internal_copy_fill_and_mark_nodes)
{
	struct spyre_node copy = { .kind = NODE_COPY, .a0 = 1, .a1 = 2, .a2 = 3 };
	struct spyre_node fill = { .kind = NODE_FILL, .a0 = 4, .a1 = 5, .a2 = 6 };
	struct spyre_node wait = { .kind = NODE_MARK };
	uint8_t cmd[3 * SPYRE_CMD_SIZE], data[SPYRE_CMD_SIZE];

	EXPECT_EQ(spyre_node_encode(&copy, cmd, data, 0x1000), 1);
	EXPECT_EQ(cmd[SPYRE_CMD_SIZE], SPYRE_OP_DMA_COPY);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS + 16), 3);
	EXPECT_EQ(spyre_node_encode(&fill, cmd, data, 0x1000), 1);
	EXPECT_EQ(cmd[SPYRE_CMD_SIZE], SPYRE_OP_DMA_FILL);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS + 16), 6);
	EXPECT_EQ(spyre_node_encode(&wait, cmd, data, 0x1000), 1);
	EXPECT_EQ(cmd[SPYRE_CMD_SIZE], SPYRE_OP_NOP);
	wait.a0 = 0x2000;
	spyre_node_encode(&wait, cmd, data, 0x1000);
	EXPECT_EQ(cmd[SPYRE_CMD_SIZE], SPYRE_OP_TIMESTAMP);
	EXPECT_EQ(le64_at(cmd + SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS), 0x2000);
}

/* A graph's template, relocated, equals the same nodes encoded in place. */
TEST(internal_graph_template_relocates_to_the_ring)
{
	struct spyre_node nodes[3] = {
		{ .kind = NODE_COPY, .a0 = 0x100000000ULL, .a1 = 0x100002000ULL, .a2 = 4096 },
		{ .kind = NODE_LAUNCH, .a0 = 0x100010000ULL, .nargs = 3,
		  .args = { 0x100000000ULL, 0x100002000ULL, 0x100004000ULL } },
		{ .kind = NODE_FILL, .a0 = 0x100004000ULL, .a1 = 64, .a2 = 7 },
	};
	const uint64_t ring_va = 0x300000000ULL + 64 * 100;
	static uint8_t direct[64 * 64], relocated[64 * 64];
	struct spyre_template t;
	uint32_t d = 9;

	ASSERT_EQ(spyre_template_build(&t, nodes, 3), SPYRE_SUCCESS);
	EXPECT_EQ(t.ncmds, 9);
	EXPECT_EQ(t.slots, 9 + 1 + (1 + 1 + 5) + 1);
	EXPECT_EQ(t.nrelocs, 2 + 4 + 2);
	for (uint32_t i = 0; i < 3; i++)
		d += spyre_node_encode(&nodes[i], direct + 3 * i * 64, direct + d * 64,
				       ring_va + d * 64);
	memcpy(relocated, t.bytes, (size_t)t.slots * 64);
	for (uint32_t i = 0; i < t.nrelocs; i++) {
		uint64_t v = le64_at(relocated + t.relocs[i]) + ring_va;

		for (int b = 0; b < 8; b++)
			relocated[t.relocs[i] + b] = (uint8_t)(v >> (8 * b));
	}
	EXPECT_TRUE(!memcmp(direct, relocated, (size_t)t.slots * 64));
	spyre_template_free(&t);
	EXPECT_EQ(spyre_template_build(&t, nodes, 0), SPYRE_ERROR_INVALID_ARGUMENT);
}

TEST(internal_visible_devices_filter)
{
	struct spyre_device_entry e[4];
	int n;

	for (int i = 0; i < 4; i++) {
		snprintf(e[i].pci_address, sizeof(e[i].pci_address), "0000:0%d:00.0", i + 1);
		snprintf(e[i].devnode, sizeof(e[i].devnode), "/dev/accel/accel%d", i);
	}
	EXPECT_EQ(spyre_visible_filter(NULL, e, 4), 4);
	n = spyre_visible_filter("2,0", e, 4);
	EXPECT_EQ(n, 2);
	EXPECT_STREQ(e[0].pci_address, "0000:03:00.0");
	EXPECT_STREQ(e[1].pci_address, "0000:01:00.0");
	/* PCI addresses, short or long; duplicates count once. */
	n = spyre_visible_filter("01:00.0, 0000:01:00.0,3", e, 2);
	EXPECT_EQ(n, 1);
	EXPECT_STREQ(e[0].pci_address, "0000:01:00.0");
	for (int i = 0; i < 4; i++)
		snprintf(e[i].pci_address, sizeof(e[i].pci_address), "0000:0%d:00.0", i + 1);
	/* An entry naming no card hides it and everything after it. */
	EXPECT_EQ(spyre_visible_filter("1,9,0", e, 4), 1);
	EXPECT_STREQ(e[0].pci_address, "0000:02:00.0");
	EXPECT_EQ(spyre_visible_filter("", e, 4), 0);
	EXPECT_EQ(spyre_visible_filter("-1", e, 4), 0);
}

TEST(internal_log_levels)
{
	EXPECT_EQ(spyre_log_parse(NULL), SPYRE_LOG_OFF);
	EXPECT_EQ(spyre_log_parse("error"), SPYRE_LOG_ERROR);
	EXPECT_EQ(spyre_log_parse("WARN"), SPYRE_LOG_WARN);
	EXPECT_EQ(spyre_log_parse("warning"), SPYRE_LOG_WARN);
	EXPECT_EQ(spyre_log_parse("info"), SPYRE_LOG_INFO);
	EXPECT_EQ(spyre_log_parse("debug"), SPYRE_LOG_DEBUG);
	EXPECT_EQ(spyre_log_parse("3"), SPYRE_LOG_INFO);
	EXPECT_EQ(spyre_log_parse("99"), SPYRE_LOG_DEBUG);
	EXPECT_EQ(spyre_log_parse("loud"), -1);
	EXPECT_EQ(spyre_log_parse("-2"), -1);
}

TEST(internal_handle_registry_survives_churn)
{
	static struct spyre_obj objs[3000];

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 3000; i++)
			spyre_handle_add(&objs[i], SPYRE_KIND_EVENT, NULL);
		for (int i = 0; i < 3000; i += 2)
			spyre_handle_remove(&objs[i]);
		for (int i = 0; i < 3000; i++)
			if (spyre_handle_live(&objs[i], SPYRE_KIND_EVENT, 0) != (i & 1))
				TAP_FAIL_("round %d object %d", round, i);
		EXPECT_TRUE(!spyre_handle_live(&objs[1], SPYRE_KIND_STREAM, 0));
		EXPECT_TRUE(!spyre_handle_live(&objs[1], SPYRE_KIND_EVENT, objs[1].id + 1));
		EXPECT_TRUE(spyre_handle_live(&objs[1], SPYRE_KIND_EVENT, objs[1].id));
		for (int i = 1; i < 3000; i += 2)
			spyre_handle_remove(&objs[i]);
	}
	EXPECT_TRUE(!spyre_handle_live(&objs[1], SPYRE_KIND_EVENT, 0));
}

/* Two pretend device opens (no card: every check below fails before an ioctl). */
struct fake_open {
	spyre_device dev;
	spyre_buffer buf;
	spyre_stream s;
};

static void fake_open(struct fake_open *f, const char *node, uint64_t bytes)
{
	memset(f, 0, sizeof(*f));
	f->dev.fd = -1;
	snprintf(f->dev.props.devnode, sizeof(f->dev.props.devnode), "%s", node);
	pthread_mutex_init(&f->dev.lock, NULL);
	f->dev.objects.next = f->dev.objects.prev = &f->dev.objects;
	spyre_handle_add(&f->dev.objects, SPYRE_KIND_DEVICE, &f->dev);
	f->buf.bytes = bytes;
	spyre_handle_add(&f->buf.obj, SPYRE_KIND_BUFFER, &f->dev);
	pthread_mutex_init(&f->s.lock, NULL);
	spyre_handle_add(&f->s.obj, SPYRE_KIND_STREAM, &f->dev);
}

static void fake_close(struct fake_open *f)
{
	spyre_handle_remove(&f->s.obj);
	spyre_handle_remove(&f->buf.obj);
	spyre_handle_remove(&f->dev.objects);
	pthread_mutex_destroy(&f->s.lock);
	pthread_mutex_destroy(&f->dev.lock);
}

#define PEER_EXPECT(call, status, detail)						\
	do {										\
		EXPECT_EQ(call, status);						\
		if (!strstr(spyre_last_error_detail(), detail))				\
			TAP_FAIL_("detail \"%s\" lacks \"%s\"", spyre_last_error_detail(),	\
				  detail);						\
	} while (0)

/* Peer copies check every argument, naming what is wrong, before any work. */
TEST(internal_peer_copy_checks_arguments)
{
	static struct fake_open a, b;
	spyre_buffer *sb = &a.buf, *db = &b.buf;
	spyre_stream *ds = &b.s;

	fake_open(&a, "/dev/accel/accel0", 1 << 20);
	fake_open(&b, "/dev/accel/accel1", 1 << 16);
	PEER_EXPECT(spyre_memcpy_peer_async(ds, NULL, 0, sb, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT,
		    "destination buffer is NULL");
	PEER_EXPECT(spyre_memcpy_peer_async(ds, db, 0, NULL, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT,
		    "source buffer is NULL");
	PEER_EXPECT(spyre_memcpy_peer_async(&a.s, db, 0, sb, 0, 8), SPYRE_ERROR_INVALID_ARGUMENT,
		    "the stream must be of the destination buffer's device open "
		    "(/dev/accel/accel1)");
	PEER_EXPECT(spyre_memcpy_peer_async(ds, db, 65536 - 8, sb, 0, 9),
		    SPYRE_ERROR_INVALID_ARGUMENT,
		    "destination range [65528, +9) is outside its 65536-byte buffer");
	PEER_EXPECT(spyre_memcpy_peer_async(ds, db, 0, sb, (1 << 20) + 1, 0),
		    SPYRE_ERROR_INVALID_ARGUMENT, "source range [1048577, +0)");
	PEER_EXPECT(spyre_memcpy_peer_async(ds, db, 8, sb, UINT64_MAX, 16),
		    SPYRE_ERROR_INVALID_ARGUMENT, "source range");
	PEER_EXPECT(spyre_memcpy_peer(db, 0, sb, 1 << 20, 1), SPYRE_ERROR_INVALID_ARGUMENT,
		    "source range [1048576, +1)");
	PEER_EXPECT(spyre_memcpy_peer(db, UINT64_MAX, sb, 0, 2), SPYRE_ERROR_INVALID_ARGUMENT,
		    "destination range");
	/* Zero bytes between two opens: nothing to do (no link is made). */
	EXPECT_EQ(spyre_memcpy_peer_async(ds, db, 0, sb, 0, 0), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_memcpy_peer_async(ds, db, 65536, sb, 1 << 20, 0), SPYRE_SUCCESS);
	/* A freed source, a destroyed stream, a closed device's buffer. */
	spyre_handle_remove(&a.buf.obj);
	PEER_EXPECT(spyre_memcpy_peer_async(ds, db, 0, sb, 0, 8), SPYRE_ERROR_INVALID_HANDLE,
		    "source buffer");
	PEER_EXPECT(spyre_memcpy_peer(db, 0, sb, 0, 8), SPYRE_ERROR_INVALID_HANDLE,
		    "source buffer");
	spyre_handle_add(&a.buf.obj, SPYRE_KIND_BUFFER, &a.dev);
	spyre_handle_remove(&b.s.obj);
	PEER_EXPECT(spyre_memcpy_peer_async(ds, db, 0, sb, 0, 8), SPYRE_ERROR_INVALID_HANDLE,
		    "stream");
	spyre_handle_add(&b.s.obj, SPYRE_KIND_STREAM, &b.dev);
	spyre_handle_remove(&b.buf.obj);
	PEER_EXPECT(spyre_memcpy_peer(db, 0, sb, 0, 8), SPYRE_ERROR_INVALID_HANDLE,
		    "destination buffer");
	spyre_handle_add(&b.buf.obj, SPYRE_KIND_BUFFER, &b.dev);
	/* A device the driver banned: the source's open is checked too. */
	atomic_store(&a.dev.lost, 1);
	EXPECT_EQ(spyre_memcpy_peer_async(ds, db, 0, sb, 0, 8), SPYRE_ERROR_DEVICE_LOST);
	fake_close(&a);
	fake_close(&b);
}

TEST(internal_profile_and_trace_json)
{
	uint64_t stats[SPYRE_STATS_WORDS];
	spyre_launch_profile p;
	char *json;

	for (int i = 0; i < SPYRE_STATS_WORDS; i++)
		stats[i] = 100 + (uint64_t)i;
	spyre_profile_from_stats(&p, stats);
	EXPECT_EQ(p.device_cycles, 100);
	EXPECT_EQ(p.device_ns, 101);
	EXPECT_EQ(p.macs, 107);
	EXPECT_EQ(p.core_busy_cycles[0], 108);
	EXPECT_EQ(p.core_busy_cycles[31], 139);

	spyre_trace_name_track(1, 2, "stream \"2\"");
	spyre_trace_slice(1, 2, "htod\n", "copy", 1500, 4250, 4096);
	json = spyre_trace_json();
	ASSERT_TRUE(json);
	EXPECT_STREQ(json,
		     "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
		     "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
		     "\"args\":{\"name\":\"stream \\\"2\\\"\"}},\n"
		     "{\"name\":\"htod\\u000a\",\"cat\":\"copy\",\"ph\":\"X\",\"pid\":1,"
		     "\"tid\":2,\"ts\":1.500,\"dur\":2.750,\"args\":{\"bytes\":4096}}\n]}\n");
	free(json);
}
#endif

TAP_MAIN()
