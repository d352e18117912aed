// SPDX-License-Identifier: MIT
/*
 * spyre-smi dmon: one line per card every -d seconds, -c times (or until
 * interrupted), as nvidia-smi dmon: temperature, power, utilisation,
 * memory used, processes, commands/s and DMA bytes/s over the interval.
 * Text has '#' header lines; --csv one CSV header line; --json one object
 * per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smi.h"

static void header(const struct smi_opts *o)
{
	if (o->json)
		return;
	if (o->csv) {
		printf("time,index,pci_address,temperature_c,power_w,utilization_percent,"
		       "memory_used_bytes,processes,commands_per_s,dma_bytes_per_s\n");
		return;
	}
	printf("# %-8s %3s  %-12s  %5s  %6s  %5s  %9s  %5s  %9s  %9s\n", "time", "idx", "pci",
	       "temp", "power", "util", "mem_used", "procs", "cmds", "dma");
	printf("# %-8s %3s  %-12s  %5s  %6s  %5s  %9s  %5s  %9s  %9s\n", "hh:mm:ss", "", "",
	       "C", "W", "%", "MiB", "", "1/s", "MB/s");
}

/* @v formatted with @fmt into @buf, or @none if unknown (< 0). */
static const char *num(char *buf, size_t size, const char *fmt, double v, const char *none)
{
	if (v < 0)
		snprintf(buf, size, "%s", none);
	else
		snprintf(buf, size, fmt, v);
	return buf;
}

static void line_text(const struct smi_card *c, const char *when, double cmds, double bytes)
{
	char t[16], p[16], u[16], cs[24], bs[24];

	printf("  %-8s %3d  %-12s  %5s  %6s  %5s  %9.1f  %5d  %9s  %9s\n", when + 11, c->index,
	       c->props.pci_address,
	       num(t, sizeof(t), "%.0f", c->have_temp ? (double)c->temp_mc / 1000 : -1, "-"),
	       num(p, sizeof(p), "%.1f", c->have_power ? (double)c->power_uw / 1e6 : -1, "-"),
	       num(u, sizeof(u), "%.1f", c->util_pct, "-"), (double)c->mem_used / (1 << 20),
	       c->procs, num(cs, sizeof(cs), "%.1f", cmds, "-"),
	       num(bs, sizeof(bs), "%.2f", bytes < 0 ? -1 : bytes / 1e6, "-"));
}

static void line_csv(const struct smi_card *c, const char *when, double cmds, double bytes)
{
	char t[16], p[16], u[16], cs[24], bs[24];

	printf("%s,%d,%s,%s,%s,%s,%llu,%d,%s,%s\n", when, c->index, c->props.pci_address,
	       num(t, sizeof(t), "%.1f", c->have_temp ? (double)c->temp_mc / 1000 : -1, ""),
	       num(p, sizeof(p), "%.1f", c->have_power ? (double)c->power_uw / 1e6 : -1, ""),
	       num(u, sizeof(u), "%.1f", c->util_pct, ""), (unsigned long long)c->mem_used,
	       c->procs, num(cs, sizeof(cs), "%.1f", cmds, ""), num(bs, sizeof(bs), "%.0f", bytes, ""));
}

static void line_json(const struct smi_card *c, const char *when, double cmds, double bytes)
{
	printf("{\"time\": \"%s\", \"index\": %d, \"pci_address\": \"%s\", ", when, c->index,
	       c->props.pci_address);
	smi_json_use(c);
	printf(", \"processes\": %d, \"state\": \"%s\", \"commands_per_s\": ", c->procs,
	       smi_card_state(c));
	smi_json_num(stdout, cmds);
	printf(", \"dma_bytes_per_s\": ");
	smi_json_num(stdout, bytes);
	printf("}\n");
}

static void print_lines(const struct smi_opts *o, struct smi_card *cards, int count,
			const struct smi_clients *clients)
{
	char when[40];
	double cmds, bytes;
	int i;

	/* Local time, ISO 8601: the text view shows its hh:mm:ss. */
	smi_time(when, sizeof(when), 1);
	when[19] = '\0';
	for (i = 0; i < count; i++) {
		struct smi_card *c = &cards[i];

		smi_card_refresh(c);
		smi_card_derive(c, clients);
		smi_card_rates(c, &cmds, &bytes);
		if (o->json)
			line_json(c, when, cmds, bytes);
		else if (o->csv)
			line_csv(c, when, cmds, bytes);
		else
			line_text(c, when, cmds, bytes);
	}
}

int smi_view_dmon(const struct smi_opts *o)
{
	struct smi_clients clients = { 0 };
	struct smi_card *cards;
	uint64_t start, delay = (uint64_t)(o->delay_s * 1e9);
	int count, ret = smi_cards_get(o->only, &cards, &count);
	long k;

	if (ret)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	header(o);
	start = smi_now_ns();
	if (smi_sample(cards, count, &clients))
		goto fail;
	for (k = 1; !o->count || k <= o->count; k++) {
		uint64_t now = smi_now_ns(), due = start + (uint64_t)k * delay;

		if (due > now)
			smi_sleep_ns(due - now);
		if (smi_sample(cards, count, &clients))
			goto fail;
		print_lines(o, cards, count, &clients);
	}
	smi_clients_free(&clients);
	free(cards);
	return SMI_EXIT_OK;
fail:
	perror("spyre-smi: reading /proc");
	smi_clients_free(&clients);
	free(cards);
	return SMI_EXIT_ERROR;
}
