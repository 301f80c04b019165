/**
 * What the step runner needs from a browser, implemented by playwright-driver.ts (chromium) and
 * puppeteer-driver.ts (firefox over WebDriver BiDi). A session is one fresh browser context with one page.
 */
import type { RawTiming } from './timings.js';

export type BrowserKind = 'chromium' | 'firefox';
export const BROWSER_KINDS: readonly BrowserKind[] = ['chromium', 'firefox'];

export interface DeviceDescriptor {
  viewport: { width: number; height: number };
  userAgent?: string;
  deviceScaleFactor?: number;
  isMobile?: boolean;
  hasTouch?: boolean;
}

export interface SessionOptions {
  viewport: { width: number; height: number };
  device?: DeviceDescriptor;
  ignoreTlsErrors: boolean;
  /** Folder for the video (chromium only). */
  recordVideoDir?: string;
  /** HAR file path (chromium only). */
  recordHarPath?: string;
  /** Called for every request; a returned reason aborts it (the network policy, exec/fence.ts). */
  fence?: (url: string) => Promise<string | undefined>;
}

export interface SessionArtifacts {
  /** Absolute path of the finished video, when one was recorded. */
  videoPath?: string;
}

export interface Session {
  goto(url: string, timeoutMs: number): Promise<{ status?: number }>;
  click(selector: string, timeoutMs: number): Promise<void>;
  fill(selector: string, value: string, timeoutMs: number): Promise<void>;
  select(selector: string, value: string, timeoutMs: number): Promise<void>;
  /** Presses a key, in the element when a selector is given, else in the focused element. */
  press(selector: string | undefined, key: string, timeoutMs: number): Promise<void>;
  check(selector: string, checked: boolean, timeoutMs: number): Promise<void>;
  hover(selector: string, timeoutMs: number): Promise<void>;
  waitForSelector(
    selector: string,
    state: 'visible' | 'hidden' | 'attached' | 'detached',
    timeoutMs: number,
  ): Promise<void>;
  waitForNetworkIdle(timeoutMs: number): Promise<void>;
  /** Text of the first match (innerText), or of the body when no selector is given. */
  text(selector: string | undefined, timeoutMs: number): Promise<string>;
  attribute(selector: string, name: string, timeoutMs: number): Promise<string | null>;
  url(): string;
  screenshot(path: string, fullPage: boolean): Promise<void>;
  /** Evaluates a JavaScript expression inside the page (never in the service's process). */
  evaluate<T>(expression: string): Promise<T>;
  /** Where present (chromium), every top-level document of the session reports its own timings here once loaded
   * (exec/timings.ts timingInitScript); the runner then reads timings itself only for a document still loading at the
   * end. Without it, the runner reads them after every step that may have navigated. */
  onTiming?(sink: (raw: RawTiming) => void): void;
  /** Closes the context; finishes the HAR and the video. Safe to call twice. */
  close(): Promise<SessionArtifacts>;
}

export interface LaunchedBrowser {
  readonly kind: BrowserKind;
  readonly pid: number | undefined;
  readonly supports: { video: boolean; har: boolean };
  isConnected(): boolean;
  /** Calls `cb` once the browser is gone; returns the unsubscribe. */
  onDisconnected(cb: () => void): () => void;
  newSession(opts: SessionOptions): Promise<Session>;
  /** Resolves when background work (a spare context being prepared) is done. */
  idle?(): Promise<void>;
  close(): Promise<void>;
}

export interface LaunchOptions {
  executablePath: string;
  ignoreTlsErrors: boolean;
  timeoutMs: number;
  /** Prepare the next run's fresh context while a run executes (chromium; default true). */
  prewarm?: boolean;
}

export type Driver = (opts: LaunchOptions) => Promise<LaunchedBrowser>;

/** Flags every browser launch gets (issue 7: no background traffic, no updates, no sync). No --no-sandbox: the
 * sandbox is decided by exec/sandbox.ts. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

/** Translates the Playwright locator syntax we document (CSS, text=, role=, xpath=) to puppeteer's P-selectors. */
export function toPuppeteerSelector(selector: string): string {
  const s = selector.trim();
  if (s.startsWith('css=')) return s.slice(4);
  if (s.startsWith('xpath=')) return `::-p-xpath(${s.slice(6)})`;
  if (s.startsWith('//')) return `::-p-xpath(${s})`;
  if (s.startsWith('text=')) {
    let t = s.slice(5).trim();
    if (/^".*"$/.test(t) || /^'.*'$/.test(t)) t = t.slice(1, -1);
    return `::-p-text(${t})`;
  }
  if (s.startsWith('role=')) {
    const m = /^role=([\w-]+)\s*(?:\[name=(["'])(.*)\2(?:\s*[is])?\])?$/.exec(s);
    if (!m) return `::-p-aria([role="${s.slice(5)}"])`;
    return m[3] !== undefined ? `::-p-aria([name="${m[3]}"][role="${m[1]}"])` : `::-p-aria([role="${m[1]}"])`;
  }
  return s;
}
