#!/usr/bin/env python3
"""check_layers.py ROOT [OBJDIR]: the layering rules of src/LAYERS.

Prints one PASS/FAIL line per rule:
  - no folder holds more than MAX_FILES source files (.c and .h);
  - every #include "DIR/x.h" names a folder the including folder may use,
    and every #include "x.h" without a folder is a file of the same folder
    (or a generated BPF skeleton, where bpf is allowed);
  - no include cycle between files;
  - with OBJDIR (build/obj): every undefined symbol of an object in src/X
    that another folder defines is defined in a folder X may use, and no
    two folders call each other (links, not only includes, point down).
"""
import os, re, subprocess, sys

MAX_FILES = 15
root = sys.argv[1]
objdir = sys.argv[2] if len(sys.argv) > 2 else None
src = os.path.join(root, 'src')
fails = []

allowed = {}
for line in open(os.path.join(src, 'LAYERS')):
    line = line.split('#', 1)[0].strip()
    if not line:
        continue
    name, deps = line.split(':', 1)
    allowed[name.strip()] = set(deps.split())

folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
for d in folders:
    if d not in allowed:
        fails.append(f'src/{d}/ is not listed in src/LAYERS')

def sources(d):
    p = os.path.join(src, d)
    return sorted(f for f in os.listdir(p) if f.endswith(('.c', '.h')))

big = [f'src/{d}/ has {len(sources(d))}' for d in folders if len(sources(d)) > MAX_FILES]
print(('FAIL' if big else 'PASS') + f': layers: every folder holds at most {MAX_FILES} source files'
      + (' (' + ', '.join(big) + ')' if big else ''))

inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
graph = {}
bad = []
for d in folders:
    ok = allowed.get(d, set())
    for f in sources(d):
        path = f'{d}/{f}'
        graph[path] = []
        for h in inc_re.findall(open(os.path.join(src, d, f), errors='replace').read()):
            if '/' in h:
                top = h.split('/', 1)[0]
                if top != d and top not in ok:
                    bad.append(f'src/{path} includes {h} ({d} may not use {top})')
                if top != 'bpf':
                    graph[path].append(h)
            elif h.endswith('.skel.h'):
                if 'bpf' not in ok:
                    bad.append(f'src/{path} includes skeleton {h}')
            elif os.path.exists(os.path.join(src, d, h)):
                graph[path].append(f'{d}/{h}')
            else:
                bad.append(f'src/{path} includes "{h}", not a file of src/{d}/')
print(('FAIL' if bad else 'PASS') + ': layers: includes point only down src/LAYERS'
      + (''.join('\n  ' + b for b in bad) if bad else ''))

# include cycles between files (DFS)
state, cycles = {}, []
def dfs(n, stack):
    state[n] = 1
    stack.append(n)
    for m in graph.get(n, []):
        if state.get(m) == 1:
            cycles.append(' -> '.join(stack[stack.index(m):] + [m]))
        elif m in graph and not state.get(m):
            dfs(m, stack)
    stack.pop()
    state[n] = 2
for n in sorted(graph):
    if not state.get(n):
        dfs(n, [])
print(('FAIL' if cycles else 'PASS') + ': layers: no include cycle between files'
      + (''.join('\n  ' + c for c in cycles) if cycles else ''))

if objdir and not os.path.isdir(os.path.join(objdir, 'src')):
    print(f'FAIL: layers: no objects under {objdir}/src to check the linked symbols of (build first)')
elif objdir:
    defs, undefs, fdefs, fundefs = {}, {}, {}, {}
    for d in folders:
        od = os.path.join(objdir, 'src', d)
        if not os.path.isdir(od):
            continue
        for o in sorted(os.listdir(od)):
            if not o.endswith('.o') or not os.path.exists(os.path.join(src, d, o[:-2] + '.c')):
                continue	# not an object, or one of a source since removed
            out = subprocess.run(['nm', os.path.join(od, o)], capture_output=True, text=True).stdout
            f = f'{d}/{o[:-2]}'
            for l in out.splitlines():
                parts = l.split()
                if len(parts) == 3 and parts[1] in 'TDBRVW' and parts[1] != 'w':
                    defs.setdefault(parts[2], d)
                    fdefs.setdefault(parts[2], f)
                elif len(parts) >= 2 and parts[-2] in ('U', 'w'):
                    undefs.setdefault(d, set()).add((parts[-1], o))
                    fundefs.setdefault(f, set()).add(parts[-1])
    uses, badl = {}, []
    for d, syms in undefs.items():
        for s, o in sorted(syms):
            t = defs.get(s)
            if not t or t == d:
                continue
            uses.setdefault(d, set()).add(t)
            if t not in allowed.get(d, set()):
                badl.append(f'src/{d}/{o[:-2]}.c uses {s} from src/{t}/')
    for a in uses:
        for b in uses[a]:
            if a < b and a in uses.get(b, set()):
                badl.append(f'src/{a}/ and src/{b}/ call each other')
    print(('FAIL' if badl else 'PASS') + ': layers: linked symbols point only down src/LAYERS'
          + (''.join('\n  ' + b for b in badl) if badl else ''))

    # circles between files (Tarjan's strongly connected components)
    fg = {f: sorted({fdefs[u] for u in us if u in fdefs and fdefs[u] != f}) for f, us in fundefs.items()}
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
    def scc(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in fg.get(v, []):
            if w not in index:
                scc(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))
    for v in sorted(fg):
        if v not in index:
            scc(v)
    print(('FAIL' if comps else 'PASS') + ': layers: no files call each other in a circle'
          + ''.join('\n  ' + ' <-> '.join(f'src/{x}.c' for x in c) for c in comps))
