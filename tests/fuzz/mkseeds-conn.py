#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_conn (tests/fuzz/corpus/conn): byte 0 is
the harness's control byte, the rest the initiator's byte stream. Seeds
with bit 0 set start after the harness's canned login (CmdSN 1, ITT
0x1000 used); the others log in themselves. Run from tests/fuzz."""
import struct

IQN = b'iqn.2026-11.org.tcq:fuzz'
INI = b'iqn.2026-11.org.tcq:fuzzer'


def pad(b):
    return b + b'\0' * (-len(b) % 4)


def bhs(op, flags, dlen=0, lun=0, itt=0, f20=0, f24=0, f28=0, tail=b'', ahs=0):
    b = bytes([op, flags, 0, 0, ahs]) + dlen.to_bytes(3, 'big')
    b += lun.to_bytes(8, 'big') + struct.pack('>IIII', itt, f20, f24, f28)
    return b + tail.ljust(16, b'\0')


def pdu(h, data=b''):
    return h + pad(data)


def cmd(itt, cmdsn, cdb, edtl=0, r=False, w=False, final=True, data=b'',
        lun=0, attr=1, imm=False):
    flags = (0x80 if final else 0) | (0x40 if r else 0) | (0x20 if w else 0) | attr
    op = 0x01 | (0x40 if imm else 0)
    return pdu(bhs(op, flags, len(data), lun << 48, itt, edtl, cmdsn, 0,
                   cdb.ljust(16, b'\0')), data)


def dout(itt, ttt, datasn, off, data, final=True):
    return pdu(bhs(0x05, 0x80 if final else 0, len(data), 0, itt, ttt, 0, 0,
                   struct.pack('>IIII', 0, datasn, off, 0)), data)


def kvs(*pairs):
    return b''.join(k + b'=' + v + b'\0' for k, v in pairs)


def login(csg, nsg, transit, keys, itt=0x1000, cmdsn=1, tsih=0):
    flags = (0x80 if transit else 0) | (csg << 2) | nsg
    head = bytes([0x43, flags, 0, 0, 0]) + len(keys).to_bytes(3, 'big')
    head += bytes([0x80, 0, 0, 1, 0, 2]) + tsih.to_bytes(2, 'big')
    head += struct.pack('>IIII', itt, 0, cmdsn, 0) + b'\0' * 16
    return pdu(head, keys)


def rd10(lba, n):
    return bytes([0x28, 0]) + lba.to_bytes(4, 'big') + bytes([0]) + n.to_bytes(2, 'big') + b'\0'


def wr10(lba, n):
    return bytes([0x2a, 0]) + lba.to_bytes(4, 'big') + bytes([0]) + n.to_bytes(2, 'big') + b'\0'


seeds = {}
inq = bytes([0x12, 0, 0, 0, 0xff, 0])
seeds['inquiry'] = b'\x01' + cmd(1, 1, inq, 255, r=True)
seeds['readcap'] = b'\x01' + cmd(1, 1, bytes([0x25] + [0] * 9), 8, r=True) + \
    cmd(2, 2, bytes([0x9e, 0x10] + [0] * 10 + [0, 0, 0, 32, 0, 0]), 32, r=True)
seeds['write_imm'] = b'\x01' + cmd(1, 1, wr10(0, 1), 512, w=True, data=b'A' * 512) + \
    cmd(2, 2, rd10(0, 1), 512, r=True)
seeds['write_unsol'] = b'\x01' + cmd(1, 1, wr10(8, 4), 2048, w=True, final=False,
                                     data=b'B' * 512) + \
    dout(1, 0xffffffff, 0, 512, b'C' * 512, final=False) + \
    dout(1, 0xffffffff, 1, 1024, b'D' * 1024)
# With ImmediateData and FirstBurst 64 KiB the rest of a 128 KiB write is
# solicited: the first R2T of the session carries TTT 1.
seeds['write_r2t'] = b'\x01' + cmd(1, 1, wr10(0, 256), 131072, w=True,
                                   data=b'E' * 8192) + \
    dout(1, 1, 0, 8192, b'F' * 65536, final=False) + \
    dout(1, 1, 1, 73728, b'G' * 57344)
seeds['write_lun1'] = b'\x01' + cmd(1, 1, wr10(0, 1), 4096, w=True, lun=1,
                                    data=b'H' * 4096) + \
    cmd(2, 2, rd10(0, 1), 4096, r=True, lun=1)
seeds['nop_text_logout'] = b'\x01' + \
    pdu(bhs(0x00, 0x80, 4, 0, 7, 0xffffffff, 1, 0), b'ping') + \
    pdu(bhs(0x04, 0x80, 16, 0, 8, 0xffffffff, 2, 0), b'SendTargets=All\0') + \
    pdu(bhs(0x06 | 0x40, 0x80, 0, 0, 9, 0, 3, 0))
seeds['tmf'] = b'\x01' + cmd(1, 1, wr10(0, 8), 4096, w=True, final=False) + \
    pdu(bhs(0x02 | 0x40, 0x81, 0, 0, 2, 1, 2, 0, struct.pack('>II', 1, 0))) + \
    pdu(bhs(0x02 | 0x40, 0x85, 0, 0, 3, 0xffffffff, 2, 0))
seeds['ordered'] = b'\x01' + cmd(1, 1, wr10(0, 1), 512, w=True, data=b'I' * 512, attr=2) + \
    cmd(2, 3, rd10(0, 1), 512, r=True, attr=3) + cmd(3, 2, inq, 255, r=True)
seeds['misc_cmds'] = b'\x01' + cmd(1, 1, bytes([0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]), 256, r=True) + \
    cmd(2, 2, bytes([0x1a, 0, 0x3f, 0, 0xff, 0]), 255, r=True) + \
    cmd(3, 3, bytes([0x35] + [0] * 9)) + cmd(4, 4, bytes(6)) + \
    cmd(5, 5, bytes([0x03, 0, 0, 0, 252, 0]), 252, r=True) + \
    cmd(6, 6, bytes([0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0]), 24, w=True,
        data=bytes([0, 22, 0, 16, 0, 0, 0, 0]) + (0).to_bytes(8, 'big') + (8).to_bytes(4, 'big') + b'\0' * 4)
full = login(0, 1, True, kvs((b'InitiatorName', INI), (b'TargetName', IQN),
                            (b'SessionType', b'Normal'), (b'AuthMethod', b'None'))) + \
    login(1, 3, True, kvs((b'HeaderDigest', b'None'), (b'DataDigest', b'None'),
                         (b'MaxRecvDataSegmentLength', b'262144'),
                         (b'InitialR2T', b'No'), (b'ImmediateData', b'Yes'),
                         (b'MaxBurstLength', b'1048576'), (b'FirstBurstLength', b'65536'),
                         (b'MaxOutstandingR2T', b'1'), (b'ErrorRecoveryLevel', b'0')))
seeds['full_login'] = b'\x00' + full + cmd(1, 1, inq, 255, r=True)
seeds['full_login_chunked'] = b'\x06' + full + cmd(1, 1, wr10(0, 1), 512, w=True, data=b'J' * 512)
seeds['discovery'] = b'\x00' + login(0, 3, True, kvs((b'InitiatorName', INI),
                                                     (b'SessionType', b'Discovery'),
                                                     (b'AuthMethod', b'None'))) + \
    pdu(bhs(0x04, 0x80, 16, 0, 2, 0xffffffff, 1, 0), b'SendTargets=All\0')
seeds['login_digests'] = b'\x00' + login(1, 3, True, kvs((b'InitiatorName', INI), (b'TargetName', IQN),
                                                         (b'HeaderDigest', b'CRC32C'), (b'DataDigest', b'CRC32C')))
for name, data in seeds.items():
    with open('corpus/conn/' + name, 'wb') as f:
        f.write(data)
