// Admin pages: users (groups), settings, SMTP, notification channels (with test send and connection check), maintenance
// windows, secrets, discovery agents (agents.js). The channel forms are built from GET /alerting/catalog (one card per registered channel: its
// settings schema, secret fields, choices, examples, severity map). Pages whose routes the service does not have (404)
// say so instead of failing.
// Every tab shows the last failed alert delivery, if any (a wrong SMTP mode otherwise fails only in
// /alerting/deliveries); saving SMTP settings shows what the server probe found.
// @ts-check
import { h, setChildren, toast, confirmDialog, fmtTime } from '../util.js';
import { api, can } from '../api.js';
import { fieldOf } from '../validate.js';
import { agents } from './agents.js';

/** @typedef {import('../api.js').ApiError} ApiError */
/** @typedef {import('../types.js').User} User */
/** @typedef {(box: HTMLElement) => Promise<void>} Tab  renders an admin section into box */

/** @type {Array<[string, string]>} */
const TABS = [
  ['users', 'Users'],
  ['settings', 'Settings'],
  ['smtp', 'SMTP'],
  ['channels', 'Channels'],
  ['maintenance', 'Maintenance'],
  ['secrets', 'Secrets'],
  ['agents', 'Agents'],
];

/**
 * @param {HTMLElement} root
 * @param {string} [tab]  the section (#/admin/<tab>)
 */
export function mountAdmin(root, tab = 'users') {
  if (!can.admin())
    return void root.append(h('section.page', h('h1', 'Admin'), h('p', 'Only admins can see this page.')));
  const body = h('div.admin-body');
  const failed = h('div.failed-delivery', { hidden: true });
  root.append(
    h(
      'section.page.admin',
      h('h1', 'Administration'),
      h(
        'nav.tabs',
        { 'aria-label': 'Admin sections' },
        TABS.map(([k, label]) =>
          h('a.tab', { href: `#/admin/${k}`, 'aria-current': k === tab ? 'page' : undefined }, label),
        ),
      ),
      failed,
      body,
    ),
  );
  void lastFailedDelivery(failed);
  /** @type {Record<string, Tab>} */
  const views = { users, settings, smtp, channels, maintenance, secrets, agents: (b) => agents(b, kvForm) };
  (views[tab] || users)(body).catch((/** @type {ApiError} */ e) =>
    setChildren(
      body,
      h(
        'p.form-error',
        { role: 'alert' },
        e.status === 404 ? 'This service does not offer this section yet.' : e.message,
      ),
    ),
  );
}

/**
 * @typedef {{ k: string, label?: string, secret?: boolean, choices?: string[], help?: string, placeholder?: string,
 *   multiline?: boolean }} KvField
 */
/** @typedef {typeof kvForm} KvForm  for agents.js, which gets it passed */

/**
 * A key/value form; submit → onSave(changed).
 * @param {KvField[]} fields
 * @param {Record<string, unknown>} values  field → its value (a string; a secret's reads set / unset)
 * @param {(changed: Record<string, string>) => Promise<Record<string, unknown>>} onSave  → the values as saved
 * @param {{ submitLabel?: string, extra?: import('../util.js').Child, idPrefix?: string }} [opts]
 */
function kvForm(fields, values, onSave, { submitLabel = 'Save', extra, idPrefix = '' } = {}) {
  const err = h('p.form-error', { role: 'alert', hidden: true });
  const form = h(
    'form.mform',
    { novalidate: true },
    h(
      'div.grid',
      fields.map((f) => {
        const id = `a-${idPrefix}${f.k}`;
        const secretHint = values[f.k] === 'set' ? 'stored — leave blank to keep' : 'not set';
        const placeholder = f.secret
          ? `${secretHint}${f.placeholder ? ` (e.g. ${f.placeholder})` : ''}`
          : (f.placeholder ?? '');
        const ctl = f.choices
          ? h(
              'select',
              { id, name: f.k },
              f.choices.map((c) => h('option', { value: c }, c)),
            )
          : f.multiline
            ? h('textarea', { id, name: f.k, rows: 4, spellcheck: 'false', placeholder })
            : h('input', {
                id,
                name: f.k,
                type: f.secret ? 'password' : 'text',
                autocomplete: f.secret ? 'new-password' : 'off',
                placeholder,
              });
        ctl.value = f.secret ? '' : /** @type {string} */ (values[f.k] ?? '');
        return h(
          `div.field${f.multiline ? '.wide' : ''}`,
          h('label', { for: id }, f.label || f.k),
          ctl,
          f.help ? h('small.help', f.help) : null,
          h('small.field-err', { role: 'alert' }),
        );
      }),
    ),
    err,
    h('div.row-end', extra, h('button.btn.primary', { type: 'submit' }, submitLabel)),
  );
  form.addEventListener('submit', (e) => void save(e));
  /** @param {SubmitEvent} e */
  async function save(e) {
    e.preventDefault();
    err.hidden = true;
    form.querySelectorAll('.field').forEach((x) => x.classList.remove('invalid'));
    /** @type {Record<string, string>} */
    const changed = {};
    for (const f of fields) {
      const v = /** @type {HTMLInputElement} */ (form.elements.namedItem(f.k)).value;
      if (f.secret ? v !== '' : v !== (values[f.k] ?? '')) changed[f.k] = v;
    }
    if (!Object.keys(changed).length) return toast('Nothing changed.');
    try {
      Object.assign(values, await onSave(changed));
      toast('Saved.');
    } catch (ex) {
      const name = fieldOf(/** @type {ApiError} */ (ex).field);
      const ctl = name ? form.elements.namedItem(name) : null;
      if (ctl instanceof HTMLElement) {
        const box = /** @type {HTMLElement} */ (ctl.closest('.field'));
        box.classList.add('invalid');
        /** @type {HTMLElement} */ (box.querySelector('.field-err')).textContent = /** @type {Error} */ (ex).message;
        ctl.focus();
      } else {
        err.textContent = /** @type {Error} */ (ex).message;
        err.hidden = false;
      }
    }
  }
  return form;
}

/** @type {Tab} */
async function users(box) {
  /** @type {User[]} */
  const list = await api.get('/api/users');
  const groupSel = (/** @type {User} */ u) =>
    h(
      'select',
      {
        'aria-label': `Group of ${u.username}`,
        onchange: (/** @type {Event} */ e) => patch(u, { group: /** @type {HTMLSelectElement} */ (e.target).value }),
      },
      ['admin', 'user', 'readonly'].map((g) => h('option', { value: g, selected: g === u.group }, g)),
    );
  /**
   * PATCH /api/users with one change.
   * @param {User} u
   * @param {{ group?: string, enabled?: string, password?: string }} change
   */
  async function patch(u, change) {
    try {
      await api.patch('/api/users', { username: u.username, ...change });
      toast(`${u.username} updated`);
      await users(box);
    } catch (e) {
      toast(/** @type {Error} */ (e).message, 'error');
    }
  }
  const table = h(
    'table.tbl',
    h(
      'thead',
      h(
        'tr',
        h('th', 'User'),
        h('th', 'Full name'),
        h('th', 'Email'),
        h('th', 'Group'),
        h('th', 'Enabled'),
        h('th', ''),
      ),
    ),
    h(
      'tbody',
      list.map((u) =>
        h(
          'tr',
          h('td', u.username),
          h('td', u.fullname),
          h('td', u.email),
          h('td', groupSel(u)),
          h(
            'td',
            h('input', {
              type: 'checkbox',
              checked: u.enabled === 'true',
              'aria-label': `${u.username} enabled`,
              onchange: (/** @type {Event} */ e) =>
                patch(u, { enabled: String(/** @type {HTMLInputElement} */ (e.target).checked) }),
            }),
          ),
          h(
            'td.actions-cell',
            h(
              'button.btn.small',
              {
                type: 'button',
                onclick: async () => {
                  const pw = prompt(`New password for ${u.username} (at least 12 characters, 5 different)`);
                  if (pw) await patch(u, { password: pw });
                },
              },
              'Password',
            ),
            h(
              'button.btn.small.danger',
              {
                type: 'button',
                onclick: async () => {
                  if (
                    !(await confirmDialog(`Delete user ${u.username}?`, 'Their tokens stop working at once.', 'Delete'))
                  )
                    return;
                  try {
                    await api.del(`/api/users/${encodeURIComponent(u.username)}`);
                    await users(box);
                  } catch (e) {
                    toast(/** @type {Error} */ (e).message, 'error');
                  }
                },
              },
              'Delete',
            ),
          ),
        ),
      ),
    ),
  );
  const vals = { group: 'user', enabled: 'true' };
  const create = kvForm(
    [
      { k: 'username' },
      { k: 'password', secret: true, help: 'at least 12 characters, 5 different' },
      { k: 'fullname', label: 'full name' },
      { k: 'email' },
      { k: 'group', choices: ['user', 'readonly', 'admin'] },
      { k: 'enabled', choices: ['true', 'false'] },
    ],
    vals,
    async (c) => {
      await api.post('/api/users', { group: vals.group, enabled: vals.enabled, ...c });
      await users(box);
      return {};
    },
    { submitLabel: 'Create user' },
  );
  setChildren(
    box,
    h('div.card', h('h2', 'Users'), h('div.scroll-x', table)),
    h('div.card', h('h2', 'New user'), create),
  );
}

/** @type {Tab} */
async function settings(box) {
  /** @type {Omit<import('../types.js').Settings, 'smtp'> & { smtp?: unknown }}  smtp has its own tab */
  const s = await api.get('/setting');
  delete s.smtp;
  const fields = Object.keys(s).map((k) => ({
    k,
    choices:
      k === 'logLevel'
        ? ['trace', 'debug', 'info', 'warn', 'error']
        : /^(autoThreshold)$/.test(k)
          ? ['true', 'false']
          : undefined,
  }));
  setChildren(
    box,
    h(
      'div.card',
      h('h2', 'Settings'),
      h('p.muted', 'Changes apply at once; the whole change is refused when any value is bad.'),
      kvForm(fields, s, (c) => api.post('/updateSetting', c)),
    ),
  );
}

/**
 * The newest failed delivery among the last 100, as a warning above the admin tabs (hidden when there is none).
 * @param {HTMLElement} box
 */
async function lastFailedDelivery(box) {
  try {
    /** @type {import('../types.js').Delivery[]} */
    const list = await api.get('/alerting/deliveries?limit=100');
    const f = list.find((d) => d.outcome === 'failed');
    if (!f) return;
    setChildren(
      box,
      h(
        'p.form-error',
        { role: 'alert' },
        `Last failed alert delivery: ${fmtTime(f.finishedMs)}, ${f.channel} for ${f.monitor} (${f.status}): `,
        h('strong', f.error || 'failed'),
        ` after ${f.attempts} attempt(s).`,
      ),
    );
    box.hidden = false;
  } catch {
    // No delivery log on this service (404) or no access: nothing to show.
  }
}

/**
 * What the SMTP probe of POST /setsmtpvault found, under the form.
 * @param {HTMLElement} box
 * @param {import('../types.js').SmtpAnswer} r
 */
function showProbe(box, r) {
  const p = r.probe;
  if (!p) return setChildren(box, h('p.muted', r.message || ''));
  const facts = [
    `connected: ${p.connected ? 'yes' : 'no'}`,
    p.starttlsOffered !== undefined ? `STARTTLS offered: ${p.starttlsOffered ? 'yes' : 'no'}` : null,
    p.tls ? `TLS: ${p.tls.protocol}` : null,
    `AUTH: ${p.auth}`,
  ].filter(Boolean);
  setChildren(
    box,
    h(p.ok ? 'p.muted' : 'p.form-error', { role: p.ok ? 'status' : 'alert' }, `Probe: ${p.willUse}`),
    h('p.muted', facts.join(' · ')),
  );
}

/** @type {Tab} */
async function smtp(box) {
  /** @type {import('../types.js').SmtpSettings} */
  /** @type {import('../types.js').Settings} */
  const all = await api.get('/setting');
  const s = all.smtp;
  const probe = h('div.smtp-probe');
  const fields = Object.keys(s).map((k) => ({
    k,
    secret: k === 'smtpPassword',
    choices: k === 'smtpEnabled' ? ['true', 'false'] : k === 'smtpSecure' ? ['starttls', 'tls', 'none'] : undefined,
  }));
  const to = h('input', { type: 'email', placeholder: 'test recipient', 'aria-label': 'Test recipient' });
  const test = h(
    'button.btn',
    { type: 'button', onclick: () => testSend('email', { to: to.value }) },
    'Send test email',
  );
  const check = h(
    'button.btn#smtp-probe',
    { type: 'button', onclick: () => testSend('email', { mode: 'probe' }) },
    'Check connection',
  );
  setChildren(
    box,
    h(
      'div.card',
      h('h2', 'SMTP'),
      kvForm(
        fields,
        s,
        async (c) => {
          /** @type {import('../types.js').SmtpAnswer} */
          const r = await api.post('/setsmtpvault', c);
          showProbe(probe, r);
          return r;
        },
        { extra: h('span.inline', to, test, check) },
      ),
      probe,
    ),
  );
}

/**
 * POST /alerting/channels/{channel}/test: a test send, or with mode probe a check without sending.
 * @param {string} channel
 * @param {{ to?: string, mode?: 'probe' }} body
 */
async function testSend(channel, body) {
  const probe = body?.mode === 'probe';
  try {
    /** @type {import('../types.js').ChannelTestAnswer} */
    const r = await api.post(`/alerting/channels/${channel}/test`, body);
    const done = probe
      ? `${channel} connection OK${r.message ? `: ${r.message}` : ''} (${Math.round(r.latencyMs)} ms)`
      : `Test sent through ${channel} (${Math.round(r.latencyMs)} ms)`;
    toast(r.ok ? done : `${probe ? 'Check' : 'Test'} failed: ${r.error}`, r.ok ? 'info' : 'error');
  } catch (e) {
    toast(
      /** @type {ApiError} */ (e).status === 404
        ? 'Test sends are not available on this service yet.'
        : /** @type {Error} */ (e).message,
      'error',
    );
  }
}

/**
 * The choices of a schema with enums (anyOf of single-value enums, or enum).
 * @param {import('../types.js').FieldSchema} s
 */
function choicesOf(s) {
  const values = s.enum || (s.anyOf || []).flatMap((a) => a.enum || (a.const !== undefined ? [a.const] : []));
  return values.length ? values : undefined;
}

/**
 * @param {import('../types.js').CatalogEntry} c
 * @param {Record<string, string>} vals  its settings (secrets as set / unset)
 */
function channelCard(c, vals) {
  const head = [
    h('h2', c.displayName),
    h(
      'p.muted',
      c.description,
      /^https:/.test(c.docsUrl)
        ? [' · ', h('a', { href: c.docsUrl, target: '_blank', rel: 'noopener' }, 'vendor docs')]
        : null,
    ),
  ];
  const severity = h(
    'details.severity',
    h('summary', 'Severity mapping'),
    h(
      'table.tbl',
      h(
        'tbody',
        Object.entries(c.severity).map(([k, v]) =>
          h('tr', h('th', k === 'OK' ? 'recovery' : k.toLowerCase()), h('td', v)),
        ),
      ),
    ),
  );
  if (c.configuredVia)
    return h(
      `div.card#channel-${c.id}`,
      head,
      h('p', 'Set up in the ', h('a', { href: '#/admin/smtp' }, 'SMTP'), ` tab (${c.configuredVia}).`),
      severity,
    );
  const fields = Object.entries(c.settings.properties).map(([k, s]) => ({
    k,
    secret: s['x-secret'] === true,
    choices: choicesOf(s),
    help: s.description,
    placeholder: c.example[k] ?? c.defaults[k],
    multiline: (s.maxLength ?? 0) >= 4096 && !/url$/i.test(k),
  }));
  const buttons = [
    h('button.btn', { type: 'button', onclick: () => testSend(c.id, {}) }, 'Send test'),
    c.probe
      ? h(
          'button.btn',
          { type: 'button', title: c.probeDescription, onclick: () => testSend(c.id, { mode: 'probe' }) },
          'Check connection',
        )
      : null,
  ];
  return h(
    `div.card#channel-${c.id}`,
    head,
    kvForm(fields, vals, (changed) => api.post(`/alerting/channels/${c.id}`, changed), {
      extra: h('span.inline', buttons),
      idPrefix: `${c.id}-`,
    }),
    severity,
  );
}

/** @type {Tab} */
async function channels(box) {
  const [all, catalog] = await Promise.all([
    /** @type {Promise<import('../types.js').ChannelSettings>} */ (api.get('/alerting/channels')),
    /** @type {Promise<import('../types.js').CatalogEntry[]>} */ (api.get('/alerting/catalog')),
  ]);
  setChildren(
    box,
    h(
      'p.muted',
      'Every enabled channel gets the alerts of every monitor, unless the monitor names its channels (notifyChannels: ids or tag:<name>, matching the tags below) or opts out of one.',
    ),
    ...catalog.map((c) => channelCard(c, all[c.id] || {})),
  );
}

/** @type {Tab} */
async function maintenance(box) {
  /** @type {import('../types.js').MaintenanceWindow[]} */
  const list = await api.get('/maintenance');
  const rows = list.map((w) =>
    h(
      'tr',
      h('td', w.name),
      h('td', w.active ? 'active now' : '–'),
      h(
        'td',
        w.cron
          ? `cron ${w.cron} for ${w.durationMinutes} min`
          : `${fmtTime(w.fromMs, false)} → ${fmtTime(w.toMs, false)}`,
      ),
      h('td', [...w.monitors, ...w.tags.map((t) => `#${t}`)].join(', ')),
      h(
        'td',
        h(
          'button.btn.small.danger',
          {
            type: 'button',
            onclick: async () => {
              if (
                !(await confirmDialog(`Delete window ${w.name}?`, 'Monitors in scope alert normally again.', 'Delete'))
              )
                return;
              await api
                .del(`/maintenance/${encodeURIComponent(w.id)}`)
                .catch((/** @type {Error} */ e) => toast(e.message, 'error'));
              await maintenance(box);
            },
          },
          'Delete',
        ),
      ),
    ),
  );
  /** @type {Record<string, string>} */
  const vals = {};
  const form = kvForm(
    [
      { k: 'name' },
      { k: 'from', help: 'one-off start (YYYY-MM-DD HH:MM, local time)' },
      { k: 'to', help: 'one-off end' },
      { k: 'cron', help: 'recurring: cron expression' },
      { k: 'durationMinutes', help: 'recurring: minutes' },
      { k: 'timezone', help: 'IANA zone for cron' },
      { k: 'monitors', help: "comma-separated names, or '*'" },
      { k: 'tags', help: 'comma-separated tags' },
    ],
    vals,
    async (c) => {
      for (const k of ['from', 'to'])
        if (c[k]) {
          const ms = Date.parse(c[k].replace(' ', 'T'));
          if (!Number.isFinite(ms)) throw Object.assign(new Error('not a date and time'), { field: `body.${k}` });
          c[k] = String(ms);
        }
      await api.post('/maintenance', c);
      await maintenance(box);
      return {};
    },
    { submitLabel: 'Create window' },
  );
  setChildren(
    box,
    h(
      'div.card',
      h('h2', 'Maintenance windows'),
      list.length
        ? h(
            'div.scroll-x',
            h(
              'table.tbl',
              h('thead', h('tr', h('th', 'Name'), h('th', 'State'), h('th', 'When'), h('th', 'Scope'), h('th', ''))),
              h('tbody', rows),
            ),
          )
        : h('p.muted', 'No windows.'),
    ),
    h('div.card', h('h2', 'New window'), form),
  );
}

/** @type {Tab} */
async function secrets(box) {
  /** @type {import('../types.js').Secret[]} */
  const list = await api.get('/secrets');
  /** @type {Record<string, string>} */
  const vals = {};
  setChildren(
    box,
    h(
      'div.card',
      h('h2', 'Secrets for exec monitors'),
      list.length
        ? h(
            'ul.plain',
            list.map((s) =>
              h(
                'li',
                h('code', s.name),
                h('span.muted', ` updated ${fmtTime(s.updatedMs)} `),
                h(
                  'button.btn.small.danger',
                  {
                    type: 'button',
                    onclick: async () => {
                      if (
                        !(await confirmDialog(
                          `Delete secret ${s.name}?`,
                          'Monitors referring to it will fail.',
                          'Delete',
                        ))
                      )
                        return;
                      await api
                        .del(`/secrets/${encodeURIComponent(s.name)}`)
                        .catch((/** @type {Error} */ e) => toast(e.message, 'error'));
                      await secrets(box);
                    },
                  },
                  'Delete',
                ),
              ),
            ),
          )
        : h('p.muted', 'No secrets.'),
    ),
    h(
      'div.card',
      h('h2', 'Set a secret'),
      kvForm(
        [{ k: 'name' }, { k: 'value', secret: true }],
        vals,
        async (c) => {
          await api.post(`/secrets/${encodeURIComponent(c.name || '')}`, { value: c.value || '' });
          await secrets(box);
          return {};
        },
        { submitLabel: 'Save secret' },
      ),
    ),
  );
}
