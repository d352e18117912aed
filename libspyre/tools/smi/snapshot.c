// SPDX-License-Identifier: MIT
/*
 * What the default view and -q show: every card's counters and the
 * processes' fdinfo read twice, SMI_INTERVAL_NS apart (utilisation and
 * busy shares are over that interval), then the sensors and debugfs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "smi.h"

static int collect_procs(struct smi_snapshot *s)
{
	int i;

	s->procs = calloc((size_t)s->count, sizeof(*s->procs));
	s->nprocs = calloc((size_t)s->count, sizeof(*s->nprocs));
	if (!s->procs || !s->nprocs)
		return -1;
	for (i = 0; i < s->count; i++) {
		s->nprocs[i] = smi_procs_of("/proc", &s->now, &s->before, SMI_INTERVAL_NS,
					    s->cards[i].props.pci_address, &s->procs[i]);
		if (s->nprocs[i] < 0)
			return -1;
	}
	return 0;
}

int smi_snapshot_take(struct smi_snapshot *s, int only)
{
	int i, ret;

	memset(s, 0, sizeof(*s));
	ret = smi_cards_get(only, &s->cards, &s->count);
	if (ret)
		return ret;
	if (smi_sample(s->cards, s->count, &s->before))
		goto fail;
	smi_sleep_ns(SMI_INTERVAL_NS);
	if (smi_sample(s->cards, s->count, &s->now))
		goto fail;
	for (i = 0; i < s->count; i++) {
		smi_card_refresh(&s->cards[i]);
		smi_card_derive(&s->cards[i], &s->now);
	}
	if (collect_procs(s))
		goto fail;
	return SMI_EXIT_OK;
fail:
	fprintf(stderr, "spyre-smi: reading /proc: %s\n", strerror(errno));
	smi_snapshot_free(s);
	return SMI_EXIT_ERROR;
}

void smi_snapshot_free(struct smi_snapshot *s)
{
	int i;

	for (i = 0; s->procs && i < s->count; i++)
		free(s->procs[i]);
	free(s->procs);
	free(s->nprocs);
	free(s->cards);
	smi_clients_free(&s->before);
	smi_clients_free(&s->now);
	memset(s, 0, sizeof(*s));
}

int smi_snapshot_show(const struct smi_opts *o, int full,
		      void (*print_text)(const struct smi_snapshot *s))
{
	struct smi_snapshot s;
	int ret = smi_snapshot_take(&s, o->only);

	if (ret)
		return ret;
	if (o->json)
		smi_print_json(&s, full);
	else
		print_text(&s);
	smi_snapshot_free(&s);
	return SMI_EXIT_OK;
}
