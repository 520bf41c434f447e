#!/usr/bin/env python3
"""Reads an strace log of fork, clone and execve (count-children) and prints
the processes one test phase started: the test process's own children, all
processes below it, and odr's runs.

    count-children.py LOG PHASE
"""
import collections, re, sys
log, phase = sys.argv[1], sys.argv[2]
tgid, parent, pending, program = {}, {}, {}, {}
execs = collections.Counter()
def spawned(tid, call, text, child):
    thread = "CLONE_THREAD" in text
    tgid[child] = tgid.get(tid, tid) if thread else child
    if not thread:
        parent[child] = tgid.get(tid, tid)
for line in open(log):
    m = re.match(r"(\d+)\s+(.*)", line)
    if not m:
        continue
    tid, rest = int(m.group(1)), m.group(2).rstrip()
    tgid.setdefault(tid, tid)
    resumed = re.match(r"<\.\.\. (\w+) resumed>(.*)", rest)
    if resumed:
        call, text = resumed.group(1), pending.pop((tid, resumed.group(1)), "") + resumed.group(2)
    else:
        call = rest.split("(", 1)[0]
        text = rest
        if rest.endswith("<unfinished ...>"):
            pending[(tid, call)] = rest
            continue
    result = re.search(r"= (-?\d+)(?: \w+.*)?$", text)
    if not result or int(result.group(1)) < 0:
        continue
    if call in ("clone", "clone3", "fork", "vfork"):
        spawned(tid, call, text, int(result.group(1)))
    elif call == "execve":
        # A thread other than the leader that execs takes the leader's id:
        # its "resumed" line may name no program.
        named = re.search(r'execve\("([^"]+)"', text)
        name = named.group(1) if named else "?"
        program[tgid[tid]] = name
        execs[name] += 1
tests = [p for p, name in program.items() if name.endswith(".xctest")]
def below(root):
    return [p for p in parent if p != root and any_ancestor(p, root)]
def any_ancestor(p, root):
    while p in parent:
        p = parent[p]
        if p == root:
            return True
    return False
children = [p for p in parent if parent[p] in tests]
descendants = set(p for t in tests for p in below(t))
odr = sum(count for name, count in execs.items() if name.endswith("/bin/odr") or name.endswith("/odr-http"))
print(f"phase {phase}: the test process started {len(children)} processes; {len(descendants)} ran below it; odr and odr-http ran {odr} times")
for name, count in collections.Counter(program.get(p, "(forked, no exec)") for p in children).most_common(12):
    print(f"  {count:5d}  {name}")
