// SPDX-License-Identifier: MIT
/*
 * The OpenBLAS reference for engine-bench: sgemm of n x n x n on `threads`
 * threads, best of `reps`.  engine-bench runs it as a child process with
 * OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment
 * (OpenBLAS reads them when it loads, and they can slow it), so the ratio
 * compares with what Debian's OpenBLAS picks for this CPU.
 *
 * usage: openblas-ref N THREADS REPS
 * prints: "<gflops> <corename> | <config>"
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cblas.h>

/* Not in every Debian cblas.h; exported by libopenblas. */
char *openblas_get_corename(void);
char *openblas_get_config(void);
void openblas_set_num_threads(int threads);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int n, threads, reps;
	float *a, *b, *c;
	double best = 1e30;

	if (argc != 4)
		return 2;
	n = atoi(argv[1]);
	threads = atoi(argv[2]);
	reps = atoi(argv[3]);
	if (n <= 0 || threads <= 0 || reps <= 0)
		return 2;
	openblas_set_num_threads(threads);
	a = malloc(sizeof(float) * n * n);
	b = malloc(sizeof(float) * n * n);
	c = malloc(sizeof(float) * n * n);
	if (!a || !b || !c)
		return 1;
	for (long i = 0; i < (long)n * n; i++) {
		a[i] = (float)(i % 17) * 0.25f;
		b[i] = (float)(i % 13) * 0.5f;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_s(), dt;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		dt = now_s() - t0;
		if (dt < best)
			best = dt;
	}
	printf("%.3f %s | %s\n", 2.0 * n * n * n / best / 1e9, openblas_get_corename(),
	       openblas_get_config());
	free(a);
	free(b);
	free(c);
	return 0;
}
