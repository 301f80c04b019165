/**
 * Dependencies between monitors (issue 18 §3). A monitor's `parents` lists what it depends on: monitor names and
 * `tag:<tag>` entries (every monitor with that tag), as `[core-router,tag:switches]`. While an ancestor is failing
 * (its last status DOWN, ERROR or EXCEPTION), the monitor's results keep their real status but its problem alerts
 * are suppressed and its result says which parent; recoveries are never suppressed. A change that would close a cycle
 * is refused (a cycle can only pass through the monitor being changed, so one walk from it decides).
 *
 * The tag index is built lazily on the first use after a change and only monitors with parents ever walk the graph, so
 * monitors without parents cost nothing here.
 */
import { AppError } from '../../core/errors.js';
import { parseTags } from './common-fields.js';

export const FAILING_PARENT_STATUSES: ReadonlySet<string> = new Set(['DOWN', 'ERROR', 'EXCEPTION']);
const ENTRY = /^(tag:[A-Za-z0-9_.:@ -]{1,64}|[A-Za-z0-9_.:@-]{1,128})$/;
/** Walks stop after this many monitors (a graph this deep is a mistake, not a dependency chain). */
const MAX_WALK = 10_000;

export interface ParentRefs {
  names: string[];
  tags: string[];
}

interface Node {
  name: string;
  config: Record<string, string | undefined>;
}

/** `[a,tag:x]` → names and tags; 400 naming `parents` for an entry that is neither. */
export function parseParents(v: string | undefined): ParentRefs {
  const out: ParentRefs = { names: [], tags: [] };
  for (const e of parseTags(v)) {
    if (!ENTRY.test(e)) throw AppError.badRequest(`parents: "${e}" is not a monitor name or tag:<tag>`, 'body.parents');
    if (e.startsWith('tag:')) out.tags.push(e.slice(4));
    else out.names.push(e);
  }
  return out;
}

export class DependencyGraph {
  private tagIndex: Map<string, string[]> | undefined;

  constructor(
    private readonly all: () => Iterable<Node>,
    private readonly get: (name: string) => Node | undefined,
  ) {}

  /** A monitor changed: the tag index is rebuilt on next use. */
  invalidate(): void {
    this.tagIndex = undefined;
  }

  private members(tag: string): string[] {
    if (!this.tagIndex) {
      const idx = new Map<string, string[]>();
      for (const n of this.all())
        for (const t of parseTags(n.config.tags)) {
          const members = idx.get(t);
          if (members) members.push(n.name);
          else idx.set(t, [n.name]);
        }
      this.tagIndex = idx;
    }
    return this.tagIndex.get(tag) ?? [];
  }

  /** Direct parents of `node` (tags expanded, itself excluded); `changed` stands in for its stored version. */
  private parentsOf(node: Node, changed?: Node): string[] {
    const refs = parseParents(node.config.parents);
    const out = new Set(refs.names);
    for (const t of refs.tags) {
      for (const m of this.members(t)) if (m !== changed?.name) out.add(m);
      if (changed && parseTags(changed.config.tags).includes(t)) out.add(changed.name);
    }
    out.delete(node.name);
    return [...out];
  }

  /** 400 naming `parents` when `changed` (the proposed config) would close a cycle; the message shows it. */
  assertNoCycle(changed: Node): void {
    if (parseTags(changed.config.parents).length === 0) return; // no way out of it: no cycle through it
    if (parseParents(changed.config.parents).names.includes(changed.name))
      throw AppError.badRequest('parents: a monitor cannot be its own parent', 'body.parents');
    const path = new Map<string, string | undefined>([[changed.name, undefined]]);
    const stack = [changed.name];
    while (stack.length && path.size < MAX_WALK) {
      const n = stack.pop()!;
      const node = n === changed.name ? changed : this.get(n);
      if (!node) continue;
      for (const p of this.parentsOf(node, changed)) {
        if (p === changed.name) {
          const cycle = [p, n];
          for (let at = path.get(n); at !== undefined; at = path.get(at)) cycle.push(at);
          throw AppError.badRequest(
            `parents: this would make a cycle (${cycle.reverse().join(' → ')})`,
            'body.parents',
          );
        }
        if (!path.has(p)) {
          path.set(p, n);
          stack.push(p);
        }
      }
    }
  }

  /** Parent names in `config` that name no monitor (create/update warn about them). */
  unknownParents(config: Record<string, string | undefined>): string[] {
    return parseParents(config.parents).names.filter((n) => !this.get(n));
  }

  /** The nearest failing ancestor of `node` (breadth first), by the status `statusOf` reports. */
  failingAncestor(
    node: Node,
    statusOf: (name: string) => string | undefined,
  ): { name: string; status: string } | undefined {
    const seen = new Set([node.name]);
    let level = [node];
    while (level.length && seen.size < MAX_WALK) {
      const next: Node[] = [];
      for (const n of level) {
        for (const p of this.parentsOf(n)) {
          if (seen.has(p)) continue;
          seen.add(p);
          const status = statusOf(p);
          if (status !== undefined && FAILING_PARENT_STATUSES.has(status)) return { name: p, status };
          const pn = this.get(p);
          if (pn) next.push(pn);
        }
      }
      level = next;
    }
    return undefined;
  }
}
