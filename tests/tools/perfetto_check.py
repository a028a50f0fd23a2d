#!/usr/bin/env python3
"""perfetto_check.py - semantic checks protoc --decode cannot make.

Usage:
  protoc --decode=perfetto.protos.Trace ... < t.pftrace | perfetto_check.py [--strict-order] [-]
  perfetto_check.py --json trace.json

Protobuf (text format from protoc --decode), the rules of
shared/perfetto/RULES.md:
  * every clock a packet uses is in a ClockSnapshot with the trace clock
    (sequence-scoped clocks: in a snapshot on the same sequence);
  * the first packet of a sequence that uses incremental state clears it
    (SEQ_INCREMENTAL_STATE_CLEARED) - nothing may need state before a CLEARED;
  * packets that define or use interned data or rely on TracePacketDefaults
    carry SEQ_NEEDS_INCREMENTAL_STATE;
  * interned ids are defined (same packet or earlier, since the last CLEARED)
    before use, callstacks included: TrackEvent.callstack_iid -> callstacks,
    Callstack.frame_ids -> frames, Frame.function_name_id -> function_names,
    Frame.mapping_id -> mappings (with rel_pc), Mapping.path_string_ids ->
    mapping_paths, Mapping.build_id -> build_ids;
  * every parent_uuid and every track_uuid used is described; a track
    described again under another name has sibling_merge_behavior NONE
    (else trace_processor keeps the first name);
  * counter events only on counter tracks, slices/instants never on them;
  * per track, SLICE_END closes an open SLICE_BEGIN, ends never precede
    their begin, and nothing is left open (slices nest);
  * every flow has both ends;
  * --strict-order: timestamps never go backwards within a sequence.
Chrome JSON: parses, phases known, X events nest per (pid, tid), B/E
balance, s/f flows paired, counters numeric.
Exit 0 and "OK ..." when clean, else 1 and one line per problem.
"""
import json
import re
import sys
from collections import defaultdict

DEFAULT_CLOCK = 6  # BUILTIN_CLOCK_BOOTTIME
CLEARED, NEEDS = 1, 2
TYPES = {"TYPE_SLICE_BEGIN": 1, "TYPE_SLICE_END": 2, "TYPE_INSTANT": 3, "TYPE_COUNTER": 4}
STACK_TABLES = ('callstacks', 'frames', 'function_names', 'mappings', 'mapping_paths', 'build_ids')
BUILTIN = {"BUILTIN_CLOCK_REALTIME": 1, "BUILTIN_CLOCK_MONOTONIC": 3, "BUILTIN_CLOCK_BOOTTIME": 6}


class Msg(dict):
    """field name -> list of values (str/int) or Msg"""

    def one(self, k, d=None):
        v = self.get(k)
        return v[0] if v else d

    def all(self, k):
        return self.get(k, [])


TOKEN = re.compile(r'\s*(?:(?P<close>\})|(?P<key>[A-Za-z_][A-Za-z0-9_]*|\d+)\s*(?P<open>\{)|'
                   r'(?P<k2>[A-Za-z_][A-Za-z0-9_]*|\d+)\s*:\s*(?P<val>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[^\s}]+))')


def parse_text(text):
    """protobuf text format (as protoc --decode prints it) -> Msg tree"""
    root = Msg()
    stack = [root]
    pos = 0
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                raise ValueError("cannot parse near: %r" % text[pos:pos + 60])
            break
        pos = m.end()
        if m.group('close'):
            stack.pop()
            if not stack:
                raise ValueError("unbalanced }")
        elif m.group('open'):
            sub = Msg()
            stack[-1].setdefault(m.group('key'), []).append(sub)
            stack.append(sub)
        else:
            v = m.group('val')
            if v[0] in '"\'':
                v = v[1:-1]
            elif re.fullmatch(r'-?\d+', v):
                v = int(v)
            elif v in ('true', 'false'):
                v = v == 'true'
            stack[-1].setdefault(m.group('k2'), []).append(v)
    if len(stack) != 1:
        raise ValueError("unterminated message")
    return root


def strip_comments(text):
    out = []
    for line in text.splitlines():
        s, q, i = [], None, 0
        while i < len(line):
            c = line[i]
            if q:
                s.append(c)
                if c == '\\' and i + 1 < len(line):
                    s.append(line[i + 1])
                    i += 1
                elif c == q:
                    q = None
            elif c in '"\'':
                q = c
                s.append(c)
            elif c == '#':
                break
            else:
                s.append(c)
            i += 1
        out.append(''.join(s))
    return '\n'.join(out)


class Checker:
    def __init__(self, strict_order=False):
        self.errors = []
        self.strict = strict_order

    def err(self, i, msg):
        if len(self.errors) < 50:
            self.errors.append("packet %d: %s" % (i, msg))

    def check(self, trace):
        packets = trace.all('packet')
        seqs = defaultdict(lambda: {'cleared': False, 'defaults': None, 'interned': defaultdict(set),
                                    'last_ts': None, 'clocks': {}, 'incr': {}})
        snap_clocks = set()          # builtin clocks seen in snapshots (with the trace clock)
        seq_clocks = defaultdict(set)  # sequence-scoped clocks by sequence
        primary = DEFAULT_CLOCK
        for p in packets:
            cs = p.one('clock_snapshot')
            if cs:
                ptc = cs.one('primary_trace_clock')
                if ptc is not None:
                    primary = BUILTIN.get(ptc, ptc) if isinstance(ptc, str) else ptc
        descs = {}
        used_tracks = []
        track_events = defaultdict(list)
        flows_out, flows_in = defaultdict(list), defaultdict(list)
        for i, p in enumerate(packets):
            seq_id = p.one('trusted_packet_sequence_id', 0)
            st = seqs[seq_id]
            flags = p.one('sequence_flags', 0)
            if flags & CLEARED:
                st['cleared'] = True
                st['interned'] = defaultdict(set)
                st['defaults'] = None
            uses_state = False
            if p.one('trace_packet_defaults'):
                st['defaults'] = p.one('trace_packet_defaults')
                uses_state = True
            # clocks
            cs = p.one('clock_snapshot')
            if cs:
                ids = [c.one('clock_id') for c in cs.all('clocks')]
                for c in cs.all('clocks'):
                    cid = c.one('clock_id')
                    if 64 <= cid <= 127:
                        seq_clocks[seq_id].add(cid)
                        st['incr'][cid] = [bool(c.one('is_incremental', False)), c.one('timestamp', 0),
                                           c.one('unit_multiplier_ns', 1)]
                    elif primary in ids or len(ids) > 1:
                        snap_clocks.update(x for x in ids if x < 64)
                if primary in ids:
                    snap_clocks.add(primary)
            clock = p.one('timestamp_clock_id')
            if clock is None and st['defaults'] is not None:
                clock = st['defaults'].one('timestamp_clock_id')
                if clock is not None:
                    uses_state = True
            if clock is None:
                clock = primary
            ts = p.one('timestamp')
            if ts is not None and not cs:
                if 64 <= clock <= 127:
                    if clock not in seq_clocks[seq_id]:
                        self.err(i, "sequence clock %d has no ClockSnapshot on sequence %d" % (clock, seq_id))
                    else:
                        inc = st['incr'][clock]
                        if inc[0]:
                            inc[1] += ts
                            ts = inc[1]
                        ts = ts * (inc[2] or 1)
                elif clock != primary and clock not in snap_clocks:
                    self.err(i, "timestamp clock %d not covered by a ClockSnapshot with trace clock %d"
                             % (clock, primary))
                if self.strict and st['last_ts'] is not None and ts < st['last_ts']:
                    self.err(i, "timestamp went backwards on sequence %d (%d < %d)" % (seq_id, ts, st['last_ts']))
                st['last_ts'] = ts
            # interning: definitions in this packet count for this packet
            idata = p.one('interned_data')
            if idata:
                uses_state = True
                for table in ('event_names', 'event_categories', 'debug_annotation_names',
                              'debug_annotation_string_values') + STACK_TABLES:
                    for e in idata.all(table):
                        iid = e.one('iid', 0)
                        if not iid:
                            self.err(i, "interned %s entry without iid" % table)
                        st['interned'][table].add(iid)
                self.check_stack_refs(i, idata, st)
            te = p.one('track_event')
            if te:
                uses_state |= self.check_interned(i, te, st)
                tuuid = te.one('track_uuid')
                if tuuid is None and st['defaults'] is not None:
                    ted = st['defaults'].one('track_event_defaults')
                    if ted and ted.one('track_uuid') is not None:
                        tuuid = ted.one('track_uuid')
                        uses_state = True
                t = te.one('type', 0)
                t = TYPES.get(t, t) if isinstance(t, str) else t
                if tuuid is not None:
                    used_tracks.append((i, tuuid))
                    track_events[tuuid].append((ts if ts is not None else 0, i, t))
                for fid in te.all('flow_ids'):
                    flows_out[fid].append((ts or 0, i))
                for fid in te.all('terminating_flow_ids'):
                    flows_in[fid].append((ts or 0, i))
            td = p.one('track_descriptor')
            if td:
                u = td.one('uuid', 0)
                if not u:
                    self.err(i, "track descriptor without uuid")
                old = descs.get(u)
                if old is not None and old.one('name') != td.one('name') and \
                        td.one('sibling_merge_behavior') not in ('SIBLING_MERGE_BEHAVIOR_NONE', 2):
                    # trace_processor keeps the first name unless merging is off
                    self.err(i, "track %d renamed without sibling_merge_behavior NONE (the new name is ignored)" % u)
                descs.setdefault(u, td)
            if uses_state:
                if not st['cleared']:
                    self.err(i, "uses incremental state before any SEQ_INCREMENTAL_STATE_CLEARED on sequence %d"
                             % seq_id)
                if not flags & NEEDS:
                    self.err(i, "uses interned data or defaults without SEQ_NEEDS_INCREMENTAL_STATE")
        self.check_tracks(descs, used_tracks, track_events)
        self.check_flows(flows_out, flows_in)
        return {'packets': len(packets), 'tracks': len(descs), 'flows': len(flows_out)}

    def check_stack_refs(self, i, idata, st):
        """callstacks -> frames -> function names, mappings -> paths, build ids"""
        need = []
        for cs in idata.all('callstacks'):
            need.append(('frames', cs.all('frame_ids')))
        for fr in idata.all('frames'):
            need.append(('function_names', [x for x in fr.all('function_name_id') if x]))
            maps = [x for x in fr.all('mapping_id') if x]
            need.append(('mappings', maps))
            if maps and fr.one('rel_pc') is None:
                self.err(i, "frame %d has a mapping_id but no rel_pc" % fr.one('iid', 0))
        for m in idata.all('mappings'):
            need.append(('mapping_paths', m.all('path_string_ids')))
            need.append(('build_ids', [x for x in m.all('build_id') if x]))
        for table, iids in need:
            for iid in iids:
                if iid not in st['interned'][table]:
                    self.err(i, "%s iid %d used before it is defined" % (table, iid))

    def check_interned(self, i, te, st):
        used = False
        need = [('event_names', te.all('name_iid')), ('event_categories', te.all('category_iids')),
                ('callstacks', [x for x in te.all('callstack_iid') if x])]
        for da in te.all('debug_annotations'):
            need.append(('debug_annotation_names', da.all('name_iid')))
            need.append(('debug_annotation_string_values', da.all('string_value_iid')))
        for table, iids in need:
            for iid in iids:
                used = True
                if iid not in st['interned'][table]:
                    self.err(i, "%s iid %d used before it is defined" % (table, iid))
        return used

    def check_tracks(self, descs, used_tracks, track_events):
        for u, td in descs.items():
            par = td.one('parent_uuid')
            if par is not None and par not in descs:
                self.err(0, "track %d has unknown parent_uuid %d" % (u, par))
        for i, u in used_tracks:
            if u not in descs:
                self.err(i, "track_uuid %d is not described" % u)
        for u, evs in track_events.items():
            is_counter = u in descs and descs[u].one('counter') is not None
            stack = []
            for ts, i, t in sorted(evs, key=lambda x: (x[0], x[1])):
                if (t == 4) != is_counter and u in descs:
                    self.err(i, "%s event on %s track %d" % ("counter" if t == 4 else "slice/instant",
                                                             "counter" if is_counter else "slice", u))
                if t == 1:
                    stack.append((ts, i))
                elif t == 2:
                    if not stack:
                        self.err(i, "SLICE_END without open slice on track %d" % u)
                        continue
                    b, _ = stack.pop()
                    if ts < b:
                        self.err(i, "slice ends before it begins on track %d" % u)
            for ts, i in stack:
                self.err(i, "slice on track %d never ends" % u)

    def check_flows(self, out, inn):
        for fid, ends in inn.items():
            starts = out.get(fid, [])
            if not starts:
                self.err(ends[0][1], "flow %d terminates but never starts" % fid)
            elif min(starts)[0] > min(ends)[0]:
                self.err(ends[0][1], "flow %d terminates before it starts" % fid)
        for fid, starts in out.items():
            if fid not in inn and len(starts) < 2:
                self.err(starts[0][1], "flow %d has only one end" % fid)


def check_json(path):
    errors = []
    with open(path, 'rb') as f:
        doc = json.loads(f.read().decode('utf-8'))
    evs = doc['traceEvents'] if isinstance(doc, dict) else doc
    per_thread = defaultdict(list)
    flows = defaultdict(lambda: [0, 0])
    for n, e in enumerate(evs):
        ph = e.get('ph')
        if ph not in ('X', 'B', 'E', 'i', 'I', 'C', 's', 't', 'f', 'M', 'b', 'e', 'n'):
            errors.append("event %d: unknown phase %r" % (n, ph))
            continue
        if ph != 'M' and not isinstance(e.get('ts'), (int, float)):
            errors.append("event %d: no numeric ts" % n)
            continue
        if not isinstance(e.get('pid'), int) or not isinstance(e.get('tid', 0), int):
            errors.append("event %d: pid/tid not integers" % n)
        key = (e.get('pid'), e.get('tid'))
        if ph == 'X':
            if not isinstance(e.get('dur'), (int, float)) or e['dur'] < 0:
                errors.append("event %d: X without dur" % n)
                continue
            per_thread[key].append((round(e['ts'] * 1000), -round(e['dur'] * 1000), n))
        elif ph in ('s', 'f'):
            flows[(e.get('id'), e.get('cat'), e.get('name'))][ph == 'f'] += 1
        elif ph == 'C':
            for k, v in (e.get('args') or {}).items():
                if not isinstance(v, (int, float)):
                    errors.append("event %d: counter %s not numeric" % (n, k))
    for key, xs in per_thread.items():
        stack = []
        for ts, ndur, n in sorted(xs):
            end = ts - ndur
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1]:
                errors.append("event %d: X overlaps its parent on pid/tid %s" % (n, key))
            stack.append(end)
    for fid, (s, f) in flows.items():
        if not s or not f:
            errors.append("flow %s has only one end" % (fid,))
    return errors, {'events': len(evs), 'flows': len(flows)}


def main(argv):
    strict = '--strict-order' in argv
    args = [a for a in argv[1:] if not a.startswith('--')]
    if '--json' in argv:
        errors, st = check_json(args[0])
    else:
        src = open(args[0]) if args and args[0] != '-' else sys.stdin
        text = strip_comments(src.read())
        c = Checker(strict)
        try:
            st = c.check(parse_text(text))
        except ValueError as e:
            print("FAIL: %s" % e)
            return 1
        errors = c.errors
    for e in errors:
        print("FAIL: %s" % e)
    if errors:
        return 1
    print("OK %s" % ' '.join('%s=%s' % kv for kv in sorted(st.items())))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
