#!/usr/bin/env python3
"""OneModel's time per node next to ONNX Runtime's, one thread count, one model: where a whole-model gap is.

  /usr/bin/python3 bench/compare_nodes.py MODEL [--threads N] [--input NAME=FILE.npy]... [--top N]
      [--cli build/native/onemodel]

Ours: `onemodel bench --profile` (self time per node). ORT's: bench/ort_profile.mjs (its profile's kernel
times). ORT names the nodes of its optimized graph after an output, and a fused node (Conv + Relu, Conv + Add)
after the last operator it absorbed; each such name is mapped back through the ONNX graph's producers to the
first Conv, Gemm or MatMul of that chain (at most 6 steps), which is the node OneModel's fusion keeps too.
Rows are sorted by ours minus ORT's. Both sides are single runs: repeat before trusting a small difference.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHORS = ('Conv', 'Gemm', 'MatMul')


def ours(cli, model, threads, inputs):
    args = [cli, 'bench', model, '--threads', str(threads), '--profile', '--profile-top', '0', '--seconds', '1']
    for i in inputs:
        args += ['--input', i]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    total = float(re.search(r'min_ms=([0-9.]+)', out).group(1))
    nodes = {}
    in_nodes = False
    for line in out.splitlines():
        if line.startswith('by node'):
            in_nodes = True
            continue
        m = re.match(r'^\s+(\S+)\s+(\S+)\s+([0-9.]+)\s+[0-9.]+%$', line)
        if in_nodes and m:
            nodes[m.group(1)] = (m.group(2), float(m.group(3)))
    return total, nodes


def ort(model, threads, inputs):
    out = subprocess.run(['node', os.path.join(HERE, 'ort_profile.mjs'), model, str(threads)] + inputs,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--input', action='append', default=[])
    ap.add_argument('--top', type=int, default=40)
    ap.add_argument('--cli', default=os.path.join(HERE, '..', 'build', 'native', 'onemodel'))
    a = ap.parse_args()
    graph = onnx.load(a.model, load_external_data=False).graph
    producer = {o: n for n in graph.node for o in n.output}

    def our_name(ort_name):
        tensor = ort_name[:-len('_nchwc')] if ort_name.endswith('_nchwc') else ort_name
        node = producer.get(tensor)
        if node is None:
            return ort_name  # a node ORT named itself (ReorderInput, ...) or by node name
        for _ in range(6):
            if node.op_type in ANCHORS or not node.input or node.input[0] not in producer:
                break
            node = producer[node.input[0]]
        return node.name if node.op_type in ANCHORS else producer[tensor].name

    total, mine = ours(a.cli, a.model, a.threads, a.input)
    theirs = ort(a.model, a.threads, a.input)
    ort_ms, ort_op = {}, {}
    for n in theirs['nodes']:
        k = our_name(n['name'])
        ort_ms[k] = ort_ms.get(k, 0.0) + n['ms']
        ort_op.setdefault(k, n['op'])
    names = sorted(set(mine) | set(ort_ms), key=lambda k: -(mine.get(k, ('', 0.0))[1] - ort_ms.get(k, 0.0)))
    print(f'OneModel {total:.3f} ms per call (min), ORT {theirs["run_ms"]:.3f} ms (mean, profiling on); '
          f'threads {a.threads}')
    print(f'{"node":64} {"op (ours)":>18} {"ours ms":>9} {"ORT ms":>9} {"diff":>9}')
    for k in names[:a.top] if a.top > 0 else names:
        op, ms = mine.get(k, (ort_op.get(k, '?') + '*', 0.0))
        o = ort_ms.get(k, 0.0)
        print(f'{k[-64:]:64} {op:>18} {ms:9.4f} {o:9.4f} {ms - o:9.4f}')
    print(f'{"sum of nodes":64} {"":>18} {sum(v[1] for v in mine.values()):9.4f} {sum(ort_ms.values()):9.4f}')
    print('(* a node only ORT runs: its reorders, or an operator OneModel folded away)')


if __name__ == '__main__':
    sys.exit(main())
