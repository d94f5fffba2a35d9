# SPDX-License-Identifier: GPL-2.0
# twheel: out-of-tree build, VM tests and checks. See scripts/vm/.
# Kbuild (not this file) is what the kernel build reads.

KERNELRELEASE ?= $(shell uname -r)
VM := $(CURDIR)/scripts/vm
KDIR ?= $(firstword $(wildcard /lib/modules/$(KERNELRELEASE)/build) \
		    $(shell $(VM)/kdir.sh stock))
DEPMOD ?= depmod
KSRC = $(shell $(VM)/kernel-source.sh)
# Installs the Debian packages a target lacks, or names them and stops.
DEPS := $(CURDIR)/scripts/deps.sh
OUT := $(CURDIR)/build
USER_CFLAGS := -static -O2 -Wall -pthread -I$(CURDIR)/include -I$(CURDIR)/include/uapi
# All C files that are ours (for checkpatch and friends).
OUR_C = $(shell find . -path ./build -prune -o -path ./.git -prune -o \
	      -name '*.[ch]' -print | sort)

all: module
module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# ---- install: modules, depmod, and the API for other out-of-tree modules ----
# The package version; dkms.conf holds the only copy.
TWHEEL_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CURDIR)/dkms.conf)
# The release (uname -r) of KDIR's kernel. Not `make kernelrelease`: Debian's
# headers answer with the upstream version (6.1.x), not the modules' dir.
KREL = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
PREFIX ?= /usr
# Headers and, per kernel (the symbol CRCs are the kernel's), Module.symvers:
# what other modules need to build against twheel's exported API.
SDK = $(DESTDIR)$(PREFIX)/src/twheel-$(TWHEEL_VERSION)

# After `make`; INSTALL_MOD_PATH and PREFIX (or DESTDIR) stage elsewhere.
install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KERNELRELEASE=$(KREL) modules_install
	$(DEPMOD) $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) -a $(KREL)
	install -D -m 644 twheel.h $(SDK)/twheel.h
	install -D -m 644 include/uapi/linux/twheel.h $(SDK)/include/uapi/linux/twheel.h
	install -D -m 644 Module.symvers $(SDK)/$(KREL)/Module.symvers
	$(MAKE) install-lib

# The userspace side: include/twheel/libtwheel.h (header only), the UAPI
# header it includes, and libtwheel.pc: `pkg-config --cflags libtwheel`.
LIBDIR ?= $(PREFIX)/lib
install-lib:
	install -D -m 644 include/twheel/libtwheel.h $(DESTDIR)$(PREFIX)/include/twheel/libtwheel.h
	install -D -m 644 include/uapi/linux/twheel.h \
		$(DESTDIR)$(PREFIX)/include/twheel/uapi/linux/twheel.h
	mkdir -p $(DESTDIR)$(LIBDIR)/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(TWHEEL_VERSION)|' \
		packaging/libtwheel.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libtwheel.pc

# DKMS: the sources of twheel.ko and twheel-dev.ko into DKMS_SRCTREE (dkms's
# --sourcetree), then dkms add, build and install, for DKMS_KERNEL (default:
# the running kernel). DKMS may carry options, e.g. a private --dkmstree.
DKMS ?= dkms
DKMS_SRCTREE ?= /usr/src
DKMS_FILES = dkms.conf Kbuild twheel.c twheel.h twheel_trace.h wheel.c wheel.h \
	     $(wildcard compat.h chardev.c) include/uapi/linux/twheel.h
DKMS_K = $(if $(DKMS_KERNEL),-k $(DKMS_KERNEL))
dkms-build:
	mkdir -p $(DKMS_SRCTREE)/twheel-$(TWHEEL_VERSION)
	cp --parents $(DKMS_FILES) $(DKMS_SRCTREE)/twheel-$(TWHEEL_VERSION)/
	$(DKMS) remove twheel/$(TWHEEL_VERSION) --all >/dev/null 2>&1 || true
	$(DKMS) add twheel/$(TWHEEL_VERSION)
	$(DKMS) build twheel/$(TWHEEL_VERSION) $(DKMS_K)
dkms-install: dkms-build
	$(DKMS) install twheel/$(TWHEEL_VERSION) $(DKMS_K)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(OUT)

# ---- builds used by the VM tests: build/<kernel>/src, build/user ----
# Kernels: debug (ours, built from linux-source-6.1), kcsan (the same with
# the data-race detector KCSAN for KASAN and kmemleak), stock and rt
# (Debian's 6.1 and its PREEMPT_RT flavour), stock612 and rt612 (the same
# two of the 6.12 LTS kernel that Debian 12 also ships). See
# scripts/vm/lib.sh; debug-kernel builds our two.
debug-kernel:
	$(VM)/build-kernel.sh
	$(VM)/build-kernel.sh kcsan

modules-%:
	mkdir -p $(OUT)/$*/src
	rsync -a --delete --exclude=/build --exclude=/.git --exclude=/bench/results \
		--exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude=modules.order --exclude=Module.symvers \
		$(CURDIR)/ $(OUT)/$*/src/
	$(MAKE) -C $$($(VM)/kdir.sh $*) M=$(OUT)/$*/src modules >$(OUT)/$*/build.log 2>&1; \
		rc=$$?; cat $(OUT)/$*/build.log; [ $$rc = 0 ]
	@# -Werror for our files only (compiler and modpost): kernel headers
	@# are not ours to fix. The objects go, so that the next build warns again.
	@! grep -E -e '^$(OUT)/$*/src/[^:]*:[0-9]+:([0-9]+:)? warning:' \
		-e '^WARNING: modpost: .*$(OUT)/$*/src/' $(OUT)/$*/build.log || \
		{ echo 'modules-$*: warnings in our files (above)'; \
		  find $(OUT)/$*/src -name '*.o' -delete; false; }

# ubench's io_uring contender needs liburing (liburing-dev, static).
URING = $(shell echo '#include <liburing.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo y)
userspace:
	mkdir -p $(OUT)/user/bin $(OUT)/user/selftests
	if [ -d selftests ]; then $(MAKE) -C selftests OUT=$(OUT)/user/selftests; fi
	for f in tools/twheelctl.c examples/twheel_epoll.c; do \
		[ ! -f $$f ] || $(CC) $(USER_CFLAGS) -o $(OUT)/user/bin/$$(basename $$f .c) $$f || exit; \
	done
	$(CC) $(USER_CFLAGS) $(if $(URING),-DHAVE_LIBURING) -o $(OUT)/user/bin/ubench \
		bench/ubench.c $(if $(URING),-luring)

# Our code with the old API names poisoned (compat.h,
# TWHEEL_COMPAT_POISON_OLD), as the newest kernels lack them: against 6.12
# and against the debug kernel, the one with KUnit. Into build/compat-new.
# Then the same names, from compat.h's poison list, in any file of ours but
# compat.h (the examples, which do not include it, too).
COMPAT_NEW_KERNELS ?= stock612 debug
OLD_API = $(shell sed -n 's/^\#pragma GCC poison //p' compat.h)
compat-new:
	$(foreach k,$(COMPAT_NEW_KERNELS),$(MAKE) modules-$(k) OUT=$(OUT)/compat-new \
		KCFLAGS=-DTWHEEL_COMPAT_POISON_OLD && ) true
	@[ -n "$(OLD_API)" ] || { echo 'compat-new: no poison list in compat.h'; false; }
	@! grep -nw $(addprefix -e ,$(OLD_API)) $(filter-out ./compat.h,$(OUR_C)) || \
		{ echo 'compat-new: the old API names above; compat.h maps the new ones'; false; }

# ---- VM runs: vm-<kernel>-<mode>, e.g. vm-debug-check, vm-rt612-check ----
vm-%:
	$(VM)/run-vm.sh $(subst -, ,$*)

# The load test on one vCPU under QEMU's -icount shift=0, whose clock
# counts instructions (1 ns each): the bounds of "Bounded work" in
# Documentation/twheel.rst, without the host's preemption of the vCPU
# (scripts/vm/guest/holds.sh; make bench's second boot).
# vm-icount-load: make stress's first boot (scripts/vm/guest/load.sh).
ICOUNT_QEMU_ARGS = -smp 1 -icount shift=0
vm-icount-%: export TWHEEL_QEMU_ARGS = $(ICOUNT_QEMU_ARGS)
vm-icount-%: export TWHEEL_VM_MEM ?= 4096
vm-icount-%: export override TWHEEL_GUEST_ENV += clocksource=tsc
vm-icount-check:
	$(VM)/run-vm.sh stock holds
vm-icount-load:
	$(VM)/run-vm.sh stock load

run:
	@$(DEPS) run
	@$(MAKE) --no-print-directory vm-stock-run
	@echo
	@echo 'make run: you saw Debian'"'"'s kernel boot in QEMU, load twheel.ko and twheel-dev.ko,'
	@echo 'and `twheelctl demo` arm six timers on /dev/twheel (one-shots from 10 ms to 1 s and'
	@echo 'one firing every 200 ms, 5 times), then read each expiry with epoll: its deadline,'
	@echo 'how late it fired (never early; within about a tick, 1 ms, when the host is not busy)'
	@echo 'and how long after that it was read (seen).'
	@echo 'Console: build/vm/stock-run.log. Next:'
	@echo '  tools/twheelctl.c              the CLI: arm, cancel, query, list, watch'
	@echo '  Documentation/twheel-uapi.rst  /dev/twheel: ioctls, read(), epoll'
	@echo '  Documentation/twheel.rst       the kernel API (twheel.h); examples/ has clients'
	@echo '  make check                     the whole test suite (README.md)'
# First 4M timers against a pinned task, on the stock kernel in
# instruction time (scripts/vm/guest/load.sh), then 10M fuzzed calls and
# 1M timers on the debug kernel, about an hour under TCG.
stress: export TWHEEL_VM_TIMEOUT ?= 7200
stress: export TWHEEL_VM_MEM ?= 4096
stress:
	@$(DEPS) stress
	$(MAKE) vm-icount-load
	$(MAKE) vm-debug-stress
# The kernel benchmark holds up to 10M timers at once: give the guest room.
# The guest reads the TSC, as real machines do (under TCG each HPET read is
# an MMIO exit): CLOCKSOURCE=hpet runs it on the HPET. The kernel command
# line (TWHEEL_GUEST_ENV) also gets a log buffer for every round's results.
CLOCKSOURCE ?= tsc
# BENCH_KERNEL: the kernel it boots (default Debian's 6.1; stock612: 6.12).
BENCH_KERNEL ?= stock
bench: export TWHEEL_VM_MEM ?= 4096
bench: export TWHEEL_VM_TIMEOUT ?= 2400
# (run-vm.sh directly: a sub-make would see TWHEEL_GUEST_ENV as set on
# the command line, without these.)
bench: export override TWHEEL_GUEST_ENV += log_buf_len=4M \
	clocksource=$(CLOCKSOURCE) $(if $(filter tsc,$(CLOCKSOURCE)),tsc=reliable)
# A second boot times the wheel's lock holds in instructions: one vCPU
# under -icount shift=0, whose clock counts them, 1 ns each
# (scripts/vm/guest/holds.sh).
bench:
	@$(DEPS) bench $(BENCH_KERNEL)
	$(VM)/run-vm.sh $(BENCH_KERNEL) bench
	TWHEEL_QEMU_ARGS='$(ICOUNT_QEMU_ARGS)' \
		$(VM)/run-vm.sh $(BENCH_KERNEL) holds
	$(VM)/extract-files $(OUT)/vm/$(BENCH_KERNEL)-bench.log bench/results
	$(VM)/extract-files $(OUT)/vm/$(BENCH_KERNEL)-holds.log bench/results
	python3 bench/report.py -o bench/results \
		$(OUT)/vm/$(BENCH_KERNEL)-bench.log $(OUT)/vm/$(BENCH_KERNEL)-holds.log
	@echo 'make bench: results in bench/results/: latest.md (the table), latest.json,'
	@echo 'cost.png and lateness.png; the guest console in build/vm/$(BENCH_KERNEL)-bench.log.'

# Instructions per timer of a 1M burst, and per arm, modify or cancel with
# 100k pending, twheel and timer_list, counted by a QEMU TCG plugin (three
# boots each, about 10 minutes in all): build/insns/{burst,cost}/report.md.
insns:
	@$(DEPS) bench stock
	$(VM)/insns/run.sh burst
	$(VM)/insns/run.sh cost

# Host CPU time per callback of a 1M burst, twheel and timer_list, by where
# QEMU spends it, from the host's perf (two boots, about 8 minutes; needs
# linux-perf): build/hostprof/report.md.
hostprof:
	@$(DEPS) bench stock
	$(VM)/hostprof/run.sh

# Where the guest's time goes in /dev/twheel's batch arming (or in the
# ubench run GUESTPROF_ARGS names), by kernel symbol, from perf in the guest
# (one boot, about 3 minutes; needs linux-perf): build/guestprof/report.txt.
guestprof:
	@$(DEPS) bench stock
	$(VM)/guestprof/run.sh $(GUESTPROF_ARGS)

# ---- static checks ----
# TRACE_EVENT headers (*_trace.h) follow the tracing idiom that strict
# checkpatch flags everywhere in-tree; only those two checks are waived there.
# compat.h is the one place where version tests belong: LINUX_VERSION_CODE
# and the constant-on-the-left comparison it implies are waived there.
CHECKPATCH = $(KSRC)/scripts/checkpatch.pl --strict --no-tree --quiet --show-types
TRACE_IGNORE := OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT
COMPAT_IGNORE := LINUX_VERSION_CODE,CONSTANT_COMPARISON
style:
	$(CHECKPATCH) -f $(filter-out %_trace.h ./compat.h,$(OUR_C))
	$(if $(filter %_trace.h,$(OUR_C)),$(CHECKPATCH) \
		--ignore $(TRACE_IGNORE) -f $(filter %_trace.h,$(OUR_C)))
	$(if $(filter ./compat.h,$(OUR_C)),$(CHECKPATCH) \
		--ignore $(COMPAT_IGNORE) -f ./compat.h)

# RST validity (docutils) and kernel-doc comments of every exported symbol.
docs:
	python3 scripts/check-docs.py Documentation/*.rst
	$(KSRC)/scripts/kernel-doc -none -Werror $(filter-out ./selftests/% ./tools/%,$(OUR_C))

SPARSE_KERNEL ?= stock
sparse: modules-$(SPARSE_KERNEL)
	$(MAKE) -C $$($(VM)/kdir.sh $(SPARSE_KERNEL)) M=$(OUT)/$(SPARSE_KERNEL)/src C=2 \
		CF=-D__CHECK_ENDIAN__ modules >$(OUT)/sparse.out 2>&1; \
		rc=$$?; cat $(OUT)/sparse.out; [ $$rc = 0 ]
	@! grep -E '^[^ ]*\.[ch]:[0-9]+:[0-9]+: (warning|error)' $(OUT)/sparse.out | \
		grep -F '$(OUT)/$(SPARSE_KERNEL)/src/' || { echo 'sparse: warnings above'; false; }

# Everything; keeps going after a red layer, the summary decides.
check:
	@$(DEPS) check
	rm -rf $(OUT)/vm $(OUT)/check
	$(MAKE) debug-kernel
	-$(MAKE) vm-debug-check
	-$(MAKE) vm-kcsan-check
	-$(MAKE) vm-stock-check
	-$(MAKE) vm-rt-check
	-$(MAKE) vm-stock612-check
	-$(MAKE) vm-rt612-check
	-$(MAKE) vm-icount-check
	-$(VM)/verdict compat-new $(MAKE) compat-new
	-$(VM)/verdict style $(MAKE) style
	-$(VM)/verdict sparse $(MAKE) sparse SPARSE_KERNEL=debug
	-$(VM)/verdict docs $(MAKE) docs
	-$(VM)/verdict packaging $(VM)/packaging-check.sh
	$(VM)/tap-summary $(OUT)/vm/debug-check.log $(OUT)/vm/kcsan-check.log \
		$(OUT)/vm/stock-check.log \
		$(OUT)/vm/rt-check.log $(OUT)/vm/stock612-check.log \
		$(OUT)/vm/rt612-check.log $(OUT)/vm/stock-holds.log \
		$(OUT)/check/compat-new \
		$(OUT)/check/style $(OUT)/check/sparse $(OUT)/check/docs \
		$(OUT)/check/packaging

.PHONY: all module install install-lib dkms-build dkms-install clean debug-kernel userspace compat-new run stress bench insns hostprof guestprof style sparse docs check vm-icount-check vm-icount-load
