/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's plugin API (version 1, QEMU 7.2) that tb-count.c uses,
 * declared as QEMU's qemu-plugin.h declares it: Debian 12's QEMU loads
 * plugins but ships no header for them.
 */
#ifndef QEMU_PLUGIN_V1_H
#define QEMU_PLUGIN_V1_H

#include <stddef.h>

struct qemu_plugin_tb;

typedef void (*qemu_plugin_tb_trans_cb_t)(unsigned long long id,
					  struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(unsigned long long id, void *data);

/* enum qemu_plugin_op */
#define QEMU_PLUGIN_INLINE_ADD_U64	0

void qemu_plugin_register_vcpu_tb_trans_cb(unsigned long long id,
					   qemu_plugin_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
unsigned long long qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      int op, void *ptr,
					      unsigned long long imm);
void qemu_plugin_register_atexit_cb(unsigned long long id,
				    qemu_plugin_udata_cb_t cb, void *data);

#endif /* QEMU_PLUGIN_V1_H */
