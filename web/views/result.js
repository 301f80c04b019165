// One run result: status, response time, message, metrics; for exec monitors the step list with durations and the
// artifacts (screenshots, video, HAR) fetched with the token (links cannot carry the Authorization header).
// @ts-check
import { h, statusPill, fmtMs, fmtTime, toast } from '../util.js';
import { session } from '../api.js';

/** @typedef {import('../types.js').ArtifactInfo} ArtifactInfo */
/**
 * A result as the monitor page has it: a recent run (ResultRecord) or a run-now answer (attempts, downtime).
 * @typedef {import('../types.js').ResultRecord
 *   & Partial<Pick<import('../types.js').RunAnswer, 'attempts' | 'downtime'>>} ShownResult
 */

/**
 * @param {string} name  the monitor
 * @param {number} ts  the run
 * @param {string} file
 */
async function openArtifact(name, ts, file) {
  const s = session.get();
  const res = await fetch(`/artifacts/${encodeURIComponent(name)}/${ts}/${encodeURIComponent(file)}`, {
    headers: { authorization: `Bearer ${s?.token}` },
  });
  if (!res.ok)
    return toast(
      res.status === 404 ? 'That artifact is no longer stored.' : `Cannot open ${file}: HTTP ${res.status}`,
      'error',
    );
  const url = URL.createObjectURL(await res.blob());
  const a = h('a', {
    href: url,
    target: '_blank',
    rel: 'noopener',
    download: file.endsWith('.har') ? file : undefined,
  });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * @param {string} name
 * @param {number} ts
 * @param {ArtifactInfo} art
 */
function artifactLink(name, ts, art) {
  return h(
    'a.artifact',
    {
      href: '#',
      onclick: (/** @type {MouseEvent} */ e) => {
        e.preventDefault();
        void openArtifact(name, ts, art.file);
      },
    },
    `${art.kind}: ${art.file}`,
    h('span.muted', ` (${Math.max(1, Math.round(art.bytes / 1024))} KiB)`),
  );
}

/**
 * An exec run's steps with their artifacts (r.details.steps is there: the callers check).
 * @param {ShownResult} r
 * @param {string} name
 */
function steps(r, name) {
  const arts = r.details?.artifacts || [];
  const stepList = /** @type {import('../types.js').StepResult[]} */ (r.details?.steps);
  const list = stepList.map((s, i) =>
    h(
      `li.step.st-${s.status}`,
      h('span.step-status', s.status),
      h('span.step-name', s.name || s.action),
      h('span.step-ms', fmtMs(s.durationMs)),
      s.error ? h('div.err-text', s.error) : null,
      arts
        .filter((a) => a.step === i || (s.screenshot && a.file === s.screenshot))
        .map((a) => artifactLink(name, r.ts, a)),
    ),
  );
  const loose = arts.filter((a) => a.step === undefined && !stepList.some((s) => s.screenshot === a.file));
  return [
    h('ol.steps', list),
    loose.length
      ? h(
          'div.artifacts',
          loose.map((a) => artifactLink(name, r.ts, a)),
        )
      : null,
  ];
}

/**
 * Where a result ran: "probe · location · instance" (the instance's PROBE, LOCATION and host); '' when unknown
 * (results recorded before origins were).
 * @param {import('../types.js').ResultOrigin | null | undefined} r
 */
export function originText(r) {
  if (!r?.probe) return '';
  return [r.probe, r.location, r.instance].filter(Boolean).join(' · ');
}

/**
 * @param {ShownResult} r
 * @param {string} name  the monitor (artifact links)
 */
export function renderResult(r, name, stepsOnly = false) {
  if (stepsOnly) return h('div.result', steps(r, name));
  const metrics = Object.entries(r.metrics || {});
  return h(
    'div.result',
    h(
      'div.run-line',
      statusPill(r.status),
      h('span.run-time', fmtTime(r.ts)),
      h('span.run-rt', fmtMs(r.responseTimeMs)),
      (r.attempts ?? 0) > 1 ? h('span.muted', `${r.attempts} attempts`) : null,
      r.downtime ? h('span.muted', 'in maintenance') : null,
      originText(r)
        ? h('span.run-origin.muted', { title: 'probe · location · instance' }, `ran on ${originText(r)}`)
        : null,
    ),
    r.message ? h(`pre.err-text${r.status === 'OK' ? '.ok' : ''}#run-message`, r.message) : null,
    metrics.length
      ? h(
          'dl.metrics',
          metrics.map(([k, v]) => [h('dt', k), h('dd', Number.isInteger(v) ? String(v) : v.toFixed(2))]),
        )
      : null,
    r.details?.steps ? steps(r, name) : null,
    h('details', h('summary', 'Raw result'), h('pre.raw', JSON.stringify(r, null, 2))),
  );
}
