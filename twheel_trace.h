/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the twheel timing wheel: /sys/kernel/tracing/events/twheel/
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM twheel

#if !defined(_TWHEEL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TWHEEL_TRACE_H

#include <linux/tracepoint.h>

#include "twheel.h"

TRACE_EVENT(twheel_arm,
	TP_PROTO(const struct twheel_timer *timer, unsigned int level),
	TP_ARGS(timer, level),
	TP_STRUCT__entry(
		__field(const void *,	timer)
		__field(void *,		function)
		__field(u64,		expires)
		__field(u64,		period)
		__field(unsigned int,	cpu)
		__field(unsigned int,	level)
	),
	TP_fast_assign(
		__entry->timer = timer;
		__entry->function = timer->function;
		__entry->expires = timer->expires;
		__entry->period = timer->period;
		__entry->cpu = timer->cpu;
		__entry->level = level;
	),
	TP_printk("timer=%p function=%ps expires=%llu period=%llu cpu=%u level=%u",
		  __entry->timer, __entry->function, __entry->expires,
		  __entry->period, __entry->cpu, __entry->level)
);

TRACE_EVENT(twheel_cancel,
	TP_PROTO(const struct twheel_timer *timer),
	TP_ARGS(timer),
	TP_STRUCT__entry(
		__field(const void *,	timer)
		__field(u64,		expires)
	),
	TP_fast_assign(
		__entry->timer = timer;
		__entry->expires = timer->expires;
	),
	TP_printk("timer=%p expires=%llu", __entry->timer, __entry->expires)
);

TRACE_EVENT(twheel_fire,
	TP_PROTO(const struct twheel_timer *timer, u64 now),
	TP_ARGS(timer, now),
	TP_STRUCT__entry(
		__field(const void *,	timer)
		__field(void *,		function)
		__field(u64,		deadline)
		__field(s64,		lateness)
		__field(u32,		overruns)
	),
	TP_fast_assign(
		__entry->timer = timer;
		__entry->function = timer->function;
		__entry->deadline = timer->fired;
		__entry->lateness = now - timer->fired;
		__entry->overruns = timer->overruns;
	),
	TP_printk("timer=%p function=%ps deadline=%llu lateness_ns=%lld overruns=%u",
		  __entry->timer, __entry->function, __entry->deadline,
		  __entry->lateness, __entry->overruns)
);

#endif /* _TWHEEL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE twheel_trace
#include <trace/define_trace.h>
