// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Accelerator interrupts found in /proc/interrupts text, by name. */
#include "test.h"
#include "discover/device_irqs.h"

static const char sample[] =
	"           CPU0       CPU1       \n"
	"  0:         30          0   IO-APIC   2-edge      timer\n"
	" 24:          0          0   PCI-MSI 65536-edge      virtio0-config\n"
	" 41:       1234         12   PCI-MSI 524288-edge      tpu_common0-17\n"
	" 42:          5          0   PCI-MSI 524289-edge      tpu_common0-18\n"
	" 55:          0          9   PCI-MSIX-0000:00:04.0 3-edge      vfio-msix[3](0000:00:04.0)\n"
	" 60:          1          1   IO-APIC  16-fasteoi   ehci_hcd:usb1, apex\n"
	" 61:          1          1   PCI-MSI 1-edge      nvidia\n"
	"NMI:          0          0   Non-maskable interrupts\n"
	"LOC:      12345      67890   Local timer interrupts\n";

struct seen {
	uint32_t irqs[16];
	char names[16][64];
	int n;
};

static void on_irq(uint32_t irq, const char *name, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->irqs[s->n] = irq;
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->n++;
	}
}

int main(void)
{
	struct seen s = {};
	int n = device_irqs__parse(sample, sizeof(sample) - 1, on_irq, &s);

	ASSERT_EQ(n, 5, "accelerator interrupts found");
	ASSERT_EQ(s.irqs[0], 41, "gasket irq number");
	ASSERT_STREQ(s.names[0], "tpu_common0-17", "gasket irq name");
	ASSERT_EQ(s.irqs[2], 55, "vfio irq number");
	ASSERT_STREQ(s.names[2], "vfio-msix[3](0000:00:04.0)", "vfio irq name");
	ASSERT_EQ(s.irqs[3], 60, "a shared irq line");
	ASSERT_STREQ(s.names[3], "apex", "the accelerator's name on a shared line");
	ASSERT_EQ(s.irqs[4], 61, "nvidia");

	/* This machine's own table parses (it has no accelerators). */
	{
		FILE *f = fopen("/proc/interrupts", "r");
		static char buf[1 << 20];
		size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0;
		struct seen real = {};
		int hits;

		if (f)
			fclose(f);
		ASSERT_TRUE(len > 0, "read /proc/interrupts");
		/* Whatever this machine has: every hit reaches the callback. */
		hits = device_irqs__parse(buf, len, on_irq, &real);
		ASSERT_TRUE(hits >= 0 && hits == real.n, "parses /proc/interrupts");
	}
	return test_exit();
}
