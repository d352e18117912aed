/* SPDX-License-Identifier: MIT */
/*
 * The benchmarks' card without a guest: QEMU under -accel qtest, driven
 * through its protocol (qtest-card.c).  Guest-physical layout: page tables
 * at PT_BASE, queue 0's ring at RING_BASE; one MMU context (0) maps guest
 * RAM at VA_HOST and device memory at VA_DEV with 2 MiB pages.  Guest RAM
 * above 64 MiB is the caller's.
 */
#ifndef SPYRE_QTEST_CARD_H
#define SPYRE_QTEST_CARD_H

#include <stddef.h>
#include <stdint.h>

#define SLOT		4
#define BAR0_ADDR	0xd0000000ull
#define BAR2_ADDR	0xc0000000ull
#define GUEST_RAM_MIB	1024
#define PT_BASE		0x00100000ull	/* page tables, 4 KiB each */
#define RING_BASE	0x00200000ull
#define RING_ENTRIES	64
#define VA_HOST		0x0000100000000000ull
#define VA_DEV		0x0000200000000000ull

/* Print "NAME: message" (the name card_start was given), stop QEMU, exit 1. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* One qtest command (printf-like); returns the value after "OK" (0 if none). */
uint64_t qtest(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wr64(uint64_t gpa, uint64_t val);
/* A card register (BAR0 offset @off). */
uint32_t reg_rd(uint32_t off);
double now_s(void);

/*
 * Start QEMU (@qemu, its stderr to @log) with a card of @dev_mem_mib MiB and
 * the @extra arguments, then program the card: BARs, context 0, queue 0.
 */
void card_start(const char *name, const char *qemu, const char *log, uint64_t dev_mem_mib,
		char **extra, int nextra);
void card_stop(void);

/* Write @len bytes at guest-physical @gpa (one qtest command). */
void card_write(uint64_t gpa, const void *buf, size_t len);

/* Write a command at ring entry *@idx and advance it; returns the entry's address. */
uint64_t card_put(uint32_t *idx, uint8_t opcode, uint64_t a0, uint64_t a1, uint64_t a2);

/* Ring queue 0's doorbell up to @idx and wait until it is idle; seconds. */
double card_go(uint32_t idx);
/*
 * The same, sleeping @poll_us between reads of the queue's state, so polling
 * leaves the host's CPUs to the card's engine (up to @poll_us later).
 */
double card_go_poll(uint32_t idx, unsigned poll_us);

/* A command's status once it ran. */
uint32_t card_status(uint64_t entry);

#endif /* SPYRE_QTEST_CARD_H */
