#!/bin/bash
# The Debian packages: builds them from a copy of the source tree
# (dpkg-buildpackage -us -uc -b; the package build runs no tests), checks
# them with lintian (no errors), installs them with dpkg -i, runs the
# packaged tcqd --version, starts the packaged /etc/tcqd.conf (a copy,
# listening on 127.0.0.1:0 with its files in a temp dir), logs in with
# iscsi-ls, tcq-bench and tcqctl, stops it by PID, and removes the
# packages again with dpkg -P (-r would leave /etc/tcqd.conf behind): the
# machine is as before. It refuses to run when tcq is installed or
# /etc/tcqd.conf exists. Needs root
# and the build dependencies (scripts/install-deps); run by scripts/check
# after the builds. Prints TAP.
#   tests/package.sh [--keep]   (--keep: copy the .debs to $PKG_OUT,
#                                default ./debs)
set -u
set -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
keep=0
[ "${1:-}" = --keep ] && keep=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcq-package.XXXXXX") || exit 99
PKG_OUT=${PKG_OUT:-$PWD/debs}
n=0
failed=0
tcqd_pid=
installed=()

say() { printf '# %s\n' "$*"; }
result() {	# result STATUS NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && say "$2: $3"
		failed=1
	fi
}
bail() { echo "Bail out! $*"; exit 1; }

cleanup() {
	local p
	trap - EXIT
	if [ -n "$tcqd_pid" ]; then
		kill -KILL "$tcqd_pid" 2>/dev/null
		wait "$tcqd_pid" 2>/dev/null
	fi
	# Leave the machine as it was (neither was there before).
	for p in "${installed[@]}"; do
		dpkg -P "$p" >/dev/null 2>&1 || say "dpkg -P $p failed"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ "$(id -u)" -eq 0 ] || bail "needs root (dpkg -i)"
for t in dpkg-buildpackage dh lintian iscsi-ls; do
	command -v "$t" >/dev/null || bail "$t not installed (scripts/install-deps)"
done
for p in tcq tcq-tools tcq-dbgsym tcq-tools-dbgsym; do
	v=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) &&
		[ "${v:1:1}" != n ] &&
		bail "$p is on this machine ($v): refusing to replace and purge it"
done
[ ! -e /etc/tcqd.conf ] ||
	bail "/etc/tcqd.conf exists: refusing to let the package take it over"

echo "1..7"

# ---- build ----------------------------------------------------------------
src=$tmp/src/tcq
mkdir -p "$src"
# The tree as it is (committed or not), without builds and generated files.
tar -C "$top" --exclude=./.git --exclude='./build*' --exclude=./autom4te.cache \
	--exclude='./tcq-*.tar.gz' --exclude='./tcq-[0-9]*' \
	--exclude=./debian/tmp --exclude=./debian/.debhelper \
	-cf - . | tar -C "$src" -xf - || bail "cannot copy the tree"
start=$(date +%s)
rc=0
(cd "$src" && dpkg-buildpackage -us -uc -b -j2) >"$tmp/build.log" 2>&1 || rc=$?
secs=$(($(date +%s) - start))
if [ "$rc" -ne 0 ]; then
	tail -n 40 "$tmp/build.log" | sed 's/^/# /'
fi
result "$rc" "dpkg-buildpackage -us -uc -b (${secs} s)" "status $rc"
[ "$rc" -eq 0 ] || bail "no package built"
# Not the -dbgsym packages.
debs=("$tmp"/src/tcq_*.deb "$tmp"/src/tcq-tools_*.deb)
changes=$(ls "$tmp"/src/*.changes)
say "built: $(cd "$tmp/src" && ls ./*.deb | xargs -n1 basename | paste -sd ' ')"

# ---- lintian --------------------------------------------------------------
rc=0
lintian --fail-on error --tag-display-limit 0 "$changes" >"$tmp/lintian.log" 2>&1 || rc=$?
sed 's/^/# lintian: /' "$tmp/lintian.log"
result "$rc" "lintian: no errors ($(grep -c '^W:' "$tmp/lintian.log") warnings)" \
	"$(grep '^E:' "$tmp/lintian.log" | paste -sd ';' -)"

# ---- install --------------------------------------------------------------
rc=0
installed=(tcq-tools tcq)
dpkg -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/dpkg.log"
result "$rc" "dpkg -i ${debs[*]##*/}" "status $rc"
[ "$rc" -eq 0 ] || bail "cannot install the packages"

rc=0
v=$(/usr/sbin/tcqd --version 2>&1) || rc=$?
want="tcqd $(dpkg-query -W -f='${Version}' tcq)"
[ "$rc" -eq 0 ] && [ "$v" = "$want" ] || rc=1
result "$rc" "/usr/sbin/tcqd --version: $v" "expected '$want'"

missing=()
for f in /usr/sbin/tcqctl /usr/bin/tcq-bench /usr/bin/tcq-crash /etc/tcqd.conf \
	/lib/systemd/system/tcqd.service /usr/share/man/man8/tcqd.8.gz \
	/usr/share/man/man8/tcqctl.8.gz /usr/share/man/man5/tcqd.conf.5.gz \
	/usr/share/man/man1/tcq-bench.1.gz /usr/share/man/man1/tcq-crash.1.gz; do
	[ -e "$f" ] || missing+=("$f")
done
dpkg-query -W -f='${Conffiles}\n' tcq | grep -q ' /etc/tcqd.conf ' ||
	missing+=("/etc/tcqd.conf as a conffile")
grep -q '^ExecStart=/usr/sbin/tcqd -c /etc/tcqd.conf' /lib/systemd/system/tcqd.service ||
	missing+=("ExecStart=/usr/sbin/tcqd -c /etc/tcqd.conf in the unit")
result "${#missing[@]}" "the packages hold the programs, unit, conffile and man pages" \
	"missing: ${missing[*]}"

# ---- the packaged configuration, on loopback -----------------------------
conf=$tmp/tcqd.conf
sed -e 's|^listen *=.*|listen = 127.0.0.1:0|' -e "s|/var/lib/tcq|$tmp/state|g" \
	/etc/tcqd.conf >"$conf"
mkdir -p "$tmp/state"
/usr/sbin/tcqd -c "$conf" --state-dir "$tmp/state" --ctl "$tmp/ctl.sock" \
	>"$tmp/tcqd.out" 2>"$tmp/tcqd.log" &
tcqd_pid=$!
url=
for ((i = 0; i < 100; i++)); do
	url=$(grep -m1 '^iscsi://' "$tmp/tcqd.out") && break
	kill -0 "$tcqd_pid" 2>/dev/null || break
	sleep 0.1
done
rc=0
if [ -z "$url" ]; then
	sed 's/^/# tcqd: /' "$tmp/tcqd.log"
	rc=1
else
	portal=${url#iscsi://}
	portal=${portal%%/*}
	out=$(timeout 60 iscsi-ls -s "iscsi://$portal" 2>&1) || rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	grep -q '^Lun:0 ' <<<"$out" || rc=1
	out=$(timeout 60 /usr/bin/tcq-bench --quiet --rw randrw --bs 4k --depth 8 \
		--runtime 1 --verify "$url" 2>&1) || rc=$?
	printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
	out=$(timeout 30 /usr/sbin/tcqctl -s "$tmp/ctl.sock" luns 2>&1) || rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
fi
result "$rc" "packaged tcqd serves /etc/tcqd.conf (on ${portal:-?}): iscsi-ls -s, tcq-bench --verify, tcqctl"

rc=0
if [ -n "$tcqd_pid" ] && kill -0 "$tcqd_pid" 2>/dev/null; then
	kill -TERM "$tcqd_pid"
	wait "$tcqd_pid" || rc=$?
else
	rc=1
fi
tcqd_pid=
result "$rc" "packaged tcqd exits 0 on SIGTERM" "status $rc"

if [ "$keep" -eq 1 ]; then
	mkdir -p "$PKG_OUT"
	cp "$tmp"/src/*.deb "$changes" "$PKG_OUT"/
	say "packages kept in $PKG_OUT"
fi
exit "$failed"
