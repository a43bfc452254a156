#!/bin/bash
# The checker of tests/guest/crash-ext4.sh, run by tcq-crash check on each
# crash state of a recorded ext4:
#
#   crash-ext4-check.sh IMAGE MARK
#
# IMAGE is tcq-crash's working copy of the state (left untouched: the
# checks run on a sparse copy), MARK the crash point's mark, "step N".
# The state passes (status 0) when, on the copy, e2fsck replays the
# journal, then `e2fsck -fn` finds the file system clean, and every file
# the workload fsynced before mark N reads back (debugfs) with the content
# step N left it with, and a file renamed away by then is gone. Anything
# else fails it (status 1), with the reason on stderr; a MARK that names
# no step is a failure too (status 2). With CRASH_EXT4_LOG=FILE the
# reasons are appended to FILE; with CRASH_EXT4_CACHE=DIR the expected
# contents are made once, into DIR, for every state (TMPDIR on a tmpfs
# spares e2fsck's fsyncs: a state then takes ~0.2 s instead of 1-4).
#
# The workload lives here too, so the guest's steps and the checker's
# expectations come from one place: crash-ext4.sh sources this file for
# ext4_steps and ext4_step_script.
#
#   step 1  create a (200000 bytes), fsync a and the root directory
#   step 2  append 100000 bytes to a, fsync a
#   step 3  create b (150000 bytes), fsync b and the root directory
#   step 4  rename b to c, fsync the root directory
#   step 5  create d (300000 bytes), fsync d and the root directory
#   step 6  overwrite a's first 65536 bytes in place, fsync a
#
# After each step's fsync the step also writes 256 KiB to a scratch file
# scratchN with O_DIRECT and no fsync: writes the initiator completed but
# never flushed, in doubt at the mark that follows (the model's states
# drop or keep them), which ext4 must survive either way.
set -u
set -o pipefail

# shellcheck disable=SC2034  # read by crash-ext4.sh
ext4_steps=6

# ext4_gen_cmd ID: the command that writes a piece of content on stdout
# (busybox's yes and head in the guest give the same bytes); ext4_gen ID
# runs it.
ext4_gen_cmd() {
	case $1 in
	A1) echo "yes 'a: step 1, created' | head -c 200000" ;;
	A2) echo "yes 'a: step 2, appended' | head -c 100000" ;;
	A3) echo "yes 'a: step 6, overwritten in place' | head -c 65536" ;;
	B) echo "yes 'b: step 3, renamed to c in step 4' | head -c 150000" ;;
	D) echo "yes 'd: step 5' | head -c 300000" ;;
	*) return 1 ;;
	esac
}
ext4_gen() { (set +o pipefail; eval "$(ext4_gen_cmd "$1")"); }

# ext4_step_script N DIR: the guest's sh for step N on the file system
# mounted at DIR (busybox: `sync FILE...` fsyncs each FILE, a directory
# too).
ext4_step_script() {
	local n=$1 d=$2 s
	case $n in
	1) s="$(ext4_gen_cmd A1) >$d/a && sync $d/a $d" ;;
	2) s="$(ext4_gen_cmd A2) >>$d/a && sync $d/a" ;;
	3) s="$(ext4_gen_cmd B) >$d/b && sync $d/b $d" ;;
	4) s="mv $d/b $d/c && sync $d" ;;
	5) s="$(ext4_gen_cmd D) >$d/d && sync $d/d $d" ;;
	6) s="$(ext4_gen_cmd A3) | dd of=$d/a conv=notrunc,fsync 2>/dev/null" ;;
	*) return 1 ;;
	esac
	printf '%s && dd if=/dev/urandom of=%s/scratch%s bs=64k count=4 oflag=direct 2>/dev/null\n' \
		"$s" "$d" "$n"
}

# ext4_want FILE N: what FILE must hold once step N's fsync returned, on
# stdout, status 0; status 1: FILE must not exist; status 2: no promise.
ext4_want() {
	local f=$1 n=$2
	case $f in
	a)
		[ "$n" -ge 1 ] || return 2
		if [ "$n" -ge 6 ]; then
			ext4_gen A3
			ext4_gen A1 | tail -c +65537
		else
			ext4_gen A1
		fi
		[ "$n" -lt 2 ] || ext4_gen A2 ;;
	b)
		[ "$n" -ge 3 ] || return 2
		[ "$n" -lt 4 ] || return 1
		ext4_gen B ;;
	c)
		[ "$n" -ge 4 ] || return 2
		ext4_gen B ;;
	d)
		[ "$n" -ge 5 ] || return 2
		ext4_gen D ;;
	*) return 2 ;;
	esac
}

ext4_check_main() {
	local img=$1 mark=$2 n tmp rc f want cache
	[[ $mark =~ ^step\ ([0-9]+)$ ]] || { echo "mark '$mark' names no step" >&2; return 2; }
	n=${BASH_REMATCH[1]}
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/crash-ext4-check.XXXXXX") || return 2
	# shellcheck disable=SC2064  # tmp is fixed now
	trap "rm -rf '$tmp'" EXIT
	cache=${CRASH_EXT4_CACHE:-$tmp}
	cp --sparse=always "$img" "$tmp/fs.img" || return 2
	rc=0
	e2fsck -y -E journal_only "$tmp/fs.img" >"$tmp/replay" 2>&1 || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "$mark: the journal replay failed (e2fsck status $rc):" >&2
		sed 's/^/  /' "$tmp/replay" >&2
		return 1
	fi
	rc=0
	e2fsck -fn "$tmp/fs.img" >"$tmp/fsck" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$mark: e2fsck -fn after the replay: status $rc:" >&2
		head -n 20 "$tmp/fsck" | sed 's/^/  /' >&2
		return 1
	fi
	# every file out at once (debugfs writes none that is not there)
	for f in a b c d; do echo "dump /$f $tmp/got.$f"; done >"$tmp/cmds"
	debugfs -f "$tmp/cmds" "$tmp/fs.img" >/dev/null 2>&1
	for f in a b c d; do
		want=$cache/want.$n.$f
		if [ ! -f "$want.rc" ]; then
			rc=0
			ext4_want "$f" "$n" >"$want" || rc=$?
			echo "$rc" >"$want.rc"
		fi
		rc=$(cat "$want.rc")
		case $rc in
		0)
			[ -f "$tmp/got.$f" ] || { echo "$mark: /$f is missing" >&2; return 1; }
			cmp -s "$want" "$tmp/got.$f" || {
				echo "$mark: /$f differs: $(cmp "$want" "$tmp/got.$f" 2>&1 |
					sed 's|.* differ: ||')" >&2
				return 1
			} ;;
		1)
			[ ! -f "$tmp/got.$f" ] || { echo "$mark: /$f exists, renamed away" >&2; return 1; } ;;
		esac
	done
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	[ $# -eq 2 ] || { echo "usage: $0 IMAGE MARK" >&2; exit 2; }
	# (tcq-crash sends a checker's output to /dev/null)
	[ -n "${CRASH_EXT4_LOG:-}" ] && exec 2>>"$CRASH_EXT4_LOG"
	ext4_check_main "$@"
	exit
fi
