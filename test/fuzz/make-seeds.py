#!/usr/bin/env python3
"""test/fuzz/make-seeds.py: the hand-written inputs of fuzz_checkpoint
and fuzz_keys.

Well-formed rows, built from the format's description in
src/pipeline/checkpoint_format.c (not by the code under test), laid out
as fuzz_checkpoint.c decodes its input, so that the fuzzer starts from
rows that read and restore, and mutates from there.  The other targets'
seeds are inputs the fuzzers found themselves (merged with -merge=1).

It also writes, into regressions/, inputs that reproduce the bugs the
fuzzers found (the fuzzers' own crash files had the same effect):
accumulators no events could build, which the engine folded with
undefined behaviour before restores checked them, and an integer key
decoded through a null pointer.
Run from test/fuzz: python3 make-seeds.py
"""
import os
import struct

# test_aggs (test/engine/harness.c): the event count, then each state;
# the float aggregates' end at BEFORE_DECIMALS, then sum and avg over
# decimals take 32 bytes each
BEFORE_DECIMALS = 8 + 8 + 24 + 16 + 16 + 24 + 24 + 16 + 16 + 8 + 16 + 16 + 16 + 16 + 4 * 24
ACC_SIZE = BEFORE_DECIMALS + 2 * 32


def acc(events):
    return struct.pack('<q', events) + bytes(ACC_SIZE - 8)


# offsets of states in the accumulator of test_aggs
OFF_SUM_A = 8 + 8                # sum(a): int128 sum, int64 n
OFF_VAR_F = BEFORE_DECIMALS - 4 * 24    # var_samp(f): double n, sx, sxx


def acc_with(events, offset, raw):
    a = bytearray(acc(events))
    a[offset:offset + len(raw)] = raw
    return bytes(a)


def record(key, slice_no, events=1, accumulator=None):
    body = (struct.pack('<I', len(key)) + key + struct.pack('<q', slice_no)
            + (accumulator if accumulator is not None else acc(events)))
    return b'\x01' + struct.pack('<I', len(body)) + body


def session(start, end, revision=0, has_row=False, events=1):
    return (struct.pack('<qqqB', start, end, revision, 1 if has_row else 0)
            + acc(events))


# a key's sessions in window 1 (the session window; 0 is the fixed one)
def sessions_record(key, horizon, *sessions, window=1):
    body = (struct.pack('<I', len(key)) + key
            + struct.pack('<iqI', window, horizon, len(sessions)) + b''.join(sessions))
    return b'\x04' + struct.pack('<I', len(body)) + body


NO_HORIZON = -2**63


def chunk(*records):
    return b'WACK\x02\x00\x00\x00' + b''.join(records)


def case(int_key, rows, legacy=False, slide=10, int_type=2, cols=(6,), size=0, gap=10):
    out = bytes([(1 if int_key else 0) | (2 if legacy else 0)])
    if int_key:
        out += bytes([int_type])
    else:
        out += bytes([len(cols) - 1]) + bytes(cols)
    out += struct.pack('<H', slide) + bytes([size]) + struct.pack('<q', 0)  # window
    out += struct.pack('<H', gap - 1)  # the session window's gap
    out += b'\x05\x05'  # bound, lateness
    out += struct.pack('<q', 0) + b'\x01' + struct.pack('<H', 5)  # time: before every slice
    out += bytes([len(rows) - 1])
    for i, row in enumerate(rows):
        out += b'\x00\x00'  # shape, expiry bound 0
        if i + 1 < len(rows):
            out += struct.pack('<H', len(row))
        out += row
    return out


def int_key(v):
    return struct.pack('<q', v)


def text_key(s):
    return b'\x00' + struct.pack('<I', len(s)) + s


seeds = {
    'int-one-slice': case(True, [chunk(record(int_key(1), 3))]),
    'int-two-rows-replaced': case(True, [chunk(record(int_key(1), 3, 2)),
                                         chunk(record(int_key(1), 3, 5), record(int_key(2), 4))]),
    'int-slices-at-int64-ends': case(True, [chunk(record(int_key(-2**63), -2**63),
                                                  record(int_key(2**63 - 1), 2**63 - 1))]),
    'text-keys': case(False, [chunk(record(text_key(b'a'), 1), record(text_key(b''), 2),
                                    record(b'\x01', 3))]),
    'tid-key': case(False, [chunk(record(b'\x00' + struct.pack('<I', 6) + bytes(6), 1))],
                    cols=(10,)),
    'format-1-row': case(True, [int_key(7) and (struct.pack('<I', 8) + int_key(7)
                                                  + struct.pack('<q', 2) + acc(1))],
                         legacy=True),
    'expiry-only': case(True, [chunk()]),
    # the restored watermark is -5, lateness 5, gap 10: an open session, a
    # fired one, a horizon of closed ones, and a deletion
    'int-sessions': case(True, [chunk(
        sessions_record(int_key(1), NO_HORIZON, session(10, 20)),
        sessions_record(int_key(2), NO_HORIZON, session(-30, -6, 1, True), session(0, 25, 0, False, 3)),
        sessions_record(int_key(3), -12, session(-2, 8)),
        record(int_key(1), 3))]),
    'text-sessions-then-deleted': case(False, [
        chunk(sessions_record(text_key(b'a'), NO_HORIZON, session(10, 20))),
        chunk(sessions_record(text_key(b'a'), NO_HORIZON))]),
}
os.makedirs('corpus/fuzz_checkpoint', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('corpus/fuzz_checkpoint', name), 'wb') as f:
        f.write(data)

# the sum of two slices past 2^127, from one event each; a variance over
# -9e61 events
big_sum = struct.pack('<QQq', 0xffffffffffffffff, 0x7fffffffffffffff, 1)
regressions = {
    'fuzz_checkpoint/sum-past-int128': case(True, [chunk(
        record(int_key(1), 0, accumulator=acc_with(1, OFF_SUM_A, big_sum)),
        record(int_key(1), 1, accumulator=acc_with(1, OFF_SUM_A, big_sum)))], slide=1, size=1),
    'fuzz_checkpoint/variance-count-out-of-range': case(True, [chunk(
        record(int_key(1), 3, accumulator=acc_with(1, OFF_VAR_F, struct.pack('<d', -9.25e61))))]),
    # an int2 key, values round trip: decoding set a pointer past NULL
    'fuzz_keys/int-key-null-image': bytes([1, 0, 1, 5]),
    # a tid key whose send form is 2 bytes: tidrecv's own error, which did
    # not stop a pipeline, instead of a corrupt-checkpoint one
    'fuzz_keys/tid-key-short-send-form': bytes([2, 0, 10, 0, 2, 0, 0, 0, 0xaa, 0xbb]),
}
for name, data in regressions.items():
    os.makedirs(os.path.join('regressions', os.path.dirname(name)), exist_ok=True)
    with open(os.path.join('regressions', name), 'wb') as f:
        f.write(data)
