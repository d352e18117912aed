// SPDX-License-Identifier: MIT
/*
 * A card lost to a failed AER recovery is gone, not wedged: the link reset
 * of a fatal error (Linux's aer_inject) finds no card (debugfs
 * inject_slot_reset_failure), the PCI core gives up on it and never calls
 * resume.  Every waiter must wake with ENODEV, every later ioctl fail with
 * ENODEV, and the unbind that follows must be clean; a rescan then brings
 * the card back for whatever runs next.
 *
 * Run as root, last in the suite (it removes and rescans the card).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

static char addr[32];
static char node[64];

/* A job that WAITs for a word nobody writes; its command buffer in @cmd. */
static int submit_waiter(int fd, struct bo *word, struct bo *cmd)
{
	uint32_t bos[2];

	if (bo_new(fd, 4096, 0, word) || bo_new(fd, 4096, 0, cmd))
		return -1;
	bos[0] = word->handle;
	bos[1] = cmd->handle;
	cmd_put(cmd->map, 0, SPYRE_OP_WAIT, word->va, 1, 0);
	return submit(fd, 0, cmd->va, 1, bos, 2, 0);
}

struct waiter {
	int fd;
	uint32_t handle;
	int ret;
	double woke;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->ret = bo_wait_status(w->fd, w->handle, 120);
	w->woke = now_s();
	return NULL;
}

/* Another process waiting on its own job: its exit status says what it saw. */
static int waiting_process(int ready)
{
	int fd = open(node, O_RDWR | O_CLOEXEC), ret;
	struct bo word, cmd;

	if (fd < 0 || submit_waiter(fd, &word, &cmd))
		return 40;
	if (write(ready, "r", 1) != 1)
		return 41;
	ret = bo_wait_status(fd, cmd.handle, 120);
	return ret == -ENODEV ? 0 : 42;
}

TEST(failed_aer_recovery_leaves_the_card_gone)
{
	struct drm_spyre_device_info info = { 0 };
	struct drm_spyre_query q = {
		.param = DRM_SPYRE_QUERY_DEVICE_INFO, .size = sizeof(info),
		.data = (uintptr_t)&info,
	};
	struct bo word, cmd, other;
	struct waiter w = { 0 };
	int status, fd;
	pthread_t t;
	double t0;
	pid_t pid;

	if (access("/dev/aer_inject", W_OK) && system("modprobe aer_inject 2>/dev/null"))
		SKIP("no aer_inject: this kernel has no AER (CONFIG_PCIEAER_INJECT)");
	ASSERT_EQ(card_find(addr, sizeof(addr), node, sizeof(node)), 0);
	fd = open(node, O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(submit_waiter(fd, &word, &cmd), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &other), 0);
	w.fd = fd;
	w.handle = cmd.handle;
	ASSERT_EQ(pthread_create(&t, NULL, wait_thread, &w), 0);
	pid = fork_when_ready(waiting_process);
	ASSERT_TRUE(pid > 0);

	ASSERT_EQ(debugfs_write("inject_slot_reset_failure", "1"), 0);
	t0 = now_s();
	ASSERT_EQ(aer_inject(addr, PCI_ERR_UNC_DLP, 0), 0);

	/* Every waiter wakes, with ENODEV, well before any job timeout. */
	pthread_join(t, NULL);
	printf("  # waiter woke %.2f s after the error\n", w.woke - t0);
	EXPECT_EQ(w.ret, -ENODEV);
	EXPECT_TRUE(w.woke - t0 < 5);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);

	/* Every later ioctl is refused; the node is gone. */
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), -ENODEV);
	EXPECT_EQ(bo_new(fd, 4096, 0, &other), -ENODEV);
	EXPECT_TRUE(access(node, F_OK) && errno == ENOENT);
	EXPECT_EQ(bo_wait_status(fd, other.handle, 120), -ENODEV);

	/* The unbind is clean (the log check after the suite reads it), with the file open. */
	EXPECT_EQ(sysfs_write("/sys/bus/pci/drivers/spyre/unbind", addr), 0);
	munmap(word.map, 4096);
	munmap(cmd.map, 4096);
	munmap(other.map, 4096);
	close(fd);

	/* A new PCI device from a rescan: the card works again. */
	{
		char path[128];

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", addr);
		EXPECT_EQ(sysfs_write(path, "1"), 0);
	}
	EXPECT_EQ(sysfs_write("/sys/bus/pci/rescan", "1"), 0);
	ASSERT_EQ(card_node(addr, node, sizeof(node)), 0);
	fd = open(node, O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), 0);
	EXPECT_EQ(info.num_cores, 32);
	close(fd);
}

TAP_MAIN()
