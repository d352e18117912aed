// SPDX-License-Identifier: MIT
/*
 * spyre-smi's default view, as nvidia-smi's: one block per card
 * (temperature, power, memory, utilisation, state), then the processes
 * using each card.
 */
#include <stdio.h>
#include <unistd.h>

#include "smi.h"

static void print_card(const struct smi_card *c)
{
	const spyre_device_properties *p = &c->props;
	char used[32], total[32], temp[24] = "-", power[24] = "-", util[16] = "-", mem[80];
	char state[48];
	int banned = smi_card_banned(c);

	if (c->have_temp)
		snprintf(temp, sizeof(temp), "%ld C", c->temp_mc / 1000);
	if (c->have_power)
		snprintf(power, sizeof(power), "%.1f W", (double)c->power_uw / 1e6);
	if (c->util_pct >= 0)
		snprintf(util, sizeof(util), "%.0f%%", c->util_pct);
	snprintf(mem, sizeof(mem), "%s%s / %s", smi_bytes(used, sizeof(used), c->mem_used),
		 c->mem_source == SMI_MEM_FDINFO ? "*" : "",
		 smi_bytes(total, sizeof(total), p->mem_bytes));
	snprintf(state, sizeof(state), "%s", smi_card_state(c));
	if (banned > 0)
		snprintf(state, sizeof(state), "%s, %d banned", smi_card_state(c), banned);
	printf("%3d  %-13s %6s %8s  %-24s %5s  %s\n", c->index, p->pci_address, temp, power, mem,
	       util, state);
	printf("     %s  driver %s %d.%d  card interface %u.%u  clock %s\n", p->devnode,
	       p->driver_name, p->driver_version_major, p->driver_version_minor,
	       p->hw_version_major, p->hw_version_minor, c->clock[0] ? c->clock : "wall (driver does not say)");
	printf("     id %04x:%04x rev %02x  cores %u  stick %u B  scratchpad %llu KiB/core\n",
	       p->vendor_id, p->device_id, p->revision, p->num_cores, p->stick_bytes,
	       (unsigned long long)p->scratchpad_bytes >> 10);
	printf("     device memory %llu MiB  irq vectors %u  irq self-test %s\n",
	       (unsigned long long)p->mem_bytes >> 20, p->num_irq_vectors,
	       p->irq_selftest_passed ? "passed" : "FAILED");
}

void smi_print_procs_text(const struct smi_snapshot *s)
{
	char mem[32], busy[16];
	int i, j, any = 0;

	printf("\nProcesses (busy: engine time over the last %llu ms):\n",
	       SMI_INTERVAL_NS / 1000000);
	printf("IDX      PID  NAME              CLIENTS      MEMORY  ENGINE TIME   BUSY\n");
	for (i = 0; i < s->count; i++) {
		for (j = 0; j < s->nprocs[i]; j++) {
			const struct smi_proc *p = &s->procs[i][j];

			snprintf(busy, sizeof(busy), "-");
			if (p->busy_pct >= 0)
				snprintf(busy, sizeof(busy), "%.0f%%", p->busy_pct);
			printf("%3d  %7d  %-16.16s  %7d  %10s  %8.1f ms  %5s\n", s->cards[i].index,
			       p->pid, p->name, p->clients, smi_bytes(mem, sizeof(mem), p->mem_bytes),
			       (double)p->engine_ns / 1e6, busy);
			any = 1;
		}
	}
	if (!any)
		printf("  none\n");
	if (geteuid() != 0)
		printf("  (other users' processes are listed for root only)\n");
}

static int any_fdinfo_memory(const struct smi_snapshot *s)
{
	int i;

	for (i = 0; i < s->count; i++)
		if (s->cards[i].mem_source == SMI_MEM_FDINFO)
			return 1;
	return 0;
}

static void print_default(const struct smi_snapshot *s)
{
	char when[32];
	int i;

	printf("spyre-smi  %s  libspyre %u.%u.%u\n", smi_time(when, sizeof(when), 0),
	       spyre_version() >> 16, (spyre_version() >> 8) & 0xff, spyre_version() & 0xff);
	printf("Spyre cards: %d\n", s->count);
	printf("IDX  PCI ADDRESS     TEMP    POWER  MEMORY USED / TOTAL       UTIL  STATE\n");
	for (i = 0; i < s->count; i++)
		print_card(&s->cards[i]);
	if (any_fdinfo_memory(s))
		printf("* memory used: buffers of the processes listed (fdinfo drm-total-memory, "
		       "host buffers included); root reads the card's own count\n");
	smi_print_procs_text(s);
}

int smi_view_default(const struct smi_opts *o)
{
	return smi_snapshot_show(o, 0, print_default);
}
