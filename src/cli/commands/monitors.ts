/**
 * `sentinel monitors list|get|run|enable|disable|delete`: the monitor service's monitors. Names are unique across
 * types, so every action takes just the name; the CLI finds the type and sched the API paths need.
 */
import { CliError, EXIT, type ApiClient } from '../client.js';
import { str, type Command, type Context } from '../command.js';
import { enc, findMonitor, listMonitors, type MonitorSummary } from '../monitors-api.js';
import { emit, table } from '../output.js';
import { session } from '../session.js';

const ago = (ms: number | undefined): string => {
  if (!ms) return '';
  const s = Math.round((Date.now() - ms) / 1000);
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
};

export function monitorRows(ms: MonitorSummary[]): Array<Array<string | number | undefined>> {
  return ms.map((m) => [
    m.name,
    m.type,
    m.sched,
    m.state,
    m.last?.status ?? '-',
    m.last ? `${m.last.responseTimeMs}` : '',
    ago(m.last?.ts),
    m.last?.message ?? '',
  ]);
}
export const MONITOR_HEADERS = ['NAME', 'TYPE', 'SCHED', 'STATE', 'STATUS', 'MS', 'LAST RUN', 'MESSAGE'];

type Action = (ctx: Context, client: ApiClient, name: string) => Promise<number>;

const byName: Record<string, Action> = {
  async get(ctx, client, name) {
    const m = await findMonitor(client, name);
    const d = await client.call<Record<string, unknown>>('POST', '/getMonitorDetails', {
      type: m.type,
      name,
      sched: m.sched,
    });
    emit(ctx.out, d, () => JSON.stringify(d, null, 2));
    return EXIT.ok;
  },
  async run(ctx, client, name) {
    const r = await client.call<{ status: string; responseTimeMs: number; message?: string }>(
      'GET',
      `/monitor/run/${enc(name)}/show`,
    );
    emit(ctx.out, r, () => `${name}: ${r.status} in ${r.responseTimeMs} ms${r.message ? ` — ${r.message}` : ''}`);
    return EXIT.ok;
  },
  enable: (ctx, client, name) => setState(ctx, client, name, 'enable'),
  disable: (ctx, client, name) => setState(ctx, client, name, 'disable'),
  async delete(ctx, client, name) {
    const m = await findMonitor(client, name);
    await client.call('DELETE', `/delete/exec/${enc(m.sched)}/${enc(name)}`);
    emit(ctx.out, { name, deleted: true }, () => `deleted ${name} (${m.type}) and its history`);
    return EXIT.ok;
  },
};

async function setState(ctx: Context, client: ApiClient, name: string, verb: 'enable' | 'disable'): Promise<number> {
  const m = await findMonitor(client, name);
  await client.call('POST', `/exec/${verb}/${enc(m.sched)}/${enc(name)}`);
  const state = verb === 'enable' ? 'on' : 'off';
  emit(ctx.out, { name, state }, () => `${name} is ${state}`);
  return EXIT.ok;
}

export const monitors: Command = {
  name: 'monitors',
  summary: 'List, show, run, enable, disable or delete monitors',
  usage:
    'monitors [list [--type T] [--tag X] [--state on|off] | get NAME | run NAME | enable NAME | disable NAME | delete NAME]',
  examples: [
    'sentinel monitors',
    'sentinel monitors list --type url --tag prod',
    'sentinel monitors run web-home',
    'sentinel monitors disable web-home --json',
  ],
  options: { type: { type: 'string' }, tag: { type: 'string' }, state: { type: 'string' } },
  actions: ['list', ...Object.keys(byName)],
  async run(ctx) {
    const [action = 'list', name, ...extra] = ctx.positionals;
    if (extra.length) throw new CliError(`unexpected arguments: ${extra.join(' ')}`, EXIT.usage);
    const client = await session(ctx.env, 'monitor');
    try {
      if (action === 'list') {
        const v = ctx.values;
        const ms = await listMonitors(client, { type: str(v, 'type'), tag: str(v, 'tag'), state: str(v, 'state') });
        emit(ctx.out, ms, () => (ms.length ? table(MONITOR_HEADERS, monitorRows(ms)) : 'no monitors'));
        return EXIT.ok;
      }
      const act = byName[action];
      if (!act) throw new CliError(`unknown action "${action}" (list, ${Object.keys(byName).join(', ')})`, EXIT.usage);
      if (!name) throw new CliError(`monitors ${action} needs a monitor name`, EXIT.usage);
      return await act(ctx, client, name);
    } finally {
      client.close();
    }
  },
};
