/** The monitor service's monitor list as the CLI sees it, and finding one monitor's type and sched by name. */
import { CliError, type ApiClient } from './client.js';

export interface MonitorSummary {
  name: string;
  type: string;
  sched: string;
  state?: string;
  tags?: string;
  secretFieldsSet?: string[];
  createdMs?: number;
  updatedMs?: number;
  last?: { status: string; responseTimeMs: number; ts: number; message?: string };
  nextDueMs?: number | null;
  [field: string]: unknown;
}

export interface Filter {
  type?: string;
  tag?: string;
  state?: string;
}

/** `[a,b]` or `a,b` → ['a', 'b']. */
export function tagsOf(v: unknown): string[] {
  if (typeof v !== 'string') return [];
  return v
    .replace(/^\[|\]$/g, '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

export async function listMonitors(client: ApiClient, f: Filter = {}): Promise<MonitorSummary[]> {
  const q = new URLSearchParams();
  if (f.type) q.set('type', f.type);
  if (f.state) q.set('state', f.state);
  const all = await client.call<MonitorSummary[]>('GET', `/monitors${q.size ? `?${q}` : ''}`);
  return all.filter((m) => !f.tag || tagsOf(m.tags).includes(f.tag));
}

export async function findMonitor(client: ApiClient, name: string): Promise<MonitorSummary> {
  const m = (await listMonitors(client)).find((x) => x.name === name);
  if (!m) throw new CliError(`no monitor named "${name}"`);
  return m;
}

export const enc = encodeURIComponent;
