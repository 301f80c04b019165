/**
 * Runs the steps of one transaction against a Session, in order, stopping at the first failure. Returns per-step
 * results, navigation timings, extracted values and the failure classified as an outcome:
 *   assertion / element not found / step's own timeoutMs / HTTP >= 400 on goto / TLS error → 'error'
 *   connection refused, DNS failure, unreachable (net::ERR_*, NS_ERROR_*) → 'down'
 *   the transaction's deadline reached (ctx timeout)                      → 'down'
 *   reference not resolvable (vault, secret store, TOTP seed), browser crash → 'exception'
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Outcome } from '../types.js';
import type { RegexRunner } from '../lib/safe-regex.js';
import { screenshotName, type ArtifactSet } from './artifacts.js';
import type { Session } from './session.js';
import type { Step } from './steps.js';
import { resolveTemplates, TemplateError, type SecretMasker, type TemplateSources } from './templates.js';
import { originOf } from './secret-refs.js';
import { NavigationRecorder, TIMING_EXPRESSION, type NavigationTiming, type RawTiming } from './timings.js';

export const ASSERT_DEFAULT_TIMEOUT_MS = 5_000;
const POLL_MS = 100;

export interface StepResult {
  name: string;
  action: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  error?: string;
  screenshot?: string;
}

export interface RunInput {
  steps: Step[];
  session: Session;
  browserConnected(): boolean;
  sources: TemplateSources;
  masker: SecretMasker;
  artifacts: ArtifactSet;
  screenshots: boolean;
  /** Steps must end by this time (Unix ms); a little before the check's own deadline. */
  deadlineMs: number;
  now(): number;
  signal: AbortSignal;
  /** Runs step patterns off the event loop, on RE2 semantics, over at most the first 1 MiB of text. */
  regex: RegexRunner;
}

export interface RunOutput {
  steps: StepResult[];
  navigations: NavigationTiming[];
  /** Navigation reports beyond the cap (exec/timings.ts MAX_NAVIGATIONS), not kept. */
  navigationsDropped: number;
  extracted: Record<string, string>;
  onDemand: Set<string>;
  failure?: { index: number; outcome: Outcome; message: string };
}

class AssertionFailed extends Error {}

/** A step pattern that cannot run (stored before patterns ran on RE2, refused now) or was stopped by its bound. */
class PatternFailed extends Error {}

class StepTimeout extends Error {
  constructor(readonly ownTimeout: boolean) {
    super('timed out');
  }
}

type Ctx = RunInput & { stepIndex: number; extracted: Record<string, string>; onDemand: Set<string> };

function budget(ctx: Ctx, step: Step, fallbackMs?: number): { ms: number; own: boolean } {
  const remaining = Math.max(1, ctx.deadlineMs - ctx.now());
  const wanted = step.timeoutMs ?? fallbackMs;
  if (wanted !== undefined && wanted < remaining) return { ms: Math.max(1, wanted), own: true };
  return { ms: remaining, own: false };
}

/** Retries `probe` until it returns true or the step's time is up. */
async function poll(ctx: Ctx, step: Step, fallbackMs: number | undefined, probe: (ms: number) => Promise<boolean>) {
  const b = budget(ctx, step, fallbackMs);
  const end = ctx.now() + b.ms;
  for (;;) {
    const left = end - ctx.now();
    const found = await probe(Math.max(1, Math.min(left, 1_000))).catch((e: unknown) => {
      if (e instanceof PatternFailed) throw e;
      return false;
    });
    if (found) return;
    if (ctx.now() + POLL_MS > end || ctx.signal.aborted) throw new StepTimeout(b.own);
    await sleep(POLL_MS);
  }
}

async function patternFound(ctx: Ctx, pattern: string, text: string): Promise<boolean> {
  const r = await ctx.regex.test(pattern, text, ctx.signal);
  if (!r.ok) throw new PatternFailed(r.error);
  return r.found;
}

function textMatches(ctx: Ctx, step: Step, text: string): Promise<boolean> | boolean {
  if (step.pattern !== undefined) return patternFound(ctx, step.pattern, text);
  return text.includes(step.text ?? '');
}

function urlMatches(ctx: Ctx, step: Step, url: string): Promise<boolean> | boolean {
  return step.pattern !== undefined ? patternFound(ctx, step.pattern, url) : url.includes(step.url ?? '');
}

async function waitFor(ctx: Ctx, s: Step, session: Session): Promise<void> {
  const b = budget(ctx, s);
  if (s.selector) return session.waitForSelector(s.selector, s.state ?? 'visible', b.ms);
  if (s.networkIdle) return session.waitForNetworkIdle(b.ms);
  if (s.text !== undefined)
    return poll(ctx, s, undefined, async (ms) => (await session.text(undefined, ms)).includes(s.text ?? ''));
  return poll(ctx, s, undefined, async () => urlMatches(ctx, s, session.url()));
}

async function assertText(ctx: Ctx, s: Step, session: Session): Promise<void> {
  let last = '';
  try {
    await poll(ctx, s, ASSERT_DEFAULT_TIMEOUT_MS, async (ms) =>
      textMatches(ctx, s, (last = await session.text(s.selector, ms))),
    );
  } catch (e) {
    if (!(e instanceof StepTimeout) || !e.ownTimeout) throw e;
    const want = s.pattern !== undefined ? `pattern /${s.pattern}/` : `text "${s.text}"`;
    const seen = last.replace(/\s+/g, ' ').trim().slice(0, 120);
    throw new AssertionFailed(`${want} not found in ${s.selector ?? 'the page'} (saw "${seen}")`);
  }
}

const pageOrigin = (session: Session) => originOf(session.url());

async function runAction(ctx: Ctx, s: Step): Promise<void> {
  const p = ctx.session;
  const sel = s.selector ?? '';
  switch (s.action) {
    case 'goto': {
      const res = await p.goto(s.url ?? '', budget(ctx, s).ms);
      if (res.status !== undefined && res.status >= 400) throw new AssertionFailed(`HTTP ${res.status} from ${s.url}`);
      return;
    }
    case 'click':
      return p.click(sel, budget(ctx, s).ms);
    // A referenced secret is resolved for the origin of the page it is typed on, now (its scope is checked there).
    case 'fill':
      return p.fill(
        sel,
        await resolveTemplates(s.value ?? '', ctx.sources, ctx.masker, pageOrigin(p)),
        budget(ctx, s).ms,
      );
    case 'select':
      return p.select(
        sel,
        await resolveTemplates(s.value ?? '', ctx.sources, ctx.masker, pageOrigin(p)),
        budget(ctx, s).ms,
      );
    case 'totp': {
      const code = await ctx.sources.totp(s.secret ?? '', pageOrigin(p));
      ctx.masker.add(code);
      return p.fill(sel, code, budget(ctx, s).ms);
    }
    case 'press':
      return p.press(s.selector, s.key ?? '', budget(ctx, s).ms);
    case 'check':
      return p.check(sel, s.checked ?? true, budget(ctx, s).ms);
    case 'hover':
      return p.hover(sel, budget(ctx, s).ms);
    case 'waitFor':
      return waitFor(ctx, s, p);
    case 'assertText':
      return assertText(ctx, s, p);
    case 'assertVisible': {
      const b = budget(ctx, s, ASSERT_DEFAULT_TIMEOUT_MS);
      try {
        return await p.waitForSelector(sel, 'visible', b.ms);
      } catch (e) {
        if (b.own && (e as Error).name === 'TimeoutError') throw new AssertionFailed(`${sel} is not visible`);
        throw e;
      }
    }
    case 'assertUrl':
      try {
        return await poll(ctx, s, ASSERT_DEFAULT_TIMEOUT_MS, async () => urlMatches(ctx, s, p.url()));
      } catch (e) {
        if (e instanceof StepTimeout && e.ownTimeout) throw new AssertionFailed(`URL ${p.url()} does not match`);
        throw e;
      }
    case 'extract': {
      const ms = budget(ctx, s).ms;
      const v = s.attribute ? ((await p.attribute(sel, s.attribute, ms)) ?? '') : await p.text(sel, ms);
      ctx.extracted[s.as ?? s.name] = ctx.masker.mask(v.trim()).slice(0, 1_000);
      return;
    }
    case 'screenshot': {
      const file = screenshotName(ctx.stepIndex, s.name);
      const path = ctx.screenshots ? ctx.artifacts.path(file) : undefined;
      if (!path) return;
      await p.screenshot(path, s.fullPage ?? false);
      await ctx.artifacts.add(file, 'screenshot', ctx.stepIndex);
      ctx.onDemand.add(file);
      return;
    }
    case 'sleep': {
      const ms = Math.min(s.ms ?? 0, Math.max(0, ctx.deadlineMs - ctx.now()));
      const end = ctx.now() + ms;
      // In slices, so that a crashed browser or the timeout ends the sleep at once.
      while (ctx.now() < end && ctx.browserConnected())
        await sleep(Math.min(250, end - ctx.now()), undefined, { signal: ctx.signal });
      if (!ctx.browserConnected()) throw new Error('browser disconnected');
      if (ms < (s.ms ?? 0)) throw new StepTimeout(false);
      return;
    }
  }
}

function classify(ctx: Ctx, s: Step, e: unknown): { outcome: Outcome; message: string } {
  const raw = ctx.masker.mask(String((e as Error)?.message ?? e).split('\n')[0]!).slice(0, 300);
  const where = `step ${ctx.stepIndex + 1} "${s.name}" (${s.action})`;
  if (e instanceof TemplateError || e instanceof PatternFailed)
    return { outcome: 'exception', message: `${where}: ${raw}` };
  if (!ctx.browserConnected())
    return { outcome: 'exception', message: `${where}: the browser crashed or disconnected` };
  const deadline = ctx.signal.aborted || ctx.now() >= ctx.deadlineMs - 5;
  const ownTimeout = e instanceof StepTimeout ? e.ownTimeout : (e as Error)?.name === 'TimeoutError' && !deadline;
  if (e instanceof AssertionFailed) return { outcome: 'error', message: `${where}: ${raw}` };
  if (/(net::ERR_CERT|ERR_SSL|SEC_ERROR|SSL_ERROR|NS_ERROR_NET_INADEQUATE_SECURITY)/.test(raw)) {
    return { outcome: 'error', message: `${where}: TLS error: ${raw}` };
  }
  const net = /(net::ERR_[A-Z_]+|NS_ERROR_[A-Z_]+)/.exec(raw);
  if (net && s.action === 'goto') return { outcome: 'down', message: `${where}: ${net[1]} for ${s.url}` };
  if (!ownTimeout && (deadline || e instanceof StepTimeout)) {
    return { outcome: 'down', message: `${where}: transaction timed out` };
  }
  if (ownTimeout) return { outcome: 'error', message: `${where}: timed out after its timeoutMs` };
  return { outcome: 'error', message: `${where}: ${raw}` };
}

/** Reads the current document's timings when it may be new or still loading (not after every step: each read is a
 * round trip to the page). */
async function recordTiming(ctx: Ctx, nav: NavigationRecorder): Promise<void> {
  if (ctx.signal.aborted || !ctx.browserConnected()) return;
  const url = ctx.session.url();
  if (url === nav.lastUrl && nav.lastComplete) return;
  const raw = await Promise.race([
    ctx.session.evaluate<RawTiming | null>(TIMING_EXPRESSION).catch(() => null),
    sleep(2_000, null, { ref: false }),
  ]);
  nav.record(raw, ctx.stepIndex, true);
}

/** Clock difference allowed between the page's timeOrigin and the service's step start. */
const ORIGIN_SLACK_MS = 1_000;

/** Takes the timings pages push (when the session offers it), each credited to the step during which its navigation
 * started; returns false when the session cannot push. */
function takePushedTimings(session: Session, nav: NavigationRecorder, stepStartsUnixMs: number[]): boolean {
  if (!session.onTiming) return false;
  session.onTiming((raw) => {
    // A document of this run started after its first step did (a page can call the binding with any figures).
    const origin = typeof raw?.timeOrigin === 'number' ? raw.timeOrigin : NaN;
    const first = stepStartsUnixMs[0];
    if (first === undefined || !(origin >= first - ORIGIN_SLACK_MS && origin <= Date.now() + ORIGIN_SLACK_MS)) return;
    let step = 0;
    while (step + 1 < stepStartsUnixMs.length && stepStartsUnixMs[step + 1]! <= raw.timeOrigin + 1) step++;
    nav.record(raw, step);
  });
  return true;
}

export async function runSteps(input: RunInput): Promise<RunOutput> {
  const ctx: Ctx = { ...input, stepIndex: 0, extracted: {}, onDemand: new Set() };
  const nav = new NavigationRecorder();
  const stepStartsUnixMs: number[] = [];
  const pushed = takePushedTimings(input.session, nav, stepStartsUnixMs);
  const results: StepResult[] = [];
  let failure: RunOutput['failure'];
  for (const [i, s] of input.steps.entries()) {
    if (failure) {
      results.push({ name: s.name, action: s.action, status: 'skipped', durationMs: 0 });
      continue;
    }
    ctx.stepIndex = i;
    stepStartsUnixMs.push(Date.now());
    const t0 = ctx.now();
    const r: StepResult = { name: s.name, action: s.action, status: 'passed', durationMs: 0 };
    try {
      if (ctx.signal.aborted || ctx.now() >= ctx.deadlineMs) throw new StepTimeout(false);
      await runAction(ctx, s);
      r.durationMs = ctx.now() - t0;
    } catch (e) {
      r.durationMs = ctx.now() - t0;
      r.status = 'failed';
      failure = { index: i, ...classify(ctx, s, e) };
      r.error = failure.message;
      if (ctx.screenshots && !ctx.signal.aborted && ctx.browserConnected()) {
        const file = screenshotName(i, s.name, '-failure');
        const path = ctx.artifacts.path(file);
        if (
          path &&
          (await Promise.race([
            ctx.session.screenshot(path, false).then(
              () => true,
              () => false,
            ),
            sleep(3_000, false, { ref: false }),
          ]))
        ) {
          await ctx.artifacts.add(file, 'screenshot', i);
          r.screenshot = file;
        }
      }
    }
    if (s.action === 'screenshot' && r.status === 'passed') r.screenshot = [...ctx.onDemand].pop();
    results.push(r);
    if (!pushed) await recordTiming(ctx, nav);
  }
  // A document that has not reported complete timings yet (still loading, or LCP pending) is read once here.
  if (pushed) {
    await recordTiming(ctx, nav);
    input.session.onTiming?.(() => undefined);
  }
  return {
    steps: results,
    navigations: nav.list(),
    navigationsDropped: nav.dropped,
    extracted: ctx.extracted,
    onDemand: ctx.onDemand,
    failure,
  };
}
