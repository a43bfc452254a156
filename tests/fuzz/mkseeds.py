#!/usr/bin/env python3
"""Writes the hand-made seeds of the harnesses of issue 29 into
tests/fuzz/corpus/NAME (each harness's input format is in the comment at
the top of its tests/fuzz/fuzz_NAME.c). Run from tests/fuzz; the fuzzers
grow the corpora from these (scripts/fuzz)."""
import os
import struct

SEP = b'FUZZ'


def put(name, seed, data):
    d = os.path.join('corpus', name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + seed), 'wb') as f:
        f.write(data)


def kv(*pairs):
    return b''.join(k.encode() + b'=' + v.encode() + b'\0' for k, v in pairs)


# ---- auth_chap_step: control byte, texts separated by 0xff -------------
put('auth_chap_step', 'one-way', b'\x01' + kv(('CHAP_A', '7,5')) + b'\xff')
put('auth_chap_step', 'mutual', b'\x03' + kv(('CHAP_A', '8,7,6,5')) +
    b'\xff' + kv(('CHAP_I', '17'), ('CHAP_C', '0x' + '3a' * 32)))
put('auth_chap_step', 'wrong', b'\x00' + kv(('CHAP_A', '5')) + b'\xff' +
    kv(('CHAP_N', 'iqn.2026-11.org.tcq:fuzzer'), ('CHAP_R', '0x' + '00' * 16)))
put('auth_chap_step', 'base64', b'\x06' + kv(('CHAP_A', '6')) + b'\xff' +
    kv(('CHAP_N', 'x'), ('CHAP_R', '0b' + 'QUJDRA==')))

# ---- pdu_decode_cmd_ahs: limit selector, AHS ---------------------------
ext = struct.pack('>HBB', 17, 1, 0) + bytes(range(16))
put('pdu_decode_cmd_ahs', 'ext-cdb', b'\x04' + ext)
put('pdu_decode_cmd_ahs', 'bidi', b'\x04' + struct.pack('>HBBI', 5, 2, 0, 4096) +
    b'\0' * 0)
put('pdu_decode_cmd_ahs', 'both', b'\x05' + ext +
    struct.pack('>HBBI', 5, 2, 0, 512))

# ---- pr_out: [SA|nexus<<7, scope/type, parameter list] ...FUZZ... -----
def prout(sa, n, stype, key, sakey, flags=0, extra=b''):
    lst = struct.pack('>QQ', key, sakey) + b'\0' * 4 + bytes([flags, 0, 0, 0])
    return bytes([sa | n << 7, stype]) + lst + extra


tid = b'\x05\x00\x00\x2c' + b'iqn.2026-11.org.tcq:fuzz-b,i,0x800000000002\0'
tid += b'\0' * (-len(tid) % 4)
put('pr_out', 'register-reserve', SEP.join([
    prout(0, 0, 0, 0, 0xaa), prout(0, 1, 0, 0, 0xbb),
    prout(1, 0, 0x03, 0xaa, 0), prout(4, 1, 0x03, 0xbb, 0xaa),
    prout(2, 1, 0x03, 0xbb, 0), prout(3, 1, 0, 0xbb, 0)]))
put('pr_out', 'spec-i-pt', prout(0, 0, 0, 0, 0xaa, 0x08,
                                 struct.pack('>I', len(tid)) + tid))
put('pr_out', 'register-move', SEP.join([
    prout(0, 0, 0, 0, 0xaa), prout(1, 0, 0x01, 0xaa, 0),
    bytes([7, 0]) + struct.pack('>QQ', 0xaa, 0xcc) + b'\0\0\0\0' +
    struct.pack('>I', len(tid)) + tid]))
put('pr_out', 'aptpl', prout(6, 0, 0, 0, 0xaa, 0x01))

# ---- sbc_extended_copy: [ctl, list] -----------------------------------
def tgt():
    d = bytes([0xe4, 0, 0, 0, 1, 3, 0, 16]) + b'\0' * 16
    return d + b'\0' * 5 + (512).to_bytes(3, 'big')


def seg(n, s, t, si=0, di=0):
    return bytes([2, 0]) + struct.pack('>HHHHHQQ', 24, si, di, 0, n, s, t)


def xlist(tgts, segs):
    t, s = b''.join(tgts), b''.join(segs)
    return struct.pack('>BBHIII', 1, 0, len(t), 0, len(s), 0) + t + s


put('sbc_extended_copy', 'one-segment', b'\x02' + xlist([tgt()], [seg(8, 0, 100)]))
put('sbc_extended_copy', 'two-targets', b'\x02' +
    xlist([tgt(), tgt()], [seg(4, 10, 20, 0, 1), seg(2, 30, 40, 1, 0)]))
put('sbc_extended_copy', 'no-naa', b'\x00' + xlist([tgt()], [seg(1, 0, 1)]))
put('sbc_extended_copy', 'overlap', b'\x02' + xlist([tgt()], [seg(8, 0, 4)]))

# ---- sbc_unmap: [ANCHOR|nexus<<7, parameter list] ----------------------
def unmap(*ranges):
    d = b''.join(struct.pack('>QI4x', lba, n) for lba, n in ranges)
    return struct.pack('>HH4x', len(d) + 6, len(d)) + d


put('sbc_unmap', 'two', b'\x00' + unmap((0, 4), (8, 2)))
put('sbc_unmap', 'whole', b'\x00' + unmap((0, 512)))
put('sbc_unmap', 'past-end', b'\x00' + unmap((511, 2)) + SEP + b'\x01' +
    unmap((3, 1)))

# ---- spc_mode_select: [ctl, parameter list] -----------------------------
caching = bytes([0x08, 0x12, 0x04]) + b'\0' * 17
control = bytes([0x0a, 0x0a, 0x02, 0x00, 0x00, 0x40]) + b'\0' * 6
put('spc_mode_select', 'caching-6', b'\x00' + bytes([0, 0, 0, 0]) + caching)
put('spc_mode_select', 'control-10', b'\x01' + bytes(8) + control)
put('spc_mode_select', 'blockdesc', b'\x00' + bytes([0, 0, 0, 8]) +
    bytes([0, 0, 0, 0, 0, 0, 2, 0]) + caching + SEP + b'\x81' + bytes(8) +
    control)

# ---- sbc_compare_and_write: [NLB|ctl, LBA, data] ------------------------
put('sbc_compare_and_write', 'zeros', b'\x01\x05' + b'\0' * 512 + b'\x5a' * 512)
put('sbc_compare_and_write', 'twice', b'\x01\x05' + b'\0' * 512 + b'\x5a' * 512 +
    SEP + b'\x81\x05' + b'\x5a' * 512 + b'\x11' * 512)
put('sbc_compare_and_write', 'miscompare', b'\x02\x00' + b'\x01' * 2048)

# ---- cfg_load_string: the file text --------------------------------------
with open('../../conf/tcqd.conf', 'rb') as f:
    put('cfg_load_string', 'tcqd.conf', f.read())
put('cfg_load_string', 'two-luns', b'''[global]
listen = 127.0.0.1:3260
[target iqn.2026-11.org.tcq:a]
chap = iqn.2026-11.org.tcq:i:secret-secret1
[lun iqn.2026-11.org.tcq:a 0]
backend = ram
size = 64M
[lun iqn.2026-11.org.tcq:a 1]
backend = delay:latency=1ms,base=null
size = 1G
block_size = 4096
[initiator iqn.2026-11.org.tcq:a iqn.2026-11.org.tcq:i]
luns = 0,1
''')

# ---- bdev_opts_parse: [backend index, spec] -------------------------------
for i, spec in [(1, b'size=1G'), (2, b'size=64M'),
                (3, b'latency=300us,dist=exp,parallel=4,seed=9,base=ram:size=16M'),
                (4, b'lba=1000-1999;5000,ops=all,base=ram:size=16M'),
                (5, b'size=8M,base=null'), (7, b'model=hdd,capacity=1G,base=ram:size=64M'),
                (8, b'record=/nonexistent/r,state=0'), (6, b'pool=rbd,image=x')]:
    put('bdev_opts_parse', 'b%d' % i, bytes([i]) + spec)

# ---- ctl_request: a request line -------------------------------------------
for n, line in enumerate([b'stats\n', b'luns iqn.2026-11.org.tcq:a\n',
                          b'lun set iqn.2026-11.org.tcq:a 0 product=Other%20Disk\n',
                          b'acl add iqn.x iqn.y luns=0-3\n', b'set a b c d\n',
                          b'\n', b'nosuch\n', b'chap set t u:s\x00\n']):
    put('ctl_request', 'r%d' % n, line)


# ---- native_sess_rx: [ctl, the target's byte stream] ---------------------
def tbhs(op, flags, dlen=0, itt=0, f20=0, f24=0, f28=0, f32=0, f36=0, f40=0,
         f44=0, status=0):
    b = bytes([op, flags, 0, status, 0]) + dlen.to_bytes(3, 'big') + b'\0' * 8
    return b + struct.pack('>IIIIIIII', itt, f20, f24, f28, f32, f36, f40, f44)


def data_in(itt, datasn, off, data, status=None):
    flags = 0x80 | (0x01 if status is not None else 0)
    h = tbhs(0x25, flags, len(data), itt, 0xffffffff, 1 if status is not None else 0,
             2, 64, datasn, off, 0, status or 0)
    return h + data + b'\0' * (-len(data) % 4)


def scsi_rsp(itt, statsn, status=0, sense=b''):
    d = struct.pack('>H', len(sense)) + sense if sense else b''
    return tbhs(0x21, 0x80, len(d), itt, 0, statsn, 2, 64, 0, 0, 0,
                status) + d + b'\0' * (-len(d) % 4)


def r2t(itt, ttt, off, length, n=0):
    return tbhs(0x31, 0x80, 0, itt, ttt, 1, 2, 64, n, off, length)


ITT = 0x00010000
put('native_sess_rx', 'reads', b'\x00' + data_in(ITT, 0, 0, b'\x11' * 8192, 0) +
    data_in(ITT + 1, 0, 0, b'\x22' * 4096) + data_in(ITT + 1, 1, 4096, b'\x33' * 4096) +
    scsi_rsp(ITT + 1, 2))
put('native_sess_rx', 'writes', b'\x00' + r2t(ITT + 2, 7, 0, 8192) +
    r2t(ITT + 3, 8, 0, 4096) + r2t(ITT + 3, 9, 4096, 4096, 1) +
    scsi_rsp(ITT + 2, 1) + scsi_rsp(ITT + 3, 2))
put('native_sess_rx', 'sense', b'\x14' + scsi_rsp(ITT, 1, 2, bytes([0x70, 0, 5]) +
                                                  b'\0' * 9 + b'\x24\0' + b'\0' * 4))
put('native_sess_rx', 'nop-reject-async', b'\x08' +
    tbhs(0x20, 0x80, 4, 0xffffffff, 0x1234, 1, 2, 64) + b'ping' +
    tbhs(0x3f, 0x80, 48, 0xffffffff, 0, 2, 2, 64, 0, 0, 0, 0) + b'\0' * 48 +
    tbhs(0x32, 0x80, 0, 0xffffffff, 0, 3, 2, 64))
