// SPDX-License-Identifier: GPL-2.0
/*
 * tb-count: a QEMU TCG plugin that counts, for every translation block of
 * guest kernel code, how many times it ran; at exit it writes one line per
 * block, "vaddr instructions executions" (hex, decimal, decimal), to the
 * file named by its argument (out=FILE, default tb-count.txt).
 *
 * An inline add per block, no callback, so the guest keeps most of its
 * speed; the adds of two vCPUs are not atomic and may lose a count now and
 * then, which counts in the billions do not notice.
 *
 * Built by scripts/vm/insns/run.sh against qemu-plugin-v1.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-v1.h"

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* Blocks of kernel text: fewer than a million in any boot we make. */
#define SLOTS		(4096U * 1024)
#define KERNEL_BASE	0xffff800000000000ULL

struct block {
	unsigned long long vaddr;
	unsigned long long insns;
	unsigned long long execs;
};

static struct block *blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out = "tb-count.txt";

/* The block at @vaddr of @insns instructions: one per retranslation too. */
static struct block *block_of(unsigned long long vaddr, unsigned long long insns)
{
	unsigned long long h = ((vaddr * 0x9e3779b97f4a7c15ULL) >> 32) &
			       (SLOTS - 1);

	for (;; h = (h + 1) & (SLOTS - 1)) {
		struct block *b = &blocks[h];

		if (b->vaddr == vaddr && b->insns == insns)
			return b;
		if (!b->vaddr) {
			b->vaddr = vaddr;
			b->insns = insns;
			return b;
		}
	}
}

static void translated(unsigned long long id, struct qemu_plugin_tb *tb)
{
	unsigned long long vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	if (vaddr < KERNEL_BASE)
		return;
	pthread_mutex_lock(&lock);
	b = block_of(vaddr, qemu_plugin_tb_n_insns(tb));
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
}

static void write_counts(unsigned long long id, void *data)
{
	FILE *f = fopen(out, "w");
	unsigned int i;

	if (!f) {
		perror(out);
		return;
	}
	for (i = 0; i < SLOTS; i++)
		if (blocks[i].execs)
			fprintf(f, "%llx %llu %llu\n", blocks[i].vaddr,
				blocks[i].insns, blocks[i].execs);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(unsigned long long id, const void *info, int argc,
			char **argv)
{
	if (argc > 0 && !strncmp(argv[0], "out=", 4))
		out = strdup(argv[0] + 4);
	blocks = calloc(SLOTS, sizeof(*blocks));
	if (!blocks)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, write_counts, NULL);
	return 0;
}
