// Canvas charts drawn by hand: sparklines (overview), the status timeline strip and the response-time chart.
// @ts-check
import { fitCanvas, STATUS_COLOR, fmtMs, fmtTime } from './util.js';

/**
 * What the charts read of POST /histGraph's answer (the monitor page draws an empty one when it has none).
 * @typedef {Pick<import('./types.js').HistGraph, 't' | 'count' | 'responseMs' | 'startTime' | 'endTime'>
 *   & { bucketMs?: number }} HistGraph
 */

/**
 * Sparkline of recent results from a /histGraph answer: one bar per bucket, height = avg response time,
 * red full-height bar when the bucket has runs but no successful response time.
 * @param {HTMLCanvasElement} canvas
 * @param {HistGraph | null | undefined} g  none yet: a grey line
 */
export function drawSparkline(canvas, g, w = 96, hgt = 24) {
  const ctx = fitCanvas(canvas, w, hgt);
  if (!g || !g.t?.length) {
    ctx.fillStyle = '#c5cbd6';
    ctx.fillRect(0, hgt / 2, w, 1);
    return;
  }
  const avg = g.responseMs.avg;
  let max = 0;
  for (const v of avg) if (v !== null && v > max) max = v;
  const n = g.bucketMs ? Math.max(1, Math.ceil((g.endTime - g.startTime) / g.bucketMs)) : Math.max(g.t.length, 24);
  const t0 = g.startTime;
  const span = g.endTime - g.startTime || 1;
  const bw = Math.max(1, w / n - 1);
  for (let i = 0; i < g.t.length; i++) {
    const x = ((g.t[i] - t0) / span) * w;
    const v = avg[i];
    const failed = v === null && g.count[i] > 0;
    // v is null in a bucket without runs: Number(null) is 0, what `/` made of it before.
    const bh = failed ? hgt : Math.max(2, max ? (Number(v) / max) * (hgt - 2) : 2);
    ctx.fillStyle = failed ? STATUS_COLOR.DOWN : STATUS_COLOR.OK;
    ctx.fillRect(Math.min(x, w - bw), hgt - bh, bw, bh);
  }
}

/**
 * Status timeline strip: {segments:[{from,to,status}]} over [startMs, endMs]. Uncovered time stays grey.
 * @param {HTMLCanvasElement} canvas
 * @param {Pick<import('./types.js').Timeline, 'segments'> | null} tl  POST /timelineGraph's answer (null: none)
 * @param {number} startMs
 * @param {number} endMs
 * @param {number} w
 */
export function drawTimeline(canvas, tl, startMs, endMs, w, hgt = 28) {
  const ctx = fitCanvas(canvas, w, hgt);
  ctx.fillStyle = '#e4e7ec';
  ctx.fillRect(0, 0, w, hgt);
  const span = endMs - startMs || 1;
  for (const s of tl?.segments || []) {
    const x0 = ((s.from - startMs) / span) * w;
    const x1 = ((s.to - startMs) / span) * w;
    ctx.fillStyle = STATUS_COLOR[s.status] || '#999';
    ctx.fillRect(x0, 0, Math.max(1, x1 - x0), hgt);
  }
}

/**
 * A round axis step (1, 2, 2.5, 5 × a power of ten) giving at most about `ticks` ticks up to max.
 * @param {number} max
 * @param {number} ticks
 */
function niceStep(max, ticks) {
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

/**
 * Response-time chart from a columnar /histGraph answer: min–max band, avg line, failed buckets marked red under
 * the axis. Returns a hit-test function (x → index) for the tooltip.
 * @param {HTMLCanvasElement} canvas
 * @param {HistGraph} g
 * @param {number} w
 * @param {number} hgt
 */
export function drawResponseChart(canvas, g, w, hgt) {
  const ctx = fitCanvas(canvas, w, hgt);
  const pad = { l: 56, r: 12, t: 10, b: 26 };
  const pw = w - pad.l - pad.r;
  const ph = hgt - pad.t - pad.b;
  const { t, count } = g;
  const { min, avg, max } = g.responseMs;
  let top = 0;
  for (let i = 0; i < t.length; i++) {
    const v = max[i];
    if (v !== null && v > top) top = v;
  }
  top = top || 1;
  const step = niceStep(top, 4);
  top = Math.ceil(top / step) * step;
  const span = g.endTime - g.startTime || 1;
  const X = (/** @type {number} */ ts) => pad.l + ((ts - g.startTime) / span) * pw;
  // Only buckets with a response are drawn (segs); Number(null) would be 0, as `/` makes it.
  const Y = (/** @type {number | null} */ v) => pad.t + ph - (Number(v) / top) * ph;
  ctx.font = '11px system-ui, sans-serif';
  ctx.strokeStyle = '#e4e7ec';
  ctx.fillStyle = '#5b6475';
  ctx.lineWidth = 1;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let v = 0; v <= top + 1e-9; v += step) {
    const y = Math.round(Y(v)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.l, y);
    ctx.lineTo(w - pad.r, y);
    ctx.stroke();
    ctx.fillText(fmtMs(v), pad.l - 6, y);
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const long = span > 2 * 86_400_000;
  for (let k = 0; k <= 4; k++) {
    const ts = g.startTime + (span * k) / 4;
    const label = fmtTime(ts, false);
    ctx.fillText(
      long ? label.slice(5, 10) : label.slice(11),
      Math.min(Math.max(X(ts), pad.l + 20), w - pad.r - 20),
      hgt - pad.b + 6,
    );
  }
  // min-max band
  ctx.fillStyle = 'rgba(37, 99, 235, 0.15)';
  ctx.beginPath();
  let open = false;
  /** @type {Array<[number, number]>}  runs of consecutive buckets with a response: [first, last] */
  const segs = [];
  for (let i = 0; i <= t.length; i++) {
    if (i < t.length && avg[i] !== null) {
      if (!open) segs.push([i, i]);
      else segs[segs.length - 1][1] = i;
      open = true;
    } else open = false;
  }
  for (const [a, b] of segs) {
    ctx.beginPath();
    for (let i = a; i <= b; i++) ctx.lineTo(X(t[i]), Y(max[i]));
    for (let i = b; i >= a; i--) ctx.lineTo(X(t[i]), Y(min[i]));
    ctx.closePath();
    ctx.fill();
  }
  ctx.strokeStyle = '#2563eb';
  ctx.lineWidth = 1.5;
  for (const [a, b] of segs) {
    ctx.beginPath();
    for (let i = a; i <= b; i++) ctx.lineTo(X(t[i]), Y(avg[i]));
    if (a === b) ctx.arc(X(t[a]), Y(avg[a]), 2, 0, 2 * Math.PI);
    ctx.stroke();
  }
  ctx.fillStyle = STATUS_COLOR.DOWN;
  for (let i = 0; i < t.length; i++)
    if (avg[i] === null && count[i] > 0) ctx.fillRect(X(t[i]) - 1, pad.t + ph - 3, 3, 3);
  return {
    /** @param {number} px  x in CSS pixels from the canvas' left edge */
    indexAt(px) {
      if (!t.length) return -1;
      const ts = g.startTime + ((px - pad.l) / pw) * span;
      let lo = 0;
      let hi = t.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (t[mid] < ts) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0 && Math.abs(t[lo - 1] - ts) < Math.abs(t[lo] - ts)) lo--;
      return lo;
    },
    xOf: (/** @type {number} */ i) => X(t[i]),
  };
}
