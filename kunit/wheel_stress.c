// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_wheel_stress.ko: the suite of wheel_kunit.c with a differential
 * test of 10M operations, on seeds of its own, for make stress.
 *
 * Copyright (C) 2026 The twheel authors
 */
#define WT_OPS		(10 * 1000000UL)
#define WT_SEED		0x73747265737331ULL
#define WT_SUITE	"twheel_wheel_stress"

#include "wheel_kunit.c"
