/**
 * Page timings read inside the page: Navigation Timing Level 2 (`performance.getEntriesByType('navigation')`) and
 * LCP from a buffered PerformanceObserver (works after the fact; absent where the browser does not report it).
 * All figures are ms from the navigation's start.
 *
 * A monitored page can call the reporting binding itself (it lives in the page's main world), so what it reports is
 * bounded (docs/security.md §9): at most MAX_TIMING_REPORTS reports per run are read (a larger one, over
 * MAX_REPORT_BYTES, is dropped unparsed), at most MAX_NAVIGATIONS pushed documents are kept (plus the one the runner
 * reads itself after a step), reports whose timeOrigin is before the run are ignored, a URL is cut to MAX_URL_CHARS,
 * and every figure must be a finite number (else it is left out).
 */

/** Documents (navigations) one run keeps; later ones are counted in `dropped`. */
export const MAX_NAVIGATIONS = 200;
/** Characters of a navigation's URL kept (the rest replaced by "…"). */
export const MAX_URL_CHARS = 2048;
/** Size of one pushed report read at all (a real one is ~400 bytes plus its URL). */
export const MAX_REPORT_BYTES = 8192;
/** Pushed reports read per run; the rest are ignored without being parsed. */
export const MAX_TIMING_REPORTS = 1000;
export interface NavigationTiming {
  url: string;
  /** Which step index the navigation was first seen after. */
  step: number;
  status?: number;
  dnsMs?: number;
  connectMs?: number;
  tlsMs?: number;
  ttfbMs?: number;
  domContentLoadedMs?: number;
  loadMs?: number;
  lcpMs?: number;
  transferBytes?: number;
}

export interface RawTiming {
  timeOrigin: number;
  url: string;
  status?: number;
  domainLookupStart: number;
  domainLookupEnd: number;
  connectStart: number;
  connectEnd: number;
  secureConnectionStart: number;
  requestStart: number;
  responseStart: number;
  domContentLoadedEventEnd: number;
  loadEventEnd: number;
  transferSize?: number;
  lcp?: number;
}

/** Builds the RawTiming object in the page from `nav` (a PerformanceNavigationTiming) and `lcp` (ms or undefined). */
const SNAPSHOT = `({
    timeOrigin: performance.timeOrigin, url: location.href, status: nav.responseStatus,
    domainLookupStart: nav.domainLookupStart, domainLookupEnd: nav.domainLookupEnd,
    connectStart: nav.connectStart, connectEnd: nav.connectEnd, secureConnectionStart: nav.secureConnectionStart,
    requestStart: nav.requestStart, responseStart: nav.responseStart,
    domContentLoadedEventEnd: nav.domContentLoadedEventEnd, loadEventEnd: nav.loadEventEnd,
    transferSize: nav.transferSize, lcp,
  })`;

/** How long after `load` the page waits for a first LCP entry before its timings are taken without one. */
export const LCP_WAIT_MS = 50;

/** Evaluated in the page (a string, so it never runs in the service's process). */
export const TIMING_EXPRESSION = `(async () => {
  const nav = performance.getEntriesByType('navigation')[0];
  if (!nav) return null;
  let lcp;
  try {
    lcp = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ${LCP_WAIT_MS});
      const obs = new PerformanceObserver((list) => {
        const entries = list.getEntries();
        clearTimeout(timer);
        obs.disconnect();
        resolve(entries.length ? entries[entries.length - 1].startTime : undefined);
      });
      obs.observe({ type: 'largest-contentful-paint', buffered: true });
    });
  } catch (e) { lcp = undefined; }
  return ${SNAPSHOT};
})()`;

/**
 * Installed at the start of every top-level document (chromium): the page reports its own timings through the
 * binding `bindingName` (a JSON string) once `load` has fired and LCP is known (or ${LCP_WAIT_MS} ms after load
 * without one), or when the document is left before that. The run then needs no round trip per navigation.
 */
export function timingInitScript(bindingName: string): string {
  return `(() => {
  if (window.top !== window) return;
  const report = globalThis[${JSON.stringify(bindingName)}];
  if (typeof report !== 'function') return;
  let lcp, loaded = false, sent = false, timer;
  const send = () => {
    if (sent) return;
    const nav = performance.getEntriesByType('navigation')[0];
    if (!nav) return;
    sent = true;
    clearTimeout(timer);
    try { report(JSON.stringify(${SNAPSHOT})); } catch (e) { /* the binding is gone */ }
  };
  try {
    new PerformanceObserver((list) => {
      const entries = list.getEntries();
      if (entries.length) lcp = entries[entries.length - 1].startTime;
      if (loaded) send();
    }).observe({ type: 'largest-contentful-paint', buffered: true });
  } catch (e) { /* no LCP in this browser */ }
  addEventListener('load', () => setTimeout(() => {
    loaded = true;
    if (lcp !== undefined) send();
    else timer = setTimeout(send, ${LCP_WAIT_MS});
  }, 0), { once: true });
  addEventListener('pagehide', send, { once: true });
})();`;
}

const ms = (v: number | undefined): number | undefined =>
  v === undefined || !Number.isFinite(v) || v < 0 ? undefined : Math.round(v * 10) / 10;
const span = (a: number, b: number): number | undefined =>
  a > 0 && b >= a ? ms(b - a) : a === 0 && b === 0 ? 0 : undefined;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** `raw` as a page sent it (any JSON): only known keys, numbers that are finite, a URL of at most MAX_URL_CHARS. */
function sanitise(raw: RawTiming): RawTiming {
  const url = String(raw.url);
  const status = num(raw.status);
  return {
    timeOrigin: num(raw.timeOrigin),
    url: url.length > MAX_URL_CHARS ? `${url.slice(0, MAX_URL_CHARS)}…` : url,
    status: Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined,
    domainLookupStart: num(raw.domainLookupStart),
    domainLookupEnd: num(raw.domainLookupEnd),
    connectStart: num(raw.connectStart),
    connectEnd: num(raw.connectEnd),
    secureConnectionStart: num(raw.secureConnectionStart),
    requestStart: num(raw.requestStart),
    responseStart: num(raw.responseStart),
    domContentLoadedEventEnd: num(raw.domContentLoadedEventEnd),
    loadEventEnd: num(raw.loadEventEnd),
    transferSize: num(raw.transferSize) || undefined,
    lcp: raw.lcp === undefined ? undefined : num(raw.lcp),
  };
}

export function toNavigationTiming(input: RawTiming, step: number): NavigationTiming {
  const raw = sanitise(input);
  const t: NavigationTiming = {
    url: raw.url,
    step,
    status: raw.status || undefined,
    dnsMs: span(raw.domainLookupStart, raw.domainLookupEnd),
    connectMs: span(raw.connectStart, raw.connectEnd),
    tlsMs: raw.secureConnectionStart > 0 ? span(raw.secureConnectionStart, raw.connectEnd) : undefined,
    ttfbMs: raw.responseStart > 0 ? ms(raw.responseStart) : undefined,
    domContentLoadedMs: raw.domContentLoadedEventEnd > 0 ? ms(raw.domContentLoadedEventEnd) : undefined,
    loadMs: raw.loadEventEnd > 0 ? ms(raw.loadEventEnd) : undefined,
    lcpMs: ms(raw.lcp),
    transferBytes: raw.transferSize || undefined,
  };
  for (const k of Object.keys(t) as (keyof NavigationTiming)[]) if (t[k] === undefined) delete t[k];
  return t;
}

/** Keeps one entry per document (keyed by timeOrigin), refreshing it while its load figures are still coming; at most
 * MAX_NAVIGATIONS documents. */
export class NavigationRecorder {
  private readonly byOrigin = new Map<number, NavigationTiming>();
  /** URL of the last document read, and whether its load and LCP figures were final. */
  lastUrl = '';
  lastComplete = false;
  /** Reports of documents beyond MAX_NAVIGATIONS, not kept. */
  dropped = 0;

  /** `read`: the runner read this itself (one per step at most), so it is kept even past the cap; pushed reports are
   * the page's word and are dropped past MAX_NAVIGATIONS. */
  record(raw: RawTiming | null | undefined, step: number, read = false): void {
    if (!raw || typeof raw !== 'object' || typeof raw.url !== 'string' || !/^https?:/.test(raw.url)) return;
    if (typeof raw.timeOrigin !== 'number' || !Number.isFinite(raw.timeOrigin)) return;
    const prev = this.byOrigin.get(raw.timeOrigin);
    if (!prev && !read && this.byOrigin.size >= MAX_NAVIGATIONS) {
      this.dropped++;
      return;
    }
    const t = toNavigationTiming(raw, prev?.step ?? step);
    this.byOrigin.set(raw.timeOrigin, t);
    this.lastUrl = raw.url;
    this.lastComplete = t.loadMs !== undefined && t.lcpMs !== undefined;
  }

  list(): NavigationTiming[] {
    return [...this.byOrigin.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
  }
}
