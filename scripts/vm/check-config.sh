#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-config.sh FRAGMENT DOTCONFIG: fail if any fragment option was dropped.
set -euo pipefail
frag=$1 config=$2 bad=0
while read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	sym=$(echo "$want" | sed -E 's/^# //; s/[= ].*//')
	have=$(grep -E "^($sym=|# $sym is not set)" "$config" || true)
	# an unset option may also be absent entirely (its dependencies are off)
	if [ "$have" != "$want" ] && ! { [ -z "$have" ] && [[ $want == "# "* ]]; }; then
		echo "check-config: wanted '$want', got '${have:-<absent>}'" >&2
		bad=1
	fi
done <"$frag"
[ $bad = 0 ] || { echo "check-config: kernel.config options were dropped" >&2; exit 1; }
