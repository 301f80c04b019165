/**
 * A heap snapshot of the test's own process, parsed, for tests that assert what the heap holds (strings kept by a
 * cache, secrets left decrypted): `takeHeapSnapshot()` writes one to a temporary file (V8 runs a full GC first),
 * reads it and removes it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapSnapshot {
  /** The text of every string object (flat, or the flat parts V8 reports) matching `re`, once per object. */
  stringsMatching(re: RegExp): string[];
  /** How many object properties named `name` point to a sliced string (a view on a larger parent string). */
  slicedProperties(name: string): number;
}

export async function takeHeapSnapshot(): Promise<HeapSnapshot> {
  const dir = await mkdtemp(join(tmpdir(), 'heap-snapshot-'));
  let snap: RawSnapshot;
  try {
    snap = JSON.parse(await readFile(writeHeapSnapshot(join(dir, 'heap.heapsnapshot')), 'utf8')) as RawSnapshot;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const { node_fields: nf, node_types: nt, edge_fields: ef, edge_types: et } = snap.snapshot.meta;
  const [iType, iName, iEdges] = [nf.indexOf('type'), nf.indexOf('name'), nf.indexOf('edge_count')];
  const [eType, eName, eTo] = [ef.indexOf('type'), ef.indexOf('name_or_index'), ef.indexOf('to_node')];
  const typeAt = (node: number) => nt[0][snap.nodes[node + iType]!];
  return {
    stringsMatching(re) {
      const out: string[] = [];
      for (let node = 0; node < snap.nodes.length; node += nf.length) {
        const text = snap.strings[snap.nodes[node + iName]!]!;
        if (/string/.test(typeAt(node)!) && re.test(text)) out.push(text);
      }
      return out;
    },
    slicedProperties(name) {
      let n = 0;
      let edge = 0;
      for (let node = 0; node < snap.nodes.length; node += nf.length) {
        for (const end = edge + snap.nodes[node + iEdges]! * ef.length; edge < end; edge += ef.length) {
          if (et[0][snap.edges[edge + eType]!] !== 'property' || snap.strings[snap.edges[edge + eName]!] !== name)
            continue;
          if (typeAt(snap.edges[edge + eTo]!) === 'sliced string') n++;
        }
      }
      return n;
    },
  };
}
