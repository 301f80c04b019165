/**
 * GET /api/metrics on the real monitor service: no token needed, the Prometheus text format 0.0.4 parsed by a strict
 * parser written here, process and HTTP figures present, and the HTTP counter counting requests.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';

let h: MonitorHarness;

before(async () => {
  h = await startMonitor();
});
after(async () => h?.stop());

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Like Prometheus's own parser (Go strconv.ParseFloat): NaN and Inf in any case (prom-client writes NaN as "Nan"). */
function parseValue(s: string, where: string): number {
  if (/^\+?inf$/i.test(s)) return Infinity;
  if (/^-inf$/i.test(s)) return -Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) throw new Error(`${where}: bad value ${s}`);
  return Number(s);
}

/** Reads `{a="x",b="y\"z"}` starting at `i`; returns the labels and the index after `}`. */
function parseLabels(line: string, i: number, where: string): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i++; // '{'
  while (line[i] !== '}') {
    const eq = line.indexOf('=', i);
    if (eq < 0) throw new Error(`${where}: label without =`);
    const name = line.slice(i, eq).trim();
    if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`${where}: bad label name ${name}`);
    if (name in labels) throw new Error(`${where}: duplicate label ${name}`);
    if (line[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`);
    let j = eq + 2;
    let v = '';
    for (; ; j++) {
      const c = line[j];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const n = line[++j];
        if (n === '\\') v += '\\';
        else if (n === '"') v += '"';
        else if (n === 'n') v += '\n';
        else throw new Error(`${where}: bad escape \\${n}`);
      } else v += c;
    }
    labels[name] = v;
    i = j + 1;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`${where}: expected , or } after label ${name}`);
  }
  return [labels, i + 1];
}

/** A strict parser of the Prometheus text exposition format 0.0.4. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (n: string) => families.get(n) ?? families.set(n, { name: n, samples: [] }).get(n)!;
  const seenSamples = new Set<string>();
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  text
    .split('\n')
    .slice(0, -1)
    .forEach((line, idx) => {
      const where = `line ${idx + 1}`;
      if (line.trim() === '') return;
      if (line.startsWith('#')) {
        const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
        if (!m) return; // a plain comment
        const [, kind, name, rest] = m as unknown as [string, string, string, string];
        if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name ${name}`);
        const f = family(name);
        if (kind === 'HELP') {
          if (f.help !== undefined) throw new Error(`${where}: second HELP for ${name}`);
          if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`${where}: bad escape in HELP`);
          f.help = rest;
        } else {
          if (f.type !== undefined) throw new Error(`${where}: second TYPE for ${name}`);
          if (f.samples.length) throw new Error(`${where}: TYPE after samples of ${name}`);
          if (!TYPES.has(rest)) throw new Error(`${where}: bad type ${rest}`);
          f.type = rest;
        }
        return;
      }
      const nm = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
      if (!nm) throw new Error(`${where}: bad sample ${line}`);
      const name = nm[0];
      let i = name.length;
      let labels: Record<string, string> = {};
      if (line[i] === '{') [labels, i] = parseLabels(line, i, where);
      if (line[i] !== ' ') throw new Error(`${where}: expected a space before the value`);
      const parts = line
        .slice(i + 1)
        .trim()
        .split(/ +/);
      if (parts.length > 2) throw new Error(`${where}: trailing garbage`);
      const value = parseValue(parts[0]!, where);
      if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`${where}: bad timestamp`);
      const base = [...families.keys()].reverse().find((f) => {
        const t = families.get(f)!.type;
        return (
          name === f ||
          ((t === 'histogram' || t === 'summary') && [`${f}_bucket`, `${f}_sum`, `${f}_count`].includes(name))
        );
      });
      if (!base) throw new Error(`${where}: sample ${name} without HELP/TYPE`);
      const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
      if (seenSamples.has(key)) throw new Error(`${where}: duplicate sample ${key}`);
      seenSamples.add(key);
      families.get(base)!.samples.push({ name, labels, value });
    });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples.filter((x) => x.name.endsWith('_bucket'))) {
    if (s.labels.le === undefined) throw new Error(`${f.name}: bucket without le`);
    const { le: _le, ...rest } = s.labels;
    const k = JSON.stringify(Object.entries(rest).sort());
    series.set(k, [...(series.get(k) ?? []), s]);
  }
  for (const [k, buckets] of series) {
    let prev = -1;
    for (const b of buckets) {
      if (b.value < prev) throw new Error(`${f.name}${k}: buckets not cumulative`);
      prev = b.value;
    }
    const inf = buckets.find((b) => b.labels.le === '+Inf');
    const count = f.samples.find(
      (s) => s.name === `${f.name}_count` && JSON.stringify(Object.entries(s.labels).sort()) === k,
    );
    if (!inf || !count || inf.value !== count.value) throw new Error(`${f.name}${k}: +Inf bucket must equal _count`);
  }
}

test('the strict parser itself rejects malformed expositions', () => {
  const ok = '# HELP a_total x\n# TYPE a_total counter\na_total{l="q\\"\\\\\\n"} 1\n';
  assert.ok(Number.isNaN(parsePrometheusText('# TYPE g gauge\ng Nan\n').get('g')!.samples[0]!.value));
  assert.equal(parsePrometheusText(ok).get('a_total')!.samples[0]!.labels.l, 'q"\\\n');
  for (const bad of [
    'a_total 1',
    '# TYPE a counter\na 1\n# TYPE a counter\n',
    '# TYPE a counter\na{l="x} 1\n',
    '# TYPE a counter\na{l="\\x"} 1\n',
    '# TYPE a counter\na one\n',
    '# TYPE 1a counter\n',
    '# TYPE a weird\n',
    'b 1\n',
    '# TYPE a gauge\na{l="1",l="2"} 1\n',
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
    '# TYPE a gauge\na 1\na 2\n',
  ])
    assert.throws(() => parsePrometheusText(bad), `should reject ${JSON.stringify(bad)}`);
});

test('GET /api/metrics needs no token, parses strictly, and has process and HTTP figures', async () => {
  for (let i = 0; i < 3; i++) assert.equal((await h.admin.request('GET', '/ping', { token: null })).status, 200);
  const r = await h.admin.request('GET', '/api/metrics', { token: null });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const fams = parsePrometheusText(r.text);
  for (const n of [
    'sentinel_monitor_process_cpu_user_seconds_total',
    'sentinel_monitor_process_resident_memory_bytes',
    'sentinel_monitor_process_start_time_seconds',
    'sentinel_monitor_nodejs_heap_size_used_bytes',
    'sentinel_monitor_nodejs_eventloop_lag_seconds',
  ]) {
    assert.ok(fams.get(n)?.samples.length, `${n} present`);
  }
  const req = fams.get('sentinel_monitor_http_requests_total');
  assert.equal(req?.type, 'counter');
  const pings = req.samples.find(
    (s) => s.labels.route === '/ping' && s.labels.method === 'GET' && s.labels.status === '200',
  );
  assert.ok(pings && pings.value >= 3, `ping counter ${pings?.value}`);
  const dur = fams.get('sentinel_monitor_http_request_duration_seconds');
  assert.equal(dur?.type, 'histogram');
  assert.ok(dur.samples.some((s) => s.name.endsWith('_count') && s.labels.route === '/ping'));

  for (let i = 0; i < 2; i++) await h.admin.request('GET', '/ping', { token: null });
  const again = parsePrometheusText((await h.admin.request('GET', '/api/metrics', { token: null })).text);
  const pings2 = again
    .get('sentinel_monitor_http_requests_total')!
    .samples.find((s) => s.labels.route === '/ping' && s.labels.status === '200')!;
  assert.ok(pings2.value >= pings.value + 2, 'the counter counts');
});

test('GET /api/metrics has host gauges: CPU, memory, swap, load, uptime and disk usage per mount', async () => {
  const fams = parsePrometheusText((await h.admin.request('GET', '/api/metrics', { token: null })).text);
  const one = (n: string): number => {
    const f = fams.get(n);
    assert.equal(f?.type, 'gauge', `${n} is a gauge`);
    assert.equal(f.samples.length, 1, `${n} has one sample`);
    return f.samples[0]!.value;
  };
  for (const n of ['cpu_used_percent', 'memory_used_percent', 'swap_used_percent']) {
    const v = one(`sentinel_host_${n}`);
    assert.ok(v >= 0 && v <= 100, `${n} ${v}`);
  }
  assert.ok(one('sentinel_host_cpu_cores') >= 1);
  const total = one('sentinel_host_memory_total_bytes');
  assert.ok(total > 0 && one('sentinel_host_memory_used_bytes') <= total);
  assert.ok(one('sentinel_host_memory_available_bytes') <= total);
  assert.ok(one('sentinel_host_swap_used_bytes') <= one('sentinel_host_swap_total_bytes'));
  for (const n of ['load1', 'load5', 'load15']) assert.ok(one(`sentinel_host_${n}`) >= 0);
  assert.ok(one('sentinel_host_uptime_seconds') > 0);
  const used = fams.get('sentinel_host_disk_used_percent')!;
  assert.equal(used.type, 'gauge');
  assert.ok(used.samples.length >= 1, 'at least one mounted filesystem');
  for (const s of used.samples) {
    assert.ok(s.labels.mount?.startsWith('/') && s.labels.fstype, JSON.stringify(s.labels));
    assert.ok(s.value >= 0 && s.value <= 100);
    const size = fams.get('sentinel_host_disk_total_bytes')!.samples.find((x) => x.labels.mount === s.labels.mount);
    assert.ok(size && size.value > 0, `size of ${s.labels.mount}`);
  }
});
