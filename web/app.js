// Entry point: session → top bar → hash router → views. Each view is mount(root, params) → cleanup.
// @ts-check
import { h, setChildren, toast } from './util.js';
import { session, logout, can, logoutReason } from './api.js';
import { startPolling, stopPolling, updateToken } from './monitors-store.js';
import { mountLogin } from './views/login.js';
import { mountOverview } from './views/overview.js';

/**
 * A view: mount(root, ...route params) → cleanup (or nothing). The params are any on purpose: each view declares its
 * own (mountMonitor(root, type, sched, name): strings), and its route's regex is what guarantees them.
 * @typedef {(root: HTMLElement, ...params: any[]) => (() => void) | void} Mount
 */

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const topbar = /** @type {HTMLElement} */ (document.getElementById('topbar'));
/** @type {(() => void) | null} */
let cleanup = null;
/** @type {string | null} */
let lastToken = null;
/** The latest navigation; an older one still loading its view gives way. */
let currentRoute = {};

/** @type {Array<[RegExp, () => Mount | Promise<Mount>]>} */
const routes = [
  [/^#\/?$/, () => mountOverview],
  [/^#\/m\/([^/]+)\/([^/]+)\/([^/]+)$/, () => import('./views/monitor.js').then((m) => m.mountMonitor)],
  [/^#\/new\/([^/]+)$/, () => import('./views/form.js').then((m) => m.mountCreate)],
  [/^#\/edit\/([^/]+)\/([^/]+)\/([^/]+)$/, () => import('./views/form.js').then((m) => m.mountEdit)],
  [/^#\/admin(?:\/([^/]+))?$/, () => import('./views/admin.js').then((m) => m.mountAdmin)],
  [/^#\/certificates$/, () => import('./views/certificates.js').then((m) => m.mountCertificates)],
  [/^#\/cluster$/, () => import('./views/cluster.js').then((m) => m.mountCluster)],
];

function renderTopbar() {
  const s = session.get();
  topbar.hidden = !s;
  if (!s) return setChildren(topbar);
  const hash = location.hash || '#/';
  /** @type {(href: string, text: string, active: boolean) => HTMLAnchorElement} */
  const link = (href, text, active) => h('a.nav', { href, 'aria-current': active ? 'page' : undefined }, text);
  setChildren(
    topbar,
    h(
      'a.brand',
      { href: '#/' },
      h('img', { src: new URL('./favicon.svg', import.meta.url).href, alt: '', width: 22, height: 22 }),
      'Sentinel',
    ),
    h(
      'nav',
      { 'aria-label': 'Main' },
      link('#/', 'Monitors', hash === '#/' || hash.startsWith('#/m/')),
      can.write() ? link('#/new/url', 'New', hash.startsWith('#/new')) : null,
      link('#/certificates', 'Certificates', hash === '#/certificates'),
      link('#/cluster', 'Cluster', hash === '#/cluster'),
      can.admin() ? link('#/admin', 'Admin', hash.startsWith('#/admin')) : null,
    ),
    h('span.user', { title: `Logged in as ${s.username} (${s.role})` }, s.username, h('span.role', s.role)),
    h('button.btn.small', { type: 'button', onclick: () => logout(), id: 'logout' }, 'Log out'),
  );
}

/** Routes, and says so when a view cannot be loaded (e.g. the network went away before its module came). */
function navigate() {
  route().catch((e) => toast(`Cannot open this page: ${e instanceof Error ? e.message : String(e)}`, 'error'));
}

async function route() {
  cleanup?.();
  cleanup = null;
  renderTopbar();
  setChildren(main);
  if (!session.get()) {
    cleanup = mountLogin(main, logoutReason);
    return;
  }
  const hash = location.hash || '#/';
  for (const [re, load] of routes) {
    const m = re.exec(hash);
    if (!m) continue;
    const token = {};
    currentRoute = token;
    const mount = await load();
    if (currentRoute !== token) return;
    const params = m.slice(1).map((p) => (p === undefined ? undefined : decodeURIComponent(p)));
    cleanup = mount(main, ...params) || null;
    main.focus({ preventScroll: true });
    return;
  }
  main.append(h('section.page', h('h1', 'Not found'), h('p', h('a', { href: '#/' }, 'Back to the monitors'))));
}

session.sub((s) => {
  if (!s) {
    lastToken = null;
    stopPolling();
    navigate();
  } else if (lastToken === null) {
    performance.mark('sentinel:session');
    lastToken = s.token;
    startPolling(/** @type {{ __pollIntervalMs?: number }} */ (/** @type {unknown} */ (window)).__pollIntervalMs);
    navigate();
  } else if (s.token !== lastToken) {
    lastToken = s.token;
    updateToken(s.token);
  }
});
window.addEventListener('hashchange', navigate);
navigate();
