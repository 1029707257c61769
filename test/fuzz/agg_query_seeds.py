#!/usr/bin/env python3
# test/fuzz/agg_query_seeds.py: the seed corpus of fuzz_agg_query
# (corpus/fuzz_agg_query/) and the inputs of the bugs it found
# (regressions/fuzz_agg_query/).
#
#   python3 test/fuzz/agg_query_seeds.py
#
# Each input is a byte string laid out as decode_case() in
# fuzz_agg_query.c reads it; the indexes below are those of its tables, so
# a change to the tables or to the order of the choices calls for a look
# at this file (WA_FUZZ_PRINT=1 fuzz_agg_query FILE... shows what each
# input means).  A table choice is one byte below 224 for the common
# entries, or 224 and an index for any entry.
import os
import re

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, 'corpus', 'fuzz_agg_query')

# The harness's tables, read from its source, so that entries are named by
# their text here rather than by an index that moves when one is added.
with open(os.path.join(here, 'fuzz_agg_query.c')) as f:
    source = f.read()


def table(name):
    body = re.search(r'static const \w+ ' + name + r'\[\] = \{(.*?)\n\};', source, re.S).group(1)
    body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
    # the first field of each {...}: a string (C escapes undone) or NULL
    return [None if m.group(1) == 'NULL' else bytes(m.group(2), 'ascii').decode('unicode_escape')
            for m in re.finditer(r'\{\s*(NULL|"((?:[^"\\]|\\.)*)")', body)]


def A(name, text):
    """any entry of a table, by its text"""
    return ('any', table(name).index(text))

def P(v):
    """a table choice: an int picks a common entry, ('any', i) any entry"""
    return [224, v[1]] if isinstance(v, tuple) else [v]


def case(name, flags=0, source=0, ev=0, keys=((0, 0),), aggs=((0, 0),), mask=0,
         prefix=0, where=0, gb=0, suffix=0, arrival=0, domain=0,
         wset=0, windows=((0, 0, None, 0),), bound=0, lateness=0, splice=()):
    b = [flags] + P(source) + P(ev) + [(len(keys) - 1) % 4, (len(aggs) - 1) % 5]
    for q, k in keys:
        b += [q] + P(k)
    for q, a in aggs:
        b += [q] + P(a)
    b += [mask] + P(prefix) + P(where) + [gb] + P(suffix) + P(arrival) + [domain]
    b += [wset]
    for form, sz, slide, origin in windows:
        b += [form, sz]
        if form & 1:
            b += [slide]
        b += [origin]
    b += P(bound) + P(lateness)
    b += list(splice)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), 'wb') as f:
        f.write(bytes(b))

# the simplest: SELECT k4, count(*) FROM fzt GROUP BY k4 over ts, tumbling 1 s
case('01-simplest')
# integer event time e8 (both ends of bigint), hopping, bound and lateness, by id
case('02-int-hopping-late', ev=1, keys=((0, 1),), aggs=((0, 9), (0, 23)),
     arrival=1, windows=((1, 4, 0, 0),), bound=5, lateness=7)
# timestamp without time zone, two windows, text forms, origins, by event time
case('03-timestamp-two-windows', ev=2, keys=((0, 4), (1, 11)), aggs=((0, 13), (2, 40)),
     mask=0b010, arrival=2, wset=1, windows=((2, 3, None, 2), (3, 4, 1, 1)),
     bound=3, lateness=8)
# floats and variances, no keys, over the view, by ord
case('04-floats-no-keys', source=5, ev=3, keys=(), aggs=((0, 29), (0, 30), (0, 45), (0, 50)),
     arrival=4, windows=((0, 5, None, 1),), bound=5, lateness=8)
# dropped() with keys, integer windows, lateness 0: too-late rows
case('05-dropped', flags=7, ev=1, keys=((0, 0), (0, 4)), aggs=((0, 0),), arrival=3,
     windows=((1, 4, 2, 0),), bound=3, lateness=2)
# keys qualified and aliased, GROUP BY ordinal, a materialized view
case('06-keys-ordinal', source=6, ev=5, keys=((3, 7), (2, 8), (1, 9)),
     aggs=((1, 21), (0, 34)), mask=0b1010, gb=1, arrival=1, windows=((0, 6, None, 0),), bound=4)
# partitioned table, WHERE with a subquery, GROUP BY alias, share_windows off
case('07-partitioned-where', flags=8, source=7, ev=0, keys=((2, 13),), aggs=((0, 8), (0, 15)),
     where=6, gb=2, wset=1, windows=((0, 4, None, 0), (1, 5, 3, 2)), bound=2, lateness=7)
# keys the README does not name: enum, jsonb, arrays, records, system columns
case('08-odd-keys', ev=3, keys=((0, A('keys', '@m')), (0, A('keys', '@arr')), (0, A('keys', '@ctid'))), aggs=((0, 0),),
     windows=((0, 2, None, 0),))
# refused keys and aggregates
case('09-refused-key', keys=((0, A('keys', '@c')),), aggs=((0, 0),))
case('10-refused-agg-filter', aggs=((0, A('aggs', 'count(*) FILTER (WHERE @b)')),))
case('11-refused-distinct', aggs=((0, A('aggs', 'count(DISTINCT @k4)')),))
case('12-refused-window-function', aggs=((0, A('aggs', 'max(@k4) OVER ()')),))
# GROUP BY variants: ROLLUP, a missing key, an extra item, GROUPING SETS
case('13-rollup', keys=((0, 0), (0, 1)), gb=9)
case('14-missing-key', keys=((0, 0), (0, 1)), gb=6)
case('15-grouping-sets', keys=((0, 0), (0, 1)), gb=11)
# HAVING, LIMIT, a second statement
case('16-having', suffix=A('suffixes', ' HAVING count(*) > 0'))
case('17-limit', suffix=A('suffixes', ' LIMIT 10'))
case('18-second-statement', suffix=A('suffixes', '; SELECT 1'))
# arrival_order: an injection, and ties
case('19-arrival-injection', arrival=A('arrivals', 'id) x JOIN fzt2 ON (true'))
case('20-arrival-ties', arrival=A('arrivals', 'k4'))
# windows: a slide wider than the size, 64 windows, a domain mismatch
case('21-slide-wider', windows=((1, 3, 225, 0),))
case('22-window-set-64', wset=252)
case('23-domain-mismatch', domain=250)
# sizes up to the largest bigint, origins at the ends of the range
case('24-huge-windows', ev=1, windows=((5, 12, 0, 4),))
case('25-extreme-origin', windows=((0, 4, None, 4),))
# a refused bound
case('26-bad-bound', bound=A('interval_durations', 'interval \'-1 min\''))
# garbage: raw bytes, a token, the query cut short
case('27-splice-bytes', splice=(1, 30, 0, 5, 0x27, 0x3b, 0x00, 0xff, 0x28))
case('28-splice-token', splice=(2, 20, 0, 14))
case('29-cut-short', splice=(5, 25, 0))
# an event time with NULL and infinity; timestamptz keys in another zone
case('30-null-event-time', ev=A('ev_cols', 'tsn'), flags=0x20)

# Regressions: inputs that found bugs in windowagg.
out = os.path.join(here, 'regressions', 'fuzz_agg_query')
# dropped() misses a row too late for its one-minute window whose other
# window (tumbling 2^63-1 microseconds from 2000-01-01) ends beyond the
# range of timestamptz: the row is in no pane and not dropped either
case('dropped-misses-row-of-nonexistent-window-timestamptz', flags=7, keys=(),
     aggs=((0, 0),), wset=1, windows=((0, 1, None, 0), (0, 12, None, 1)))
# the same over bigint event times: tumbling 10 and tumbling 2^63-1 from 3
case('dropped-misses-row-of-nonexistent-window-bigint', flags=7, ev=1, keys=(),
     aggs=((0, 0),), wset=1, windows=((0, 4, None, 0), (0, 12, None, 1)))
# arrival_order names a source column that the row query's own output
# column aliases ("windowagg column N") shadow: windowagg orders the rows
# by its first output column (here the event time) instead
case('arrival-order-column-shadowed-by-row-query-alias', keys=(), aggs=((0, 0),),
     arrival=A('arrivals', '"windowagg column 1", id'))
