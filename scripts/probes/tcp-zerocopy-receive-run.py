#!/usr/bin/env python3
# Interleaved runner for tcp-zerocopy-receive.c (docs/BENCHMARKS.md, "stream:
# why ttcp --io exchange stays under 1.2× read-write" (2026-11-25, 2909f0a)):
#   gcc -O2 -Wall -o /tmp/zc scripts/probes/tcp-zerocopy-receive.c
#   python3 scripts/probes/tcp-zerocopy-receive-run.py /tmp/zc OUT.jsonl REPS "label|args" ...
# e.g. "send+recv|-s send -r recv -b 128 -n 4096 -m 0"
#      "zc+zcrx|-s zc -r zcrx -b 128 -n 4096 -m 4108 -K 4095"
import subprocess, sys, json, statistics, re, os
binary, out, reps, cfgs = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]
res = {c: [] for c in cfgs}
with open(out, 'a') as f:
    for r in range(reps):
        for c in cfgs:
            label, args = c.split('|', 1)
            p = subprocess.run([binary] + args.split(), capture_output=True, text=True, timeout=300)
            line = [l for l in p.stdout.splitlines() if l.startswith('RESULT')]
            if not line:
                print('FAIL', c, p.stderr.strip()[-300:], flush=True); continue
            d = dict(kv.split('=', 1) for kv in line[0].split()[1:])
            d['label'] = label; d['load'] = open('/proc/loadavg').read().split()[0]; d['rep'] = r; d['stderr'] = p.stderr.strip()[-200:]
            f.write(json.dumps(d) + '\n'); f.flush()
            res[c].append(d)
            print(r, label, d['gbps'], d['mapped_frac'], flush=True)
print()
print('%-28s %7s %8s %8s %8s %8s %7s %7s' % ('config', 'GB/s', 'min', 'max', 'sndCPU', 'rcvCPU', 'mapped', 'copied'))
for c in cfgs:
    L = res[c]
    if not L: continue
    med = lambda k: statistics.median(float(x[k]) for x in L)
    g = [float(x['gbps']) for x in L]
    print('%-28s %7.3f %8.3f %8.3f %8.3f %8.3f %7.3f %7.3f' % (c.split('|')[0], med('gbps'), min(g), max(g),
          med('snd_cpu_per_gib'), med('rcv_cpu_per_gib'), med('mapped_frac'), med('copied_frac')))
