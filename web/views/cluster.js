// The cluster page (GET /cluster, readonly): which instances run the monitors — probe, location, version, address,
// last heartbeat, results per minute, fenced writes, clock offset from PostgreSQL (marked beyond ±2 s) and shards
// held — and the monitors no live instance may run
// (their probe has no member: "unassigned"). One LMDB process shows itself holding every shard (mode "single").
// Refreshed every 5 s while open (the heartbeat period).
// @ts-check
import { h, setChildren, fmtAgo, fmtTime } from '../util.js';
import { api } from '../api.js';

const REFRESH_MS = 5_000;
/** Beyond this a member's clock is marked (src/monitor/cluster/clock-offset.ts CLOCK_SKEW_WARN_MS). */
const CLOCK_SKEW_WARN_MS = 2_000;

/** @param {number | undefined} offsetMs */
function clockCell(offsetMs) {
  const ms = Number(offsetMs ?? 0);
  const text = `${ms > 0 ? '+' : ''}${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) <= CLOCK_SKEW_WARN_MS) return h('td.num', { title: "wall clock minus PostgreSQL's" }, text);
  return h(
    'td.num.clock-skewed',
    { title: "this instance's clock is off PostgreSQL's: result times and alert order disagree; sync it (NTP)" },
    `⚠ ${text}`,
  );
}

/** @param {import('../types.js').ClusterMember} m */
function memberRow(m) {
  const shards = Object.entries(m.shards ?? {})
    .map(([group, list]) => `${group === '*' ? 'any probe' : group}: ${list.length}`)
    .join(', ');
  return h(
    'tr',
    { 'data-member': m.id },
    h('td', h('code', m.id), m.self ? h('span.badge', ' this instance') : null),
    h('td', m.probe || '*', m.location ? h('div.muted', m.location) : null),
    h('td', m.version || '–'),
    h('td', m.address ? h('code', m.address) : '–'),
    h('td', { title: fmtTime(m.lastHeartbeatMs) }, m.lastHeartbeatMs ? fmtAgo(m.lastHeartbeatMs) : '–'),
    h('td.num', String(m.resultsPerMin ?? 0)),
    h('td.num', String(m.fencedWrites ?? 0)),
    clockCell(m.clockOffsetMs),
    h('td', `${m.shardCount ?? 0}`, shards ? h('div.muted', shards) : null),
  );
}

/** @param {import('../types.js').Cluster} c */
function render(c) {
  const probes = c.unassigned?.probes ?? [];
  return [
    h(
      'p.muted#cluster-mode',
      c.mode === 'cluster'
        ? `${c.members.length} instance${c.members.length === 1 ? '' : 's'} on one PostgreSQL; ${c.shardsPerGroup} shards per probe group, heartbeat every ${c.heartbeatMs / 1000} s, an instance silent ${c.ttlMs / 1000} s is gone.`
        : 'One process on the embedded store (mode "single"): this instance runs every monitor.',
    ),
    h(
      'table.table#cluster-members',
      h(
        'thead',
        h(
          'tr',
          [
            'Instance',
            'Probe · location',
            'Version',
            'Address',
            'Heartbeat',
            'Results / min',
            'Fenced',
            'Clock',
            'Shards',
          ].map((t) => h('th', t)),
        ),
      ),
      h('tbody', c.members.map(memberRow)),
    ),
    h('h2', 'Unassigned monitors'),
    probes.length
      ? h(
          'table.table#cluster-unassigned',
          h(
            'thead',
            h(
              'tr',
              ['Probe', 'Monitors', 'For example'].map((t) => h('th', t)),
            ),
          ),
          h(
            'tbody',
            probes.map((p) =>
              h('tr', h('td', p.probe), h('td.num', String(p.monitors)), h('td', p.examples.join(', '))),
            ),
          ),
        )
      : h('p.muted#cluster-none-unassigned', 'None: every monitor has a live instance of its probe.'),
  ];
}

/** @param {HTMLElement} root */
export function mountCluster(root) {
  const body = h('div', h('p.muted', 'Loading…'));
  root.append(h('section.page', h('h1', 'Cluster'), body));
  let alive = true;
  const load = () =>
    /** @type {Promise<import('../types.js').Cluster>} */ (api.get('/cluster'))
      .then((c) => alive && setChildren(body, ...render(c)))
      .catch((/** @type {Error} */ e) => alive && setChildren(body, h('p.form-error', { role: 'alert' }, e.message)));
  void load();
  const timer = setInterval(load, REFRESH_MS);
  return () => {
    alive = false;
    clearInterval(timer);
  };
}
