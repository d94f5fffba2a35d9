/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel - newer kernel APIs, spelled for the older kernels we build on
 *
 * Copyright (C) 2026 The twheel authors
 *
 * twheel is built and tested on Linux 6.1 and 6.12 but written with the
 * names that later kernels use, so that it builds there unchanged. The
 * files of twheel, twheel-dev, the benchmark and the KUnit suite include
 * this header after their kernel headers; the example clients do not, as
 * they build against the installed API alone (packaging-check.sh) and use
 * none of the names below. Each
 * guard below maps a newer API onto what an older kernel has and names the
 * release that brought it; drop a guard once the oldest supported kernel
 * has the new API. Stable 6.1 kernels got some renames backported: those
 * guards test the 6.1.y release that did (from Debian's linux 6.1
 * changelog).
 *
 * Built with TWHEEL_COMPAT_POISON_OLD defined (make compat-new), the old
 * names that later kernels removed are poisoned for the rest of each file:
 * our code must use the new ones, which on the kernels we build against
 * come from here.
 */
#ifndef _TWHEEL_COMPAT_H
#define _TWHEEL_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/timer.h>
#include <linux/version.h>

/*
 * 6.13: hrtimer_setup() initializes an hrtimer and sets its callback in one
 * call, replacing hrtimer_init() followed by an assignment to ->function.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * timer_list, as the benchmark uses it (twheel itself uses none).
 * 6.2 (6.1.91 in stable): del_timer() and del_timer_sync() are renamed
 * timer_delete() and timer_delete_sync().
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 91)
#define timer_delete(timer)		del_timer(timer)
#define timer_delete_sync(timer)	del_timer_sync(timer)
#endif

/*
 * 6.2 (6.1.158 in stable): timer_shutdown_sync() deletes a timer for good;
 * later arming is ignored. Without it, the caller must keep the timer from
 * being re-armed itself, as with timer_delete_sync().
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 158)
#define timer_shutdown_sync(timer)	timer_delete_sync(timer)
#endif

/* 6.3: vm_area_struct.vm_flags became const, changed through helpers. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/* 6.16: from_timer() is renamed timer_container_of(); defined as there. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
#define timer_container_of(var, callback_timer, timer_fieldname) \
	container_of(callback_timer, typeof(*(var)), timer_fieldname)
#endif

/*
 * 6.6: KUNIT_CASE_SLOW() marks a case slow (KUnit attributes); before, a
 * plain case. Only KUnit files expand it, after <kunit/test.h>.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
#define KUNIT_CASE_SLOW(test_name)	KUNIT_CASE(test_name)
#endif

/*
 * The old names of the APIs above, all gone from the newest kernels, and
 * no_llseek, gone in 6.12 (stream_open() or nonseekable_open() instead):
 * with TWHEEL_COMPAT_POISON_OLD, a use after this point does not compile.
 * The guards above were defined first, so expanding them is still allowed.
 * make compat-new also greps every file of ours for these names.
 */
#ifdef TWHEEL_COMPAT_POISON_OLD
#undef from_timer
#undef no_llseek
#pragma GCC poison del_timer del_timer_sync hrtimer_init from_timer no_llseek
#endif

#endif /* _TWHEEL_COMPAT_H */
