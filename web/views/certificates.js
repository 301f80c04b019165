// The certificate inventory (GET /certificates): every certificate the checks see — url/api HTTPS hops and tcp
// monitors with a tls mode — soonest expiry first, with its level (as url: < 30 d MINOR, < 14 d MAJOR, < 7 d
// CRITICAL), subject, names, issuer, key and the monitors presenting it.
// @ts-check
import { h, statusPill, fmtTime, setChildren, monitorHref } from '../util.js';
import { api } from '../api.js';

/** @param {import('../types.js').Certificate} c */
function row(c) {
  const days = c.daysLeft < 0 ? `expired ${Math.abs(c.daysLeft)} d ago` : `${c.daysLeft} d`;
  return h(
    'tr',
    h('td', statusPill(c.level, days)),
    h('td', fmtTime(c.validToMs, false)),
    h('td', c.subject || '–', c.sans?.length ? h('div.muted', c.sans.slice(0, 6).join(', ')) : null),
    h('td', c.issuer || '–'),
    h('td', c.keyType || '–'),
    h(
      'td',
      c.monitors.map((m) =>
        h('div', h('a', { href: monitorHref(m) }, m.name), h('span.muted', ` ${m.type} · ${m.host}`)),
      ),
    ),
  );
}

/** @param {HTMLElement} root */
export function mountCertificates(root) {
  const body = h('div', h('p.muted', 'Loading…'));
  root.append(
    h(
      'section.page',
      h('h1', 'Certificates'),
      h(
        'p.muted',
        'Every certificate the checks see (url and api HTTPS, tcp monitors with a tls mode), soonest expiry first.',
      ),
      body,
    ),
  );
  let alive = true;
  /** @type {Promise<import('../types.js').Certificate[]>} */ (api.get('/certificates'))
    .then((list) => {
      if (!alive) return;
      if (!list.length)
        return setChildren(
          body,
          h('p.muted', 'No certificates seen yet: run an https url/api monitor or a tcp monitor with tls.'),
        );
      setChildren(
        body,
        h(
          'table.table#cert-table',
          h(
            'thead',
            h(
              'tr',
              ['Expires in', 'On', 'Subject', 'Issuer', 'Key', 'Monitors'].map((t) => h('th', t)),
            ),
          ),
          h('tbody', list.map(row)),
        ),
      );
    })
    .catch((/** @type {Error} */ e) => alive && setChildren(body, h('p.form-error', { role: 'alert' }, e.message)));
  return () => (alive = false);
}
