// SPDX-License-Identifier: MIT
/*
 * A tiny transformer decoder (random weights): LAYERS pre-norm blocks of
 * multi-head attention with a KV cache and a SiLU MLP, built from the op
 * library.  It runs a prefill of PROMPT tokens, then decodes STEPS tokens
 * one at a time, twice: eagerly (every op queued as it is called) and as
 * graphs (the prefill, and each decode position, captured once and
 * replayed with one submission).  Both give the same bits; the program
 * prints tokens/s, wall and device time for each (medians of ROUNDS
 * rounds, each timing both modes back to back), and with --json a
 * "SPYRE-BENCH-JSON [...]" line with the graph/eager speedups
 * (runtime.graph_vs_eager_decode, runtime.graph_vs_eager_prefill).
 *
 * Device times are on the card's clock (spyre_device_get_clock): with the
 * modelled clock (sysfs timestamp_clock = model) they are what the real
 * card would take, and the program also prints the real card's predicted
 * tokens/s and the time of each layer.
 *
 * Per layer: rmsnorm; per head q, k, v = x Wq_h, x Wk_h, x Wv_h (k and v
 * written straight into the cache rows of the new positions), K^T by
 * transpose, scores = q K^T (Wq pre-scaled by 1/sqrt(64)), + causal mask
 * (prefill), softmax, p V, then o += head . Wo_h; x += o; rmsnorm; x += MLP.
 *
 * With --paced ROUNDS it only times graph prefills for a benchmark that
 * interleaves them with its own work: per round it prints
 * "SPYRE-PACED-READY r", waits for a line on standard input, replays the
 * prefill graph once and prints "SPYRE-PACED-MS r <wall ms>" (launch to
 * synchronize; no events around it).
 *
 * usage: decoder [--json | --paced ROUNDS] [layers prompt steps]   (default 2 64 16)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spyre/spyre.h"
#include "spyre/spyre_ops.h"

#define D	256	/* model width */
#define HEADS	4
#define HD	64	/* head width */
#define FF	1024	/* MLP width */
#define MAX_LAYERS 8

#define CHECK(call)								\
	do {									\
		spyre_status st_ = (call);					\
		if (st_) {							\
			fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__,	\
				#call, spyre_strerror(st_), spyre_last_error_detail()); \
			exit(1);						\
		}								\
	} while (0)

static spyre_device *dev;
static spyre_stream *st;
static uint32_t rng = 7;

static float frand(void)
{
	rng = rng * 1664525u + 1013904223u;
	return (float)((rng >> 8) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

/* A buffer of `bytes`; tensors are views of it. */
static spyre_buffer *buffer(uint64_t bytes)
{
	spyre_buffer *b;

	CHECK(spyre_buffer_alloc(dev, bytes, SPYRE_MEM_DEVICE, &b));
	return b;
}

/* A rows x cols fp16 view of buf at byte offset off. */
static spyre_tensor view(spyre_buffer *buf, uint64_t off, uint32_t rows, uint32_t cols)
{
	uint32_t shape[2] = { rows, cols };
	spyre_layout l;
	spyre_tensor t;

	CHECK(spyre_tensor_layout(SPYRE_DTYPE_FP16, 2, shape, &l));
	CHECK(spyre_tensor_init(&t, buf, off, &l));
	return t;
}

/* A rows x cols fp16 tensor of random values times scale (or `fill`). */
static spyre_tensor weights(uint32_t rows, uint32_t cols, float scale, int fill)
{
	spyre_tensor t = view(buffer((uint64_t)rows * ((cols + 63) / 64) * 128), 0, rows, cols);
	float *h = malloc(sizeof(float) * rows * cols);
	void *packed = malloc(t.layout.bytes);

	if (!h || !packed)
		exit(1);
	for (size_t i = 0; i < (size_t)rows * cols; i++)
		h[i] = fill ? scale : frand() * scale;
	CHECK(spyre_tensor_pack(&t.layout, h, SPYRE_DTYPE_FP32, packed));
	CHECK(spyre_memcpy_htod(t.buf, 0, packed, t.layout.bytes));
	free(h);
	free(packed);
	return t;
}

struct layer {
	spyre_tensor g1, g2, wq[HEADS], wk[HEADS], wv[HEADS], wo[HEADS], w1, w2;
	spyre_buffer *kc[HEADS], *vc[HEADS];	/* caches: max_len rows of HD */
};

static struct layer layers[MAX_LAYERS];
static unsigned nlayers;
/* When set, forward() records layer_ev[l] before layer l and one after the last. */
static int mark_layers;
static spyre_event *layer_ev[MAX_LAYERS + 1];
static uint32_t max_len;
/* Scratch buffers, sized for the prompt (the largest T). */
static spyre_buffer *b_xn, *b_q, *b_kt, *b_sc, *b_p, *b_h, *b_o, *b_t, *b_m, *b_mask;

static uint64_t rows_bytes(uint32_t rows, uint32_t cols)
{
	return (uint64_t)rows * ((cols + 63) / 64) * 128;
}

/*
 * One pass over every layer for T new tokens at positions pos .. pos+T-1:
 * in (T x D) -> out (T x D).  Queues the ops on st.
 */
static void forward(spyre_tensor *in, spyre_tensor *out, uint32_t pos, uint32_t T)
{
	uint32_t L = pos + T;	/* keys attended to */
	spyre_tensor xn = view(b_xn, 0, T, D), q = view(b_q, 0, T, HD);
	spyre_tensor kt = view(b_kt, 0, HD, L), sc = view(b_sc, 0, T, L), p = view(b_p, 0, T, L);
	spyre_tensor h = view(b_h, 0, T, HD), o = view(b_o, 0, T, D), t = view(b_t, 0, T, D);
	spyre_tensor m = view(b_m, 0, T, D), mask = view(b_mask, 0, T, T);

	for (unsigned l = 0; l < nlayers; l++) {
		struct layer *ly = &layers[l];
		spyre_tensor *x = l ? out : in;

		if (mark_layers)
			CHECK(spyre_event_record(layer_ev[l], st));
		CHECK(spyre_op_rmsnorm(st, x, &ly->g1, 1e-5f, &xn));
		for (int hd = 0; hd < HEADS; hd++) {
			spyre_tensor knew = view(ly->kc[hd], (uint64_t)pos * 128, T, HD);
			spyre_tensor vnew = view(ly->vc[hd], (uint64_t)pos * 128, T, HD);
			spyre_tensor kall = view(ly->kc[hd], 0, L, HD);
			spyre_tensor vall = view(ly->vc[hd], 0, L, HD);

			CHECK(spyre_op_matmul(st, &xn, &ly->wq[hd], SPYRE_ACT_NONE, &q));
			CHECK(spyre_op_matmul(st, &xn, &ly->wk[hd], SPYRE_ACT_NONE, &knew));
			CHECK(spyre_op_matmul(st, &xn, &ly->wv[hd], SPYRE_ACT_NONE, &vnew));
			CHECK(spyre_op_transpose(st, &kall, &kt));
			CHECK(spyre_op_matmul(st, &q, &kt, SPYRE_ACT_NONE, &sc));
			if (T > 1)	/* prefill from 0: causal mask (L == T) */
				CHECK(spyre_op_binary(st, SPYRE_OP_ADD, &sc, &mask, &sc));
			CHECK(spyre_op_softmax(st, &sc, &p));
			CHECK(spyre_op_matmul(st, &p, &vall, SPYRE_ACT_NONE, &h));
			CHECK(spyre_op_matmul(st, &h, &ly->wo[hd], SPYRE_ACT_NONE, hd ? &t : &o));
			if (hd)
				CHECK(spyre_op_binary(st, SPYRE_OP_ADD, &o, &t, &o));
		}
		CHECK(spyre_op_binary(st, SPYRE_OP_ADD, x, &o, out));
		CHECK(spyre_op_rmsnorm(st, out, &ly->g2, 1e-5f, &xn));
		CHECK(spyre_op_mlp(st, &xn, &ly->w1, SPYRE_ACT_SILU, &ly->w2, &m));
		CHECK(spyre_op_binary(st, SPYRE_OP_ADD, out, &m, out));
		if (mark_layers && l == nlayers - 1)
			CHECK(spyre_event_record(layer_ev[nlayers], st));
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct timing {
	double wall_s, device_ms;
};

/* Run fn(arg) `reps` times, each synchronised, timing wall and device. */
static struct timing timed(void (*fn)(void *, int), void *arg, int reps)
{
	struct timing t = { 0, 0 };
	spyre_event *e0, *e1;

	CHECK(spyre_event_create(dev, &e0));
	CHECK(spyre_event_create(dev, &e1));
	for (int i = 0; i < reps; i++) {
		double t0 = now(), ms = 0;

		CHECK(spyre_event_record(e0, st));
		fn(arg, i);
		CHECK(spyre_event_record(e1, st));
		CHECK(spyre_stream_synchronize(st));
		t.wall_s += now() - t0;
		CHECK(spyre_event_elapsed_ms(e0, e1, &ms));
		t.device_ms += ms;
	}
	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
	return t;
}

static uint32_t prompt, steps;
static spyre_tensor xin, xout, din, dout;
static spyre_graph_exec *g_prefill, **g_step;

static void prefill_eager(void *a, int i)
{
	(void)a;
	(void)i;
	forward(&xin, &xout, 0, prompt);
}

/* Decode step i: position prompt + i; din -> dout, then dout -> din. */
static void step_eager(void *a, int i)
{
	(void)a;
	forward(&din, &dout, prompt + (uint32_t)i, 1);
	CHECK(spyre_memcpy_dtod_async(st, din.buf, 0, dout.buf, 0, dout.layout.bytes));
}

static void prefill_graph(void *a, int i)
{
	(void)a;
	(void)i;
	CHECK(spyre_graph_launch(g_prefill, st));
}

static void step_graph(void *a, int i)
{
	(void)a;
	CHECK(spyre_graph_launch(g_step[i], st));
}

static spyre_graph_exec *capture(void (*fn)(void *, int), int i, uint32_t *nodes)
{
	spyre_graph *g;
	spyre_graph_exec *ge;

	CHECK(spyre_stream_begin_capture(st));
	fn(NULL, i);
	CHECK(spyre_stream_end_capture(st, &g));
	*nodes = spyre_graph_num_nodes(g);
	CHECK(spyre_graph_instantiate(g, &ge));
	spyre_graph_destroy(g);
	return ge;
}

/* --paced: rounds of one graph prefill, each started by a line on stdin; 0 or 1. */
static int paced_prefills(int rounds)
{
	char line[64];

	for (int r = 0; r < rounds; r++) {
		double t0;

		printf("SPYRE-PACED-READY %d\n", r);
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "decoder: --paced: standard input ended before round %d of %d\n",
				r, rounds);
			return 1;
		}
		t0 = now();
		prefill_graph(NULL, 0);
		CHECK(spyre_stream_synchronize(st));
		printf("SPYRE-PACED-MS %d %.4f\n", r, (now() - t0) * 1e3);
	}
	fflush(stdout);
	return 0;
}

/* Per-round speedups spread widely on a shared host: 21 keep the median steady. */
#define ROUNDS 21

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v)
{
	double c[ROUNDS];

	memcpy(c, v, sizeof(c));
	qsort(c, ROUNDS, sizeof(c[0]), cmp_double);
	return c[ROUNDS / 2];
}

static double least(const double *v)
{
	double m = v[0];

	for (int r = 1; r < ROUNDS; r++)
		m = v[r] < m ? v[r] : m;
	return m;
}

static double most(const double *v)
{
	double m = v[0];

	for (int r = 1; r < ROUNDS; r++)
		m = v[r] > m ? v[r] : m;
	return m;
}

static struct timing median_timing(const struct timing *t)
{
	double w[ROUNDS], d[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		w[r] = t[r].wall_s;
		d[r] = t[r].device_ms;
	}
	return (struct timing){ median(w), median(d) };
}

/* Device ms of each layer in one eager run of fn (events between layers). */
static void layer_times(void (*fn)(void *, int), double *ms)
{
	for (unsigned l = 0; l <= nlayers; l++)
		CHECK(spyre_event_create(dev, &layer_ev[l]));
	mark_layers = 1;
	fn(NULL, 0);
	mark_layers = 0;
	CHECK(spyre_stream_synchronize(st));
	for (unsigned l = 0; l < nlayers; l++)
		CHECK(spyre_event_elapsed_ms(layer_ev[l], layer_ev[l + 1], &ms[l]));
	for (unsigned l = 0; l <= nlayers; l++)
		spyre_event_destroy(layer_ev[l]);
}

/* The decode input: the prefill's last row. */
static void reset_decode_input(void)
{
	CHECK(spyre_memcpy_dtod(din.buf, 0, xout.buf, (uint64_t)(prompt - 1) * 512, 512));
}

int main(int argc, char **argv)
{
	int json = argc > 1 && !strcmp(argv[1], "--json"), a = json ? 2 : 1, paced = 0, rc;
	struct timing pe, pg, de, dg, t[4][ROUNDS];
	double layer_prefill[MAX_LAYERS], layer_decode[MAX_LAYERS];
	spyre_clock clock;
	double ratio[2][ROUNDS], prefill_x, decode_x;
	uint32_t nodes_prefill = 0, nodes_step = 0;
	void *out_eager = NULL, *out_graph = NULL;
	float *hmask;
	int same;

	if (argc > 1 && !strcmp(argv[1], "--paced")) {
		paced = argc > 2 ? atoi(argv[2]) : 0;
		a = 3;
		if (paced < 1) {
			fprintf(stderr, "decoder: --paced takes a number of rounds, at least 1\n");
			return 2;
		}
	}
	nlayers = argc > a + 2 ? (unsigned)atoi(argv[a]) : 2;
	prompt = argc > a + 2 ? (uint32_t)atoi(argv[a + 1]) : 64;
	steps = argc > a + 2 ? (uint32_t)atoi(argv[a + 2]) : 16;
	if (!nlayers || nlayers > MAX_LAYERS || prompt < 2 || !steps)
		return 2;
	max_len = prompt + steps;
	CHECK(spyre_device_open(0, &dev));
	CHECK(spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &st));
	for (unsigned l = 0; l < nlayers; l++) {
		struct layer *ly = &layers[l];

		ly->g1 = weights(1, D, 1, 1);
		ly->g2 = weights(1, D, 1, 1);
		for (int h = 0; h < HEADS; h++) {
			ly->wq[h] = weights(D, HD, 0.125f / 16, 0);	/* 1/sqrt(HD) folded in */
			ly->wk[h] = weights(D, HD, 1.0f / 16, 0);
			ly->wv[h] = weights(D, HD, 1.0f / 16, 0);
			ly->wo[h] = weights(HD, D, 1.0f / 16, 0);
			ly->kc[h] = buffer(rows_bytes(max_len, HD));
			ly->vc[h] = buffer(rows_bytes(max_len, HD));
		}
		ly->w1 = weights(D, FF, 1.0f / 16, 0);
		ly->w2 = weights(FF, D, 1.0f / 32, 0);
	}
	b_xn = buffer(rows_bytes(prompt, D));
	b_q = buffer(rows_bytes(prompt, HD));
	b_kt = buffer(rows_bytes(HD, max_len));
	b_sc = buffer(rows_bytes(prompt, max_len));
	b_p = buffer(rows_bytes(prompt, max_len));
	b_h = buffer(rows_bytes(prompt, HD));
	b_o = buffer(rows_bytes(prompt, D));
	b_t = buffer(rows_bytes(prompt, D));
	b_m = buffer(rows_bytes(prompt, D));
	b_mask = buffer(rows_bytes(prompt, prompt));
	/* Causal mask: 0 on and below the diagonal, -30000 above (exp -> 0). */
	hmask = malloc(sizeof(float) * prompt * prompt);
	for (uint32_t i = 0; i < prompt; i++)
		for (uint32_t j = 0; j < prompt; j++)
			hmask[i * prompt + j] = j <= i ? 0 : -30000;
	{
		spyre_tensor mt = view(b_mask, 0, prompt, prompt);
		void *packed = malloc(mt.layout.bytes);

		CHECK(spyre_tensor_pack(&mt.layout, hmask, SPYRE_DTYPE_FP32, packed));
		CHECK(spyre_memcpy_htod(b_mask, 0, packed, mt.layout.bytes));
		free(packed);
	}
	xin = weights(prompt, D, 1, 0);
	xout = view(buffer(rows_bytes(prompt, D)), 0, prompt, D);
	din = view(buffer(512), 0, 1, D);
	dout = view(buffer(512), 0, 1, D);

	/* Warm the op cache (programs generated and loaded once), then time. */
	prefill_eager(NULL, 0);
	reset_decode_input();
	for (uint32_t i = 0; i < steps; i++)
		step_eager(NULL, (int)i);
	CHECK(spyre_stream_synchronize(st));

	/* Graphs: captured and instantiated once, outside the timed runs. */
	g_prefill = capture(prefill_eager, 0, &nodes_prefill);
	g_step = calloc(steps, sizeof(*g_step));
	for (uint32_t i = 0; i < steps; i++)
		g_step[i] = capture(step_eager, (int)i, &nodes_step);
	/* One untimed replay of each, as the eager forms had their warm-up run. */
	prefill_graph(NULL, 0);
	reset_decode_input();
	for (uint32_t i = 0; i < steps; i++)
		step_graph(NULL, (int)i);
	CHECK(spyre_stream_synchronize(st));
	if (paced) {
		rc = paced_prefills(paced);
		goto out;
	}

	/*
	 * ROUNDS rounds, each timing eager then graph for the prefill and for
	 * the decode, so that load on the machine hits both modes alike; the
	 * medians are reported.
	 */
	out_eager = malloc(512);
	out_graph = malloc(512);
	for (int r = 0; r < ROUNDS; r++) {
		t[0][r] = timed(prefill_eager, NULL, 1);
		t[1][r] = timed(prefill_graph, NULL, 1);
		reset_decode_input();
		t[2][r] = timed(step_eager, NULL, (int)steps);
		CHECK(spyre_memcpy_dtoh(out_eager, dout.buf, 0, 512));
		reset_decode_input();
		t[3][r] = timed(step_graph, NULL, (int)steps);
		CHECK(spyre_memcpy_dtoh(out_graph, dout.buf, 0, 512));
		ratio[0][r] = t[0][r].wall_s / t[1][r].wall_s;
		ratio[1][r] = t[2][r].wall_s / t[3][r].wall_s;
	}
	same = !memcmp(out_eager, out_graph, 512);
	layer_times(prefill_eager, layer_prefill);
	reset_decode_input();
	layer_times(step_eager, layer_decode);
	CHECK(spyre_device_get_clock(dev, &clock));
	pe = median_timing(t[0]);
	pg = median_timing(t[1]);
	de = median_timing(t[2]);
	dg = median_timing(t[3]);
	prefill_x = median(ratio[0]);
	decode_x = median(ratio[1]);

	printf("decoder: %u layers, width %d, %d heads, MLP %d, prompt %u, %u decode steps, fp16\n",
	       nlayers, D, HEADS, FF, prompt, steps);
	printf("graph nodes: prefill %u, decode step %u; medians of %d rounds\n", nodes_prefill,
	       nodes_step, ROUNDS);
	printf("card clock: %s\n", clock == SPYRE_CLOCK_MODELLED ?
	       "modelled (device ms is what the real card would take)" :
	       "wall (device ms is the emulator's; timestamp_clock=model for the real card's)");
	printf("%-8s %-6s %12s %12s %14s\n", "phase", "mode", "tokens/s", "wall ms", "device ms");
	printf("%-8s %-6s %12.1f %12.2f %14.3f\n", "prefill", "eager", prompt / pe.wall_s,
	       pe.wall_s * 1e3, pe.device_ms);
	printf("%-8s %-6s %12.1f %12.2f %14.3f\n", "prefill", "graph", prompt / pg.wall_s,
	       pg.wall_s * 1e3, pg.device_ms);
	printf("%-8s %-6s %12.1f %12.2f %14.3f\n", "decode", "eager", steps / de.wall_s,
	       de.wall_s * 1e3 / steps, de.device_ms / steps);
	printf("%-8s %-6s %12.1f %12.2f %14.3f\n", "decode", "graph", steps / dg.wall_s,
	       dg.wall_s * 1e3 / steps, dg.device_ms / steps);
	printf("graph vs eager (wall) per round: decode");
	for (int r = 0; r < ROUNDS; r++)
		printf(" %.2f", ratio[1][r]);
	printf("; prefill");
	for (int r = 0; r < ROUNDS; r++)
		printf(" %.2f", ratio[0][r]);
	printf("\ngraph vs eager (wall, median): decode %.2fx, prefill %.2fx; final state %s\n",
	       decode_x, prefill_x, same ? "bit-identical" : "DIFFERS");
	if (clock == SPYRE_CLOCK_MODELLED)
		printf("real card (modelled, graph): prefill %.1f tokens/s, decode %.1f tokens/s; "
		       "emulator (wall, graph): prefill %.1f tokens/s, decode %.1f tokens/s\n",
		       prompt / (pg.device_ms * 1e-3), steps / (dg.device_ms * 1e-3),
		       prompt / pg.wall_s, steps / dg.wall_s);
	printf("%-8s %16s %16s\n", "layer", "prefill ms", "decode step ms");
	for (unsigned l = 0; l < nlayers; l++)
		printf("%-8u %16.4f %16.4f\n", l, layer_prefill[l], layer_decode[l]);
	if (json)
		printf("SPYRE-BENCH-JSON [{\"name\": \"runtime.graph_vs_eager_decode\", \"value\": %.4f, "
		       "\"unit\": \"x\"}, {\"name\": \"runtime.graph_vs_eager_prefill\", \"value\": %.4f, "
		       "\"unit\": \"x\"}, {\"name\": \"runtime.decoder_decode_tokens_per_s_graph\", "
		       "\"value\": %.4f, \"unit\": \"tokens/s\"}, {\"name\": "
		       "\"runtime.decoder_decode_tokens_per_s_eager\", \"value\": %.4f, \"unit\": "
		       "\"tokens/s\"}, {\"name\": \"runtime.decoder_prefill_tokens_per_s_graph\", "
		       "\"value\": %.4f, \"unit\": \"tokens/s\"}, "
		       "{\"name\": \"runtime.decoder_prefill_ms_graph\", \"value\": %.4f, "
		       "\"unit\": \"ms\"}, "
		       "{\"name\": \"runtime.graph_vs_eager_decode.min\", \"value\": "
		       "%.4f, \"unit\": \"x\"}, {\"name\": \"runtime.graph_vs_eager_decode.max\", "
		       "\"value\": %.4f, \"unit\": \"x\"}, {\"name\": "
		       "\"runtime.graph_vs_eager_prefill.min\", \"value\": %.4f, \"unit\": \"x\"}, "
		       "{\"name\": \"runtime.graph_vs_eager_prefill.max\", \"value\": %.4f, "
		       "\"unit\": \"x\"}]\n",
		       decode_x, prefill_x, steps / dg.wall_s, steps / de.wall_s, prompt / pg.wall_s,
		       pg.wall_s * 1e3, least(ratio[1]),
		       most(ratio[1]), least(ratio[0]), most(ratio[0]));
	rc = same ? 0 : 1;
out:
	for (uint32_t i = 0; i < steps; i++)
		spyre_graph_exec_destroy(g_step[i]);
	spyre_graph_exec_destroy(g_prefill);
	spyre_ops_cache_clear(dev);
	spyre_stream_destroy(st);
	spyre_device_close(dev);
	free(out_eager);
	free(out_graph);
	free(hmask);
	free(g_step);
	return rc;
}
