// SPDX-License-Identifier: MIT
/*
 * bias_gelu: a kernel of your own, y = gelu(x + bias), written with the
 * kernel-authoring API (spyre/spyre_kernel_builder.h) as docs/kernels.md
 * explains.  x and y are [M, N] fp16 tensors in the op library's layout,
 * bias one fp16 row broadcast over x's rows.  Each core takes M / 32 rows;
 * per core an ADD fires once a row of x and of bias has arrived and hands its
 * fp32 row straight to a GELU, so the sum never goes to device memory.
 * Checked against the CPU and against the op library's two launches
 * (spyre_op_binary ADD, then spyre_op_unary GELU).
 *
 * Build: cc bias_gelu.c $(pkg-config --cflags --libs spyre) -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <spyre/spyre.h>
#include <spyre/spyre_kernel_builder.h>
#include <spyre/spyre_ops.h>

#define M 256			/* rows */
#define N 1024			/* elements per row */
#define CORES 32
#define ROWS_PER_CORE (M / CORES)
#define ROW_STICKS (N * 2 / SPK_STICK_BYTES)		/* fp16 row */
#define ROW_STICKS_F32 (N * 4 / SPK_STICK_BYTES)	/* fp32 row */

#define CHECK(call)                                                                  \
	do {                                                                         \
		spyre_status st_ = (call);                                           \
		if (st_ != SPYRE_SUCCESS) {                                          \
			fprintf(stderr, "bias_gelu: %s: %s: %s\n", #call,            \
				spyre_strerror(st_), spyre_last_error_detail());      \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

enum { ARG_X, ARG_BIAS, ARG_Y, NUM_ARGS };

/* One core's part: rows [core * ROWS_PER_CORE, +ROWS_PER_CORE). */
static void add_core(spyre_kernel_builder *b, uint32_t core)
{
	uint64_t first = (uint64_t)core * ROWS_PER_CORE * ROW_STICKS * SPK_STICK_BYTES;
	uint32_t sticks = ROWS_PER_CORE * ROW_STICKS;
	spyre_endpoint bias = spyre_endpoint_dram(ARG_BIAS, 0, ROW_STICKS);
	spyre_op_desc add = spyre_op_desc_init(SPK_OPC_ADD, SPK_DT_FP16, SPK_DT_FP32,
					       ROWS_PER_CORE, 1, N);
	spyre_op_desc gelu = spyre_op_desc_init(SPK_OPC_GELU, SPK_DT_FP32, SPK_DT_FP16,
						ROWS_PER_CORE, 1, N);
	spyre_endpoint x = spyre_endpoint_dram(ARG_X, first, sticks);
	spyre_endpoint y = spyre_endpoint_dram(ARG_Y, first, sticks);
	spyre_endpoint op = spyre_endpoint_op();

	/* The bias row again for every row: an outer loop of stride 0. */
	bias.count[1] = ROWS_PER_CORE;
	bias.stride[1] = 0;
	/* FIFOs of two rows: the next row streams in while one fires. */
	CHECK(spyre_kernel_builder_add_stream(b, core, &x, &op, sticks, 2 * ROW_STICKS,
					      &add.in[0]));
	CHECK(spyre_kernel_builder_add_stream(b, core, &bias, &op, sticks, 2 * ROW_STICKS,
					      &add.in[1]));
	CHECK(spyre_kernel_builder_add_stream(b, core, &op, &op,
					      ROWS_PER_CORE * ROW_STICKS_F32,
					      2 * ROW_STICKS_F32, &add.out));
	gelu.in[0] = add.out;
	CHECK(spyre_kernel_builder_add_stream(b, core, &op, &y, sticks, 2 * ROW_STICKS,
					      &gelu.out));
	CHECK(spyre_kernel_builder_add_op(b, core, &add, NULL));
	CHECK(spyre_kernel_builder_add_op(b, core, &gelu, NULL));
}

static float gelu_ref(float v)
{
	return (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
}

/* Largest error against the CPU, in units of the fp16 result's precision. */
static double worst_error(const float *x, const float *bias, const float *y)
{
	double worst = 0;

	for (int r = 0; r < M; r++) {
		for (int c = 0; c < N; c++) {
			double want = gelu_ref(x[r * N + c] + bias[c]);
			double tol = fabs(want) * 0x1p-10 + 0x1p-14;	/* 1 fp16 ulp */
			double e = fabs(y[r * N + c] - want) / tol;

			if (!(e <= worst))
				worst = e;
		}
	}
	return worst;
}

int main(void)
{
	uint32_t shape[2] = { M, N }, row = N;
	spyre_layout lx, lb;
	spyre_tensor tx, tb, ty, tsum;
	spyre_kernel_builder *b;
	spyre_launch_profile fused;
	spyre_op_profile p_add, p_gelu;
	spyre_device *dev;
	spyre_stream *s;
	spyre_buffer *bx, *bb, *by, *bsum;
	spyre_kernel *k;
	float *x = malloc(sizeof(float) * M * N), *bias = malloc(sizeof(float) * N);
	float *y = malloc(sizeof(float) * M * N), *y_lib = malloc(sizeof(float) * M * N);
	void *packed;
	double e_fused, e_lib;

	if (!x || !bias || !y || !y_lib)
		return 1;
	for (int i = 0; i < M * N; i++)
		x[i] = (float)((i * 37 % 401) - 200) / 64.0f;
	for (int c = 0; c < N; c++)
		bias[c] = (float)((c * 13 % 61) - 30) / 32.0f;

	CHECK(spyre_device_open(0, &dev));
	CHECK(spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &s));
	CHECK(spyre_tensor_layout(SPYRE_DTYPE_FP16, 2, shape, &lx));
	CHECK(spyre_tensor_layout(SPYRE_DTYPE_FP16, 1, &row, &lb));
	CHECK(spyre_buffer_alloc(dev, lx.bytes, SPYRE_MEM_DEVICE, &bx));
	CHECK(spyre_buffer_alloc(dev, lb.bytes, SPYRE_MEM_DEVICE, &bb));
	CHECK(spyre_buffer_alloc(dev, lx.bytes, SPYRE_MEM_DEVICE, &by));
	CHECK(spyre_buffer_alloc(dev, lx.bytes, SPYRE_MEM_DEVICE, &bsum));
	CHECK(spyre_tensor_init(&tx, bx, 0, &lx));
	CHECK(spyre_tensor_init(&tb, bb, 0, &lb));
	CHECK(spyre_tensor_init(&ty, by, 0, &lx));
	CHECK(spyre_tensor_init(&tsum, bsum, 0, &lx));
	packed = malloc(lx.bytes);
	if (!packed)
		return 1;
	CHECK(spyre_tensor_pack(&lx, x, SPYRE_DTYPE_FP32, packed));
	CHECK(spyre_memcpy_htod(bx, 0, packed, lx.bytes));
	CHECK(spyre_tensor_pack(&lb, bias, SPYRE_DTYPE_FP32, packed));
	CHECK(spyre_memcpy_htod(bb, 0, packed, lb.bytes));
	/* The CPU reference sees the inputs as the card does: in fp16. */
	CHECK(spyre_tensor_unpack(&lb, packed, bias, SPYRE_DTYPE_FP32));
	CHECK(spyre_tensor_pack(&lx, x, SPYRE_DTYPE_FP32, packed));
	CHECK(spyre_tensor_unpack(&lx, packed, x, SPYRE_DTYPE_FP32));

	/* The kernel: described, checked, built and loaded. */
	CHECK(spyre_kernel_builder_create(NUM_ARGS, &b));
	for (uint32_t core = 0; core < CORES; core++)
		add_core(b, core);
	CHECK(spyre_kernel_builder_load(b, dev, &k));
	CHECK(spyre_kernel_builder_destroy(b));
	CHECK(spyre_kernel_set_arg(k, ARG_X, bx, 0));
	CHECK(spyre_kernel_set_arg(k, ARG_BIAS, bb, 0));
	CHECK(spyre_kernel_set_arg(k, ARG_Y, by, 0));
	CHECK(spyre_kernel_launch_profiled(s, k, &fused));

	/* The op library's way: two launches, the sum through device memory. */
	CHECK(spyre_ops_profile_next(&p_add));
	CHECK(spyre_op_binary(s, SPYRE_OP_ADD, &tx, &tb, &tsum));
	CHECK(spyre_ops_profile_next(&p_gelu));
	CHECK(spyre_op_unary(s, SPYRE_OP_GELU, &tsum, 0.0f, &tsum));
	CHECK(spyre_stream_synchronize(s));

	CHECK(spyre_memcpy_dtoh(packed, by, 0, lx.bytes));
	CHECK(spyre_tensor_unpack(&lx, packed, y, SPYRE_DTYPE_FP32));
	CHECK(spyre_memcpy_dtoh(packed, bsum, 0, lx.bytes));
	CHECK(spyre_tensor_unpack(&lx, packed, y_lib, SPYRE_DTYPE_FP32));
	e_fused = worst_error(x, bias, y);
	e_lib = worst_error(x, bias, y_lib);
	printf("bias_gelu: [%d x %d] fp16 on %d cores\n", M, N, CORES);
	printf("  this kernel:          1 launch,   %6.1f us on the card, %llu DRAM bytes, worst error %.2f ulp\n",
	       fused.device_ns / 1e3,
	       (unsigned long long)(fused.dram_bytes_read + fused.dram_bytes_written), e_fused);
	printf("  op library add, gelu: %u launches, %6.1f us on the card, %llu DRAM bytes, worst error %.2f ulp\n",
	       p_add.launches + p_gelu.launches,
	       (p_add.total.device_ns + p_gelu.total.device_ns) / 1e3,
	       (unsigned long long)(p_add.total.dram_bytes_read + p_add.total.dram_bytes_written +
				    p_gelu.total.dram_bytes_read + p_gelu.total.dram_bytes_written),
	       e_lib);
	CHECK(spyre_kernel_destroy(k));
	CHECK(spyre_device_close(dev));
	free(packed);
	free(x);
	free(bias);
	free(y);
	free(y_lib);
	/* One fp16 rounding of the exact result gives at most 0.5 ulp; allow 2. */
	if (!(e_fused <= 2.0) || !(e_lib <= 4.0)) {
		printf("bias_gelu: FAILED (worst error past the tolerance)\n");
		return 1;
	}
	printf("bias_gelu: ok (matches the CPU)\n");
	return 0;
}
