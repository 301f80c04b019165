// Push monitor card on the monitor page (docs/checks-push.md): the ping URLs (the token shown as <token> — the
// service keeps only its hash), what was last heard (last ping, its kind, the last start → success duration, when the
// monitor is late), and "Rotate token". A token is shown once: right after create (handed over by the form through
// rememberGenerated) or after a rotation, with a note to store it now.
// @ts-check
import { h, setChildren, fmtTime, fmtAgo, fmtMs, toast, confirmDialog } from '../util.js';
import { api, can } from '../api.js';

/** @typedef {import('../types.js').PushDetails} PushDetails */

/**
 * Generated secrets of a monitor just created, kept in memory until its page has taken them.
 * @type {Map<string, Record<string, string>>}
 */
const pending = new Map();
/**
 * The token a card is showing (kept across re-renders of the same page, dropped with it).
 * @type {WeakMap<HTMLElement, string>}
 */
const revealed = new WeakMap();

/**
 * @param {string} name
 * @param {Record<string, string> | undefined} generated  the create answer's generated secrets
 */
export function rememberGenerated(name, generated) {
  if (generated && Object.keys(generated).length) pending.set(name, generated);
}

/** @param {number | null} port  PUSH_PORT (null: pings come to this port) */
function pushBase(port) {
  return `https://${location.hostname}:${port ?? location.port}`;
}

/**
 * @param {PushDetails} push
 * @param {string | undefined} token  shown once; otherwise <token>
 */
function urlRows(push, token) {
  const base = pushBase(push.pushPort);
  const t = token ?? '<token>';
  const rows = [
    ['Success', push.paths.success],
    ['Start', push.paths.start],
    ['Fail', push.paths.fail],
    ['Exit code', push.paths.exitCode],
  ];
  return rows.map(([k, p]) => [h('dt', k), h('dd', h('code.push-url', `${base}${p.replace('<token>', t)}`))]);
}

/** @param {string} token */
function revealBox(token) {
  return h(
    'div.reveal',
    { role: 'status' },
    h('p', h('strong', 'Token (shown once — store it now): '), h('code#push-token', token)),
    h('p.muted.small', 'The service keeps only a hash of it. Lost? Rotate the token and update the job.'),
  );
}

/**
 * Renders the card into `box` (hidden when the monitor has no push details).
 * @param {HTMLElement} box
 * @param {Pick<import('../types.js').MonitorDetails, 'push'> | null} details
 * @param {{ type: string, sched: string, name: string }} monitor
 */
export function renderPushCard(box, details, { type, sched, name }) {
  const push = details?.push;
  if (!push) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const fresh = pending.get(name)?.token ?? revealed.get(box);
  pending.delete(name);
  if (fresh) revealed.set(box, fresh);
  const draw = (/** @type {string | undefined} */ token) =>
    setChildren(
      box,
      h('div.card-head', h('h2', 'Push'), can.write() ? rotateBtn() : null),
      token ? revealBox(token) : null,
      h(
        'p.muted.small',
        push.pushPort
          ? 'The job calls one of these URLs (GET or POST, optional text body; no client certificate on this port).'
          : 'No PUSH_PORT: the job calls these paths on this port, with a client certificate.',
      ),
      h('dl.facts', ...urlRows(push, token)),
      h(
        'dl.facts',
        [h('dt', 'Last ping'), h('dd', push.lastPingMs ? `${push.lastKind} · ${fmtAgo(push.lastPingMs)}` : 'none yet')],
        [h('dt', 'Last success'), h('dd', push.lastSuccessMs ? fmtTime(push.lastSuccessMs) : '–')],
        [h('dt', 'Last duration'), h('dd', push.lastDurationMs == null ? '–' : fmtMs(push.lastDurationMs))],
        [h('dt', 'Late after'), h('dd', push.lateAfterMs ? fmtTime(push.lateAfterMs) : '–')],
      ),
    );
  const rotateBtn = () => h('button.btn.small#push-rotate', { type: 'button', onclick: rotate }, 'Rotate token');
  async function rotate() {
    const ok = await confirmDialog(
      'Rotate the token?',
      'The current token stops working at once; the job must use the new one.',
      'Rotate',
    );
    if (!ok) return;
    try {
      /** @type {import('../types.js').SavedAnswer} */
      const r = await api.post(`/${type}/rotate/${encodeURIComponent(sched)}/${encodeURIComponent(name)}`);
      toast(r.message);
      if (r.generated?.token) revealed.set(box, r.generated.token);
      draw(r.generated?.token);
    } catch (e) {
      toast(/** @type {Error} */ (e).message, 'error');
    }
  }
  draw(fresh);
}
