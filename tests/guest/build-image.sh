#!/bin/bash
# Builds the guest for the kernel-initiator tests (tests/guest/guest.sh):
# Debian's own kernel (the package linux-image-amd64 points at), a cpio
# initramfs with busybox, the full open-iscsi (iscsid + iscsiadm, so the
# kernel initiator's error recovery and replacement_timeout work as on a
# real host), the kernel modules of the iSCSI initiator, virtio net and
# serial, SCSI disks and ext4, CD-ROMs (sr, sg, isofs; with modules.dep),
# sg3-utils and e2fsprogs from the host, ddpt (ODX through the kernel's
# disk), and an /init that
# answers commands on a virtio serial port (see the protocol in guest.sh).
#
# The packages come with `apt-get download` into a cache dir reused across
# runs ($TCQ_GUEST_CACHE, default /var/cache/tcq-guest); the image is kept
# there too, keyed by the package versions and this script, so a second
# run only looks the versions up (not root: ~/.cache/tcq-guest). Prints two lines: the kernel and the
# initramfs paths. Exits 77 (skip) when something it needs is missing.
#
#   tests/guest/build-image.sh [--force]
set -euo pipefail

CACHE=${TCQ_GUEST_CACHE:-/var/cache/tcq-guest}
if [ -z "${TCQ_GUEST_CACHE:-}" ] && ! mkdir -p "$CACHE" 2>/dev/null; then
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tcq-guest	# not root
fi
SELF=$(readlink -f "$0")
force=0
[ "${1:-}" = --force ] && force=1

say() { printf 'build-image: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }

for t in apt-get apt-cache dpkg-deb depmod modprobe cpio gzip ldd flock; do
	command -v "$t" >/dev/null 2>&1 ||
		skip "$t not installed (scripts/install-deps installs it)"
done

# The kernel modules the guest loads at boot, in this order (their own
# dependencies come first, resolved with modprobe --show-depends).
MODULES=(
	virtio_pci virtio_net virtio_console
	crc32c_generic crct10dif_generic crc64_rocksoft_generic
	scsi_mod sd_mod scsi_transport_iscsi libiscsi libiscsi_tcp iscsi_tcp
	ext4 sr_mod sg isofs
)

# cand PKG: the version apt would install.
cand() {
	apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)'
}

mkdir -p "$CACHE/debs" "$CACHE/images"
exec 9>"$CACHE/.lock"
flock -w 600 9 || die "cannot lock $CACHE/.lock within 600 s"

# One apt-cache call (the slow part of a cached run): the candidate
# versions of the kernel's meta package, open-iscsi and busybox-static.
declare -A VER=()
versions() {
	while read -r p v; do
		[ "$v" = "(none)" ] || VER[$p]=$v
	done < <(apt-cache policy linux-image-amd64 open-iscsi busybox-static ddpt 2>/dev/null |
		awk '/^[^ ].*:$/ { p = substr($1, 1, length($1) - 1) }
		     /^ *Candidate:/ { print p, $2 }')
}
versions
if [ -z "${VER[linux-image-amd64]:-}" ] && [ "$(id -u)" = 0 ] &&
	[ ! -s "$CACHE/images/last" ]; then
	say "no package lists: apt-get update"
	apt-get update -q >&2 || true
	versions
fi
if [ -z "${VER[linux-image-amd64]:-}" ]; then
	# No package lists (apt-get update never ran): the last image built.
	if [ -s "$CACHE/images/last" ] && [ -d "$(cat "$CACHE/images/last")" ]; then
		d=$(cat "$CACHE/images/last")
		say "no package lists; using the last image, $d"
		printf '%s\n%s\n' "$d/vmlinuz" "$d/initrd.img"
		exit 0
	fi
	skip "apt-cache knows no linux-image-amd64 (run apt-get update)"
fi
for p in open-iscsi busybox-static ddpt; do
	[ -n "${VER[$p]:-}" ] || die "no candidate version of $p"
done

KEY=$(
	for p in linux-image-amd64 open-iscsi busybox-static ddpt; do
		printf '%s=%s\n' "$p" "${VER[$p]}"
	done
	sha256sum <"$SELF"
)
KEY=$(printf '%s' "$KEY" | sha256sum | cut -c1-16)
OUTDIR=$CACHE/images/$KEY
if [ "$force" = 0 ] && [ -s "$OUTDIR/vmlinuz" ] && [ -s "$OUTDIR/initrd.img" ]; then
	printf '%s\n' "$OUTDIR" >"$CACHE/images/last"
	printf '%s\n%s\n' "$OUTDIR/vmlinuz" "$OUTDIR/initrd.img"
	exit 0
fi

# The kernel package itself (what the meta package depends on).
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1) || true
[ -n "$KPKG" ] || die "linux-image-amd64 depends on no kernel package"
VER[$KPKG]=$(cand "$KPKG") || die "no candidate version of $KPKG"
PKGS=("$KPKG" open-iscsi busybox-static ddpt)

WORK=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# deb PKG [VERSION]: the .deb in the cache, downloaded when missing.
deb() {
	local p=$1 v=${2:-} f
	[ -n "$v" ] || v=$(cand "$p") || die "no candidate version of $p"
	f=$(find "$CACHE/debs" -maxdepth 1 -name "${p}_*.deb" | while read -r c; do
		[ "$(dpkg-deb -f "$c" Version)" = "$v" ] && echo "$c"
	done | head -n1)
	if [ -z "$f" ]; then
		say "apt-get download $p=$v"
		(cd "$CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root \
			"$p=$v" >&2) || die "apt-get download $p=$v failed"
		f=$(find "$CACHE/debs" -maxdepth 1 -name "${p}_*.deb" | while read -r c; do
			[ "$(dpkg-deb -f "$c" Version)" = "$v" ] && echo "$c"
		done | head -n1)
		[ -n "$f" ] || die "apt-get download $p left no .deb"
	fi
	printf '%s\n' "$f"
}

X=$WORK/x	# the packages, extracted
R=$WORK/root	# the initramfs
mkdir -p "$X" "$R"
for p in "${PKGS[@]}"; do
	dpkg-deb -x "$(deb "$p" "${VER[$p]}")" "$X"
done
KVER=$(find "$X/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n1)
if [ -z "$KVER" ] || [ ! -f "$X/boot/vmlinuz-$KVER" ]; then
	die "no kernel in $KPKG"
fi

# The libraries open-iscsi links: the host's own when ldd finds them there,
# else from the packages open-iscsi depends on (downloaded, extracted).
libpath() {
	local d out=
	for d in "$X/lib/x86_64-linux-gnu" "$X/usr/lib/x86_64-linux-gnu"; do
		[ -d "$d" ] && out=$out${out:+:}$d
	done
	printf '%s' "$out"
}
missing_libs() {
	LD_LIBRARY_PATH=$(libpath) ldd "$X/sbin/iscsid" "$X/sbin/iscsiadm" |
		grep -c 'not found' || true
}
if [ "$(missing_libs)" != 0 ]; then
	for p in $(dpkg-deb -f "$(deb open-iscsi "${VER[open-iscsi]}")" Depends |
		sed 's/[,|]/\n/g' | sed 's/(.*)//; s/^ *//; s/ *$//' | grep '^lib'); do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q 'install ok installed' && continue
		dpkg-deb -x "$(deb "$p")" "$X"
	done
	[ "$(missing_libs)" = 0 ] || {
		LD_LIBRARY_PATH=$(libpath) ldd "$X/sbin/iscsid" "$X/sbin/iscsiadm" >&2
		die "libraries of iscsid/iscsiadm not found"
	}
fi

# put SRC DEST: a file of the image (DEST relative to its root).
put() {
	mkdir -p "$R/$(dirname "$2")"
	cp -L "$1" "$R/$2"
}

mkdir -p "$R"/{bin,sbin,etc/iscsi,proc,sys,dev,run,tmp,var/lib/iscsi,var/lock} \
	"$R"/usr/{bin,sbin} "$R/etc/iscsi"/{nodes,send_targets,ifaces}
put "$X/bin/busybox" bin/busybox
for a in $("$R/bin/busybox" --list-full); do
	[ -e "$R/$a" ] || { mkdir -p "$R/$(dirname "$a")"; ln -s /bin/busybox "$R/$a"; }
done
# iscsid, iscsiadm, and ddpt and ddptctl (sg3_utils' dd and its ODX
# helper, tests/guest/odx.sh), with what they link.
for b in sbin/iscsid sbin/iscsiadm usr/bin/ddpt usr/bin/ddptctl; do
	rm -f "$R/$b"	# not busybox's applet link
	put "$X/$b" "$b"
	LD_LIBRARY_PATH=$(libpath) ldd "$X/$b" | awk '
		$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }'
done | sort -u | while read -r lib; do
	case $lib in
	"$X"/*) put "$lib" "lib/x86_64-linux-gnu/$(basename "$lib")" ;;
	*) put "$lib" "${lib#/}" ;;
	esac
done
# host_tools PACKAGE DIR BIN...: the host's BINs (of PACKAGE) into DIR of
# the image, in place of busybox's applet links, with what they link.
host_tools() {
	local pkg=$1 dir=$2 b
	shift 2
	for b in "$@"; do
		[ -x "$b" ] || die "$b not found ($pkg)"
		rm -f "$R/$dir/$(basename "$b")"
		put "$b" "$dir/$(basename "$b")"
		ldd "$b" | awk '
			$2 == "=>" && $3 ~ /^\// { print $3 }
			$1 ~ /^\// { print $1 }'
	done | sort -u | while read -r lib; do
		put "$lib" "${lib#/}"
	done
}
# e2fsprogs from the host (a required package there): ext4 on an iSCSI
# disk made, checked and mounted in the guest (tests/guest/restart.sh).
host_tools e2fsprogs sbin /sbin/mke2fs /sbin/e2fsck
rm -f "$R/sbin/mkfs.ext4" && ln -s mke2fs "$R/sbin/mkfs.ext4"
# sg3-utils from the host: an MMC LUN (type = cdrom) as the kernel's sr
# driver sees it, asked with its own commands (tests/guest/cdrom.sh);
# sg_raw sends any CDB through the kernel's SG_IO (ODX, tests/guest/odx.sh).
host_tools sg3-utils usr/bin /usr/bin/sg_inq /usr/bin/sg_get_config \
	/usr/bin/sg_readcap /usr/bin/sg_turs /usr/bin/sg_start /usr/bin/sg_raw
[ -f /etc/mke2fs.conf ] && put /etc/mke2fs.conf etc/mke2fs.conf
put "$X/etc/iscsi/iscsid.conf" etc/iscsi/iscsid.conf
sed -i 's|^iscsid.startup = .*|iscsid.startup = /bin/true|' "$R/etc/iscsi/iscsid.conf"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$R/etc/passwd"
printf 'root:x:0:\n' >"$R/etc/group"

# The modules and what they depend on, and their modules.dep.
depmod -b "$X" "$KVER"
: >"$R/etc/modules"
for m in "${MODULES[@]}"; do
	modprobe -d "$X" -S "$KVER" --show-depends "$m" ||
		die "module $m not in $KPKG"
done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' | while read -r ko; do
	put "$ko" "${ko#"$X"/}"
done
for m in "${MODULES[@]}"; do echo "$m" >>"$R/etc/modules"; done
cp "$X/lib/modules/$KVER"/modules.{order,builtin,builtin.modinfo} \
	"$R/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$R" "$KVER"
[ -s "$R/lib/modules/$KVER/modules.dep" ] || die "depmod wrote no modules.dep"

cat >"$R/init" <<'EOF'
#!/bin/sh
# tcq guest init: brings up the initiator, then answers commands on the
# virtio serial port named tcq.ctl (protocol: tests/guest/guest.sh).
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/lock/iscsi /dev/pts
log() { echo "tcq-guest: $*" >/dev/console; }
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n1; }

for m in $(cat /etc/modules); do
	modprobe "$m" || log "modprobe $m failed"
done

ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
i=0
while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] && [ "$i" -lt 50 ]; do
	i=$((i + 1))
	sleep 0.1
done

iname=$(param tcq.initiator)
echo "InitiatorName=${iname:-iqn.2026-11.org.tcq:guest}" >/etc/iscsi/initiatorname.iscsi
# In the foreground (no syslog here): what it logs goes to the console.
iscsid -f </dev/null >/dev/console 2>&1 &
i=0
while ! grep -q ISCSIADM_ABSTRACT /proc/net/unix && [ "$i" -lt 50 ]; do
	i=$((i + 1))
	sleep 0.1
done

port=
i=0
while [ -z "$port" ] && [ "$i" -lt 100 ]; do
	for d in /sys/class/virtio-ports/*; do
		[ "$(cat "$d/name" 2>/dev/null)" = tcq.ctl ] && port=/dev/${d##*/}
	done
	[ -n "$port" ] && [ -c "$port" ] && break
	port=
	i=$((i + 1))
	sleep 0.1
done
[ -n "$port" ] || { log "no virtio port tcq.ctl"; sleep 5; poweroff -f; }
exec 3<>"$port"
nonce=$(param tcq.nonce)
log "READY $nonce"
echo "READY $nonce" >&3

# C ID SECS BASE64-SCRIPT  ->  O ID, stdout (base64), R ID, stderr
# (base64), E ID STATUS. The script runs under timeout SECS (then KILL).
while :; do
	if ! read -r tag id secs b64 <&3; then
		sleep 0.2
		continue
	fi
	[ "$tag" = C ] || continue
	# Files of its own: what a command that timed out left running
	# writes nowhere the next one reads.
	f=/tmp/c.$id
	echo "$b64" | base64 -d >"$f.sh"
	log "[$id] \$ $(head -c 300 "$f.sh" | tr -s '\n\t' '  ')"
	timeout -s KILL "$secs" sh "$f.sh" </dev/null >"$f.out" 2>"$f.err"
	rc=$?
	log "[$id] status $rc"
	[ -s "$f.err" ] && head -n 20 "$f.err" | sed "s/^/tcq-guest: [$id] stderr: /" >/dev/console
	{
		echo "O $id"
		base64 <"$f.out"
		echo "R $id"
		base64 <"$f.err"
		echo "E $id $rc"
	} >&3
	rm -f "$f.sh" "$f.out" "$f.err"
done
EOF
chmod 755 "$R/init"

mkdir -p "$WORK/out"
cp "$X/boot/vmlinuz-$KVER" "$WORK/out/vmlinuz"
(cd "$R" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet | gzip -1) >"$WORK/out/initrd.img"
for p in linux-image-amd64 "${PKGS[@]}"; do
	printf '%s=%s\n' "$p" "${VER[$p]}"
done >"$WORK/out/versions"
rm -rf "$OUTDIR"
mv "$WORK/out" "$OUTDIR"
printf '%s\n' "$OUTDIR" >"$CACHE/images/last"
# The four newest images stay (other work trees may use other versions).
find "$CACHE/images" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' |
	sort -rn | tail -n +5 | cut -d' ' -f2- | while read -r d; do rm -rf "$d"; done
say "built $OUTDIR ($(du -h "$OUTDIR/initrd.img" | cut -f1) initramfs, kernel $KVER)"
printf '%s\n%s\n' "$OUTDIR/vmlinuz" "$OUTDIR/initrd.img"
