#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-vm.sh debug|kcsan|stock|rt|stock612|rt612 MODE: build modules + userspace +
# initramfs, boot the kernel in qemu (TCG), run /tests/MODE.sh in the guest,
# and decide.
# debug: our debug build of linux-source; kcsan: the same with KCSAN for
# KASAN and kmemleak; stock and rt: Debian's 6.1 kernels
# (linux-image-amd64 and the PREEMPT_RT linux-image-rt-amd64); stock612 and
# rt612: the same two of Debian 12's 6.12 LTS kernel.
# Console log: build/vm/KERNEL-MODE.log; verdict: build/vm/KERNEL-MODE.verdict.
# A kernel that dies before the guest's init runs is booted once more.
. "$(dirname "$0")/lib.sh"
begin=$(date +%s)
kernel=${1:?debug|kcsan|stock|rt|stock612|rt612} mode=${2:?check|run|bench|stress|load|holds}
vm="$TOP/build/vm"; mkdir -p "$vm"
name="$kernel-$mode" log="$vm/$kernel-$mode.log" verdict="$vm/$kernel-$mode.verdict"
rm -f "$log" "$log.boot1" "$verdict"
took() { echo "$(( $(date +%s) - begin ))s, build and boot"; }
red() { echo "red: $*" >"$verdict"; log "$name: RED: $* ($(took))"; exit 1; }
trap '[ -f "$verdict" ] || red "rig failure before boot (see above)"' EXIT

make -C "$TOP" --no-print-directory "modules-$kernel" userspace >&2 || red "build failed"
args="console=ttyS0 panic=-1 panic_on_warn=1 oops=panic loglevel=5 nokaslr"
# QEMU's TSC follows the host's clock; the clocksource watchdog, comparing
# it with the HPET across a vCPU the host preempted, may call it unstable
# and switch clocksources mid-test (a 6.12 RT guest once oopsed in the
# text patching of that switch). Trust it, as guests on real hosts do.
args+=" tsc=reliable"
args+=" twheel_mode=$mode twheel_kernel=$kernel"
# TWHEEL_GUEST_ENV="VAR=value ...": environment of the guest scripts.
args+=" ${TWHEEL_GUEST_ENV:-}"
# TWHEEL_QEMU_ARGS: more QEMU options (scripts/vm/insns/run.sh: -plugin).
if [ "$kernel" = debug ] || [ "$kernel" = kcsan ]; then
	bzimage="$("$VM_DIR/build-kernel.sh" "$kernel")/arch/x86/boot/bzImage"
	[ "$kernel" = kcsan ] || args+=" kmemleak=on"
else
	bzimage=$("$VM_DIR/debian-kernel.sh" "$kernel")
fi
"$VM_DIR/mkinitramfs.sh" "$kernel" "$vm/$name.cpio.gz" || red "initramfs failed"

marker="$vm/$name.marker"
banner='=== twheel guest:'
# boot: one boot of the guest; its console in $log, QEMU's status in $rc.
boot() {
	rm -f "$marker"
	log "booting $name (log: $log)"
	start=$(date +%s)
	set +e
	# shellcheck disable=SC2086 # TWHEEL_QEMU_ARGS: options, split on purpose
	timeout "${TWHEEL_VM_TIMEOUT:-900}" qemu-system-x86_64 -smp 2 \
		-m "${TWHEEL_VM_MEM:-2048}" -cpu max ${TWHEEL_QEMU_ARGS:-} \
		-nographic -no-reboot -monitor none \
		-serial stdio -serial "file:$marker" \
		-kernel "$bzimage" -initrd "$vm/$name.cpio.gz" \
		-append "$args" </dev/null | tr -d '\r' | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	log "$name: qemu exited $rc after $(( $(date +%s) - start ))s"
}
boot
# A kernel that dies before our init prints its banner ran none of our
# code: under TCG, the boot's own code patching (text_poke_bp() of a static
# key while the other vCPU runs the site) has been seen to trap. Boot once
# more, keeping the first log; a second death is red.
if ! grep -qF "$banner" "$log" && grep -q 'Kernel panic' "$log"; then
	mv "$log" "$log.boot1"
	log "$name: kernel died before the guest's init (log: $log.boot1); booting again"
	boot
fi
[ "$rc" != 124 ] || red "timeout"
bad='BUG:|WARNING:|KASAN|kmemleak.*unreferenced|unreferenced object|Kernel panic|possible circular|inconsistent lock|Call Trace'
if grep -En "$bad" "$log" >"$vm/$name.bad"; then
	head -n 5 "$vm/$name.bad" >&2
	red "kernel splat: $(head -n 1 "$vm/$name.bad")"
fi
grep -q success "$marker" 2>/dev/null || red "guest did not report success"
echo green >"$verdict"
log "$name: GREEN ($(took))"
