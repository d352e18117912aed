// SPDX-License-Identifier: MIT
/*
 * spyre-smi -q: everything known about each card, as nvidia-smi -q: its
 * properties, sensors, activity, memory, state and processes.  What only
 * root may read (the driver's debugfs) says so when it is not readable.
 */
#include <stdarg.h>
#include <stdio.h>

#include "smi.h"

#define ROOT_ONLY "n/a (debugfs, root only)"

static void __attribute__((format(printf, 3, 4)))
field(int depth, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%*s%-*s: ", 4 * depth, "", 28 - 4 * depth, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void print_identity(const struct smi_card *c)
{
	const spyre_device_properties *p = &c->props;

	field(1, "PCI address", "%s", p->pci_address);
	field(1, "Device node", "%s", p->devnode);
	field(1, "sysfs", "%s", c->sysfs);
	field(1, "Driver", "%s %d.%d", p->driver_name, p->driver_version_major,
	      p->driver_version_minor);
	field(1, "PCI id", "%04x:%04x rev %02x", p->vendor_id, p->device_id, p->revision);
	field(1, "Card interface", "%u.%u", p->hw_version_major, p->hw_version_minor);
	field(1, "Cores", "%u", p->num_cores);
	field(1, "Stick", "%u B", p->stick_bytes);
	field(1, "Scratchpad", "%llu KiB per core", (unsigned long long)p->scratchpad_bytes >> 10);
	field(1, "IRQ vectors", "%u", p->num_irq_vectors);
	field(1, "IRQ self-test", "%s", p->irq_selftest_passed ? "passed" : "FAILED");
	field(1, "Timestamp clock", "%s", c->clock[0] ? c->clock : "wall (driver does not say)");
}

static void print_activity(const struct smi_card *c)
{
	char moved[32], rate[32];
	double cmds, bytes;

	printf("    Sensors (hwmon %s)\n", c->hwmon[0] ? c->hwmon : "absent");
	if (c->have_temp)
		field(2, "Temperature", "%.1f C", (double)c->temp_mc / 1000);
	else
		field(2, "Temperature", "n/a");
	if (c->have_power)
		field(2, "Power", "%.2f W", (double)c->power_uw / 1e6);
	else
		field(2, "Power", "n/a");
	printf("    Activity (over %llu ms; counters since the last reset)\n",
	       SMI_INTERVAL_NS / 1000000);
	if (!c->now.ok) {
		field(2, "Counters", "n/a (%s/spyre unreadable)", c->sysfs);
		return;
	}
	smi_card_rates(c, &cmds, &bytes);
	if (c->util_pct >= 0)
		field(2, "Utilisation", "%.1f %%", c->util_pct);
	else
		field(2, "Utilisation", "n/a (the card reset while sampling)");
	field(2, "Busy time", "%.3f s", (double)c->now.busy_ns / 1e9);
	field(2, "Commands", "%llu completed, %.1f/s", (unsigned long long)c->now.commands,
	      cmds < 0 ? 0 : cmds);
	field(2, "DMA", "%s moved, %s/s", smi_bytes(moved, sizeof(moved), c->now.dma_bytes),
	      smi_bytes(rate, sizeof(rate), bytes < 0 ? 0 : (uint64_t)bytes));
}

static void print_memory(const struct smi_card *c)
{
	const struct smi_debugfs *d = &c->dbg;
	char a[32], b[32];

	printf("    Memory\n");
	field(2, "Total", "%s", smi_bytes(a, sizeof(a), c->props.mem_bytes));
	if (!d->have_memory) {
		field(2, "Used", "%s (the processes' buffers, fdinfo; host buffers included)",
		      smi_bytes(a, sizeof(a), c->mem_used));
		field(2, "Free", ROOT_ONLY);
		return;
	}
	field(2, "Used", "%s in %llu buffers", smi_bytes(a, sizeof(a), d->device_used),
	      (unsigned long long)d->device_buffers);
	field(2, "Free", "%s, largest range %s", smi_bytes(a, sizeof(a), d->device_free),
	      smi_bytes(b, sizeof(b), d->device_largest_free));
	field(2, "CPU-visible window", "%s, %s free", smi_bytes(a, sizeof(a), d->mappable_total),
	      smi_bytes(b, sizeof(b), d->mappable_free));
	field(2, "Host buffers", "%llu, %s", (unsigned long long)d->host_buffers,
	      smi_bytes(a, sizeof(a), d->host_bytes));
}

static void print_state(const struct smi_card *c)
{
	const struct smi_debugfs *d = &c->dbg;
	int q;

	field(1, "State", "%s", smi_card_state(c));
	if (c->now.reset_count >= 0)
		field(2, "Resets", "%ld since the driver loaded", c->now.reset_count);
	else
		field(2, "Resets", "n/a");
	if (d->have_contexts)
		field(2, "Open files", "%d (%d banned)", d->open_files, d->banned_files);
	else
		field(2, "Open files", ROOT_ONLY);
	if (d->have_faults)
		field(2, "MMU faults", "%llu since the driver loaded", (unsigned long long)d->faults);
	else
		field(2, "MMU faults", ROOT_ONLY);
	if (!d->have_queues) {
		field(2, "Queues", ROOT_ONLY);
		return;
	}
	printf("%8s%-20s: ", "", "Queues 0-3");
	for (q = 0; q < SMI_QUEUES; q++)
		printf("%s%s", q ? " " : "", smi_queue_states[d->queue_state[q] & 3]);
	putchar('\n');
}

static void print_query(const struct smi_snapshot *s)
{
	char when[32];
	int i;

	printf("==============spyre-smi -q==============\n");
	field(0, "Timestamp", "%s", smi_time(when, sizeof(when), 0));
	field(0, "libspyre version", "%u.%u.%u", spyre_version() >> 16,
	      (spyre_version() >> 8) & 0xff, spyre_version() & 0xff);
	field(0, "Cards", "%d", s->count);
	for (i = 0; i < s->count; i++) {
		printf("\nCard %d\n", s->cards[i].index);
		print_identity(&s->cards[i]);
		print_activity(&s->cards[i]);
		print_memory(&s->cards[i]);
		print_state(&s->cards[i]);
	}
	smi_print_procs_text(s);
}

int smi_view_query(const struct smi_opts *o)
{
	return smi_snapshot_show(o, 1, print_query);
}
