# SPDX-License-Identifier: GPL-2.0
# mode=run: load the modules and run the twheelctl demo.
. /tests/lib.sh

demo() {
	command -v twheelctl >/dev/null || { echo "no twheelctl binary"; return 0; }
	twheelctl demo
}

step "load twheel" load twheel
have twheel-dev && step "load twheel-dev" load twheel-dev
step "demo" demo
step "unload modules" unload_all
finish
