// SPDX-License-Identifier: MIT
/*
 * What the emulator adds to a LAUNCH beyond the engine's own compute
 * (device.launch_overhead_us): a tiny kernel (one 128-byte stick copied
 * from one buffer to another) launched LAUNCHES times by one CALL of a
 * command list, in QEMU through its qtest protocol (no guest), against the
 * engine running the same image LAUNCHES times on the host with as many
 * threads as QEMU's engine.  ROUNDS rounds each time both in turn; the
 * overhead is the median of the rounds' (QEMU - host) / LAUNCHES, with
 * .min and .max rows.  Beside it, device.nop_us: QEMU's time for an empty
 * command (NOPS of them per doorbell), the card's share of a null job
 * (driver.null_job_us is the guest's whole round trip).
 *
 * usage: launch-bench QEMU_BINARY RESULTS_JSON [QEMU ARGS...]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_testlib.h"
#include "qtest-card.h"
#include "spyre_cmd.h"
#include "spyre_regs.h"

#define LAUNCHES	1000
#define NOPS		63	/* a ring's worth less one */
#define ROUNDS		7
#define IMG_GPA		0x04000000ull	/* the kernel image */
#define ARGS_GPA	0x04100000ull	/* its two arguments */
#define SRC_GPA		0x04101000ull	/* the stick it copies */
#define DST_GPA		0x04102000ull	/* and where */
#define LIST_GPA	0x04200000ull	/* LAUNCHES LAUNCH commands */

/* One stick (64 fp16) from argument 0 to argument 1. */
static uint8_t *copy_kernel(size_t *len)
{
	static struct pb_program prog;
	struct pb_core *core;
	struct pb_op *op;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = 2;
	core = pb_core(&prog, 0);
	op = pb_op(core, SPK_OPC_COPY, SPK_DT_FP16, SPK_DT_FP16, 1, 1, 64);
	op->in[0] = pb_stream(core, pb_linear(SPK_EP_DRAM, 0, 0, 1), pb_op_end(), 1, 1);
	op->out = pb_stream(core, pb_op_end(), pb_linear(SPK_EP_DRAM, 1, 0, 1), 1, 1);
	return pb_serialize(&prog, len);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Host: the image LAUNCHES times on the engine; seconds. */
static double host_round(struct spyre_program *p, struct test_mem *mem)
{
	struct spyre_engine_mem ops = test_mem_ops(mem);
	struct spyre_engine_stats stats;
	struct spyre_engine_error err;
	uint64_t args[2] = { 0, 4096 };
	double t0 = now_s();

	for (int i = 0; i < LAUNCHES; i++) {
		enum spyre_engine_status st = spyre_program_run(p, args, 2, &ops, &stats, &err);

		if (st)
			die("engine: %s: %s", spyre_engine_status_name(st), err.detail);
	}
	return now_s() - t0;
}

/* QEMU: one CALL of the LAUNCHES commands; seconds. */
static double qemu_round(uint32_t *idx, uint64_t stamp)
{
	uint64_t entry;
	double t;

	uint32_t launched = reg_rd(SPYRE_REG_LAUNCH_COUNT);

	wr64(SRC_GPA, stamp);
	wr64(DST_GPA, 0);
	entry = card_put(idx, SPYRE_OP_CALL, 0, VA_HOST + LIST_GPA, LAUNCHES);
	t = card_go(*idx);
	launched = reg_rd(SPYRE_REG_LAUNCH_COUNT) - launched;
	if (launched != LAUNCHES)
		die("the card ran %u launches, not %d", launched, LAUNCHES);
	if (card_status(entry) != SPYRE_CMD_STATUS_SUCCESS)
		die("the CALL of %d launches failed with status %u", LAUNCHES, card_status(entry));
	if (qtest("readq 0x%llx", DST_GPA) != stamp)
		die("the kernel did not copy its stick");
	return t;
}

/* QEMU: NOPS empty commands from one doorbell; seconds per command. */
static double nop_round(uint32_t *idx)
{
	uint64_t entry[NOPS];
	double t;

	for (int i = 0; i < NOPS; i++)
		entry[i] = card_put(idx, SPYRE_OP_NOP, 0, 0, 0);
	t = card_go(*idx);
	for (int i = 0; i < NOPS; i++)
		if (card_status(entry[i]) != SPYRE_CMD_STATUS_SUCCESS)
			die("a NOP failed");
	return t / NOPS;
}

int main(int argc, char **argv)
{
	double q[ROUNDS], h[ROUNDS], over[ROUNDS], nop[ROUNDS];
	struct spyre_engine_config cfg;
	struct spyre_engine_error err;
	struct spyre_program *prog;
	struct test_mem mem;
	uint8_t *image, *list;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t args[2] = { VA_HOST + SRC_GPA, VA_HOST + DST_GPA };
	uint32_t idx = 0;
	char log[4096], threads_arg[48], **extra;
	size_t len;
	FILE *json;

	if (argc < 3)
		die("usage: launch-bench QEMU RESULTS_JSON [QEMU ARGS...]");
	image = copy_kernel(&len);
	if (!image)
		die("cannot build the kernel");
	spyre_engine_config_default(&cfg);
	cfg.host_threads = cpus > 0 ? (unsigned)cpus : 1;
	if (spyre_program_load(&cfg, image, len, &prog, &err))
		die("engine load: %s", err.detail);
	test_mem_init(&mem, 1 << 20);

	snprintf(log, sizeof(log), "%s.qemu.log", argv[2]);
	/* The card's engine on as many threads as the host side. */
	snprintf(threads_arg, sizeof(threads_arg), "spyre.engine-threads=%u", cfg.host_threads);
	extra = calloc((size_t)argc, sizeof(*extra));
	if (!extra)
		die("no memory");
	extra[0] = "-global";
	extra[1] = threads_arg;
	memcpy(extra + 2, argv + 3, (size_t)(argc - 3) * sizeof(*extra));
	card_start("launch-bench", argv[1], log, 64, extra, argc - 1);
	free(extra);
	card_write(IMG_GPA, image, len);
	card_write(ARGS_GPA, args, sizeof(args));
	list = calloc(LAUNCHES, SPYRE_CMD_SIZE);
	if (!list)
		die("no memory");
	for (int i = 0; i < LAUNCHES; i++)
		spyre_cmd_encode3(list + i * SPYRE_CMD_SIZE, SPYRE_OP_LAUNCH, VA_HOST + IMG_GPA,
				  VA_HOST + ARGS_GPA, sizeof(args));
	card_write(LIST_GPA, list, (size_t)LAUNCHES * SPYRE_CMD_SIZE);
	free(list);

	/* Warm-up: the card loads the image once; the host pool starts. */
	qemu_round(&idx, 1);
	host_round(prog, &mem);
	for (int r = 0; r < ROUNDS; r++) {
		q[r] = qemu_round(&idx, 0x1234567800000000ull + r) / LAUNCHES * 1e6;
		h[r] = host_round(prog, &mem) / LAUNCHES * 1e6;
		over[r] = q[r] - h[r];
		nop[r] = nop_round(&idx) * 1e6;
	}
	card_stop();
	spyre_program_free(prog);
	test_mem_fini(&mem);
	free(image);

	qsort(q, ROUNDS, sizeof(double), cmp_double);
	qsort(h, ROUNDS, sizeof(double), cmp_double);
	qsort(over, ROUNDS, sizeof(double), cmp_double);
	qsort(nop, ROUNDS, sizeof(double), cmp_double);
	{
		const struct {
			const char *name;
			const double *v;
			const char *note;
		} rows[] = {
			{ "device.launch_us", q, "a LAUNCH in QEMU" },
			{ "engine.launch_us", h, "the same on the host engine" },
			{ "device.launch_overhead_us", over, "QEMU beyond the engine; goal <= 10" },
			{ "device.nop_us", nop, "an empty command in QEMU, 63 a doorbell" },
		};

		json = fopen(argv[2], "w");
		if (!json)
			die("cannot write %s", argv[2]);
		fprintf(json, "[\n");
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			printf("%-40s %10.3f us (%s; median of %d rounds, min %.3f, max %.3f)\n",
			       rows[i].name, rows[i].v[ROUNDS / 2], rows[i].note, ROUNDS,
			       rows[i].v[0], rows[i].v[ROUNDS - 1]);
			fprintf(json, "  {\"name\": \"%s\", \"value\": %.4f, \"unit\": \"us\"},\n"
				"  {\"name\": \"%s.min\", \"value\": %.4f, \"unit\": \"us\"},\n"
				"  {\"name\": \"%s.max\", \"value\": %.4f, \"unit\": \"us\"}%s\n",
				rows[i].name, rows[i].v[ROUNDS / 2], rows[i].name, rows[i].v[0],
				rows[i].name, rows[i].v[ROUNDS - 1],
				i + 1 < sizeof(rows) / sizeof(rows[0]) ? "," : "");
		}
		fprintf(json, "]\n");
		fclose(json);
	}
	return 0;
}
