// SPDX-License-Identifier: MIT
/*
 * The card's two clocks, as a user reads them: wall time by default; with
 * sysfs timestamp_clock = model, events and launch profiles count what the
 * real card would take (docs/hardware.md "Clocks"), exactly: a 1 MiB
 * copy from host memory is 1 MiB over PCIe at 35 GB/s, a launch is its
 * modelled device time, and host time between submissions does not count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spyre/spyre.h"
#include "spyre_program_builder.h"
#include "tap.h"

#define MIB (1u << 20)

static char clock_path[128];

static int write_clock(const char *mode)
{
	FILE *f = fopen(clock_path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(mode, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int read_clock(char *out, size_t size)
{
	FILE *f = fopen(clock_path, "r");
	int ok = f && fgets(out, (int)size, f);

	if (f)
		fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return ok ? 0 : -1;
}

static spyre_device *open_dev(void)
{
	spyre_device_properties p;
	spyre_device *dev = NULL;

	if (spyre_device_open(0, &dev) != SPYRE_SUCCESS ||
	    spyre_device_get_properties(dev, &p) != SPYRE_SUCCESS) {
		printf("  # open: %s\n", spyre_last_error_detail());
		return NULL;
	}
	snprintf(clock_path, sizeof(clock_path), "/sys/bus/pci/devices/%s/spyre/timestamp_clock",
		 p.pci_address);
	return dev;
}

TEST(the_clock_is_wall_time_until_switched)
{
	spyre_device *dev = open_dev();
	spyre_clock clock = SPYRE_CLOCK_MODELLED;
	char mode[16] = "";

	ASSERT_TRUE(dev != NULL);
	ASSERT_EQ(read_clock(mode, sizeof(mode)), 0);
	EXPECT_STREQ(mode, "wall");
	EXPECT_EQ(spyre_device_get_clock(dev, &clock), SPYRE_SUCCESS);
	EXPECT_EQ(clock, SPYRE_CLOCK_WALL);
	EXPECT_EQ(spyre_device_get_clock(dev, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_device_get_clock(NULL, &clock), SPYRE_ERROR_INVALID_ARGUMENT);
	/* Only the two names. */
	EXPECT_TRUE(write_clock("sundial") != 0);
	ASSERT_EQ(read_clock(mode, sizeof(mode)), 0);
	EXPECT_STREQ(mode, "wall");
	ASSERT_EQ(write_clock("model"), 0);
	ASSERT_EQ(read_clock(mode, sizeof(mode)), 0);
	EXPECT_STREQ(mode, "model");
	EXPECT_EQ(spyre_device_get_clock(dev, &clock), SPYRE_SUCCESS);
	EXPECT_EQ(clock, SPYRE_CLOCK_MODELLED);
	ASSERT_EQ(write_clock("wall"), 0);
	spyre_device_close(dev);
}

/* A copy kernel of n sticks: argument 0 -> COPY -> argument 1. */
static spyre_kernel *copy_kernel(spyre_device *dev, uint32_t sticks)
{
	static struct pb_program prog;
	spyre_kernel *k = NULL;
	struct pb_core *c;
	struct pb_op *op;
	uint8_t *img;
	size_t len;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = 2;
	c = pb_core(&prog, 0);
	op = pb_op(c, SPK_OPC_COPY, SPK_DT_FP16, SPK_DT_FP16, sticks, 1, 64);
	op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, sticks), pb_op_end(), sticks, 8);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 1, 0, sticks), sticks, 8);
	img = pb_serialize(&prog, &len);
	if (img && spyre_kernel_load(dev, img, len, &k) != SPYRE_SUCCESS)
		printf("  # load: %s\n", spyre_last_error_detail());
	free(img);
	return k;
}

TEST(modelled_time_is_the_real_cards)
{
	spyre_device *dev = open_dev();
	spyre_buffer *pinned = NULL, *a = NULL, *b = NULL;
	spyre_event *e0 = NULL, *e1 = NULL;
	spyre_launch_profile prof;
	spyre_stream *s = NULL;
	spyre_kernel *k;
	void *host;
	double ms;

	ASSERT_TRUE(dev != NULL);
	ASSERT_EQ(write_clock("model"), 0);
	ASSERT_EQ(spyre_stream_create(dev, 0, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, MIB, SPYRE_MEM_HOST, &pinned), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_map(pinned, &host), SPYRE_SUCCESS);
	memset(host, 0x3c, MIB);
	ASSERT_EQ(spyre_buffer_alloc(dev, MIB, 0, &a), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, MIB, 0, &b), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_create(dev, &e0), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_create(dev, &e1), SPYRE_SUCCESS);

	/* 1 MiB from pinned host memory: PCIe at 35 GB/s, 29960 ns. */
	ASSERT_EQ(spyre_event_record(e0, s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s, a, 0, host, MIB), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_record(e1, s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_elapsed_ms(e0, e1, &ms), SPYRE_SUCCESS);
	printf("  # 1 MiB host to card: %.6f ms modelled\n", ms);
	EXPECT_TRUE(ms > 0.0299595 && ms < 0.0299605);

	/* Host time between submissions is not card time. */
	ASSERT_EQ(spyre_event_record(e0, s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	usleep(50 * 1000);
	ASSERT_EQ(spyre_memcpy_dtod_async(s, b, 0, a, 0, MIB), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_record(e1, s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_elapsed_ms(e0, e1, &ms), SPYRE_SUCCESS);
	printf("  # 1 MiB card to card after a 50 ms pause: %.6f ms modelled\n", ms);
	EXPECT_TRUE(ms > 0.0099865 && ms < 0.0099875);	/* 105 GB/s: 9987 ns */

	/* A launch lasts its modelled device time, start to end. */
	k = copy_kernel(dev, 1024);
	ASSERT_TRUE(k != NULL);
	ASSERT_EQ(spyre_kernel_set_arg(k, 0, a, 0), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_set_arg(k, 1, b, 0), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch_profiled(s, k, &prof), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	printf("  # launch: %llu ns modelled, start %llu end %llu\n",
	       (unsigned long long)prof.device_ns, (unsigned long long)prof.start_ns,
	       (unsigned long long)prof.end_ns);
	EXPECT_TRUE(prof.device_ns > 0);
	EXPECT_EQ(prof.end_ns - prof.start_ns, prof.device_ns);

	EXPECT_EQ(write_clock("wall"), 0);
	spyre_kernel_destroy(k);
	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
	spyre_buffer_free(a);
	spyre_buffer_free(b);
	spyre_buffer_free(pinned);
	spyre_stream_destroy(s);
	spyre_device_close(dev);
}

TAP_MAIN()
