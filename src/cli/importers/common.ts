/**
 * Shared pieces of the importers (`sentinel import --from …`): what an importer returns, monitor names in our
 * alphabet, and intervals in seconds mapped to a preset or a cron expression.
 */
export type Entry = Record<string, unknown> & { name: string; type: string };

export interface Skipped {
  name: string;
  reason: string;
}

export interface Imported {
  monitors: Entry[];
  skipped: Skipped[];
  /** Things mapped with a change of meaning, per monitor (written as comments next to the entry). */
  notes: Array<{ name: string; note: string }>;
}

export type Importer = (text: string, file: string) => Imported;

/** Our names allow A-Z a-z 0-9 _ . - : @ (1-128); others become '-'; duplicates get -2, -3… */
export function nameMaker(): (raw: string) => string {
  const used = new Set<string>();
  return (raw) => {
    const base =
      raw
        .trim()
        .replace(/[^A-Za-z0-9_.:@-]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 120) || 'monitor';
    let n = base;
    for (let i = 2; used.has(n); i++) n = `${base}-${i}`;
    used.add(n);
    return n;
  };
}

const PRESETS: Array<[number, string]> = [
  [60, '1MIN'],
  [300, '5MIN'],
  [600, '10MIN'],
  [1200, '20MIN'],
  [1800, '30MIN'],
  [3600, '60MIN'],
];

/**
 * An interval in seconds → the nearest `sched` preset (always written: url monitors require it), plus a `schedCron`
 * when the interval is an exact cron step (every 2 min, every 6 h); a note when neither is exact.
 */
export function schedule(seconds: number): { fields: Record<string, string>; note?: string } {
  const near = PRESETS.find(([s]) => s >= seconds) ?? PRESETS[PRESETS.length - 1]!;
  const fields: Record<string, string> = { sched: near[1] };
  if (near[0] === seconds) return { fields };
  const min = seconds / 60;
  if (Number.isInteger(min) && min > 1 && min < 60 && 60 % min === 0)
    return { fields: { ...fields, schedCron: `*/${min} * * * *` } };
  if (Number.isInteger(min) && min > 60 && min % 60 === 0 && 24 % (min / 60) === 0)
    return { fields: { ...fields, schedCron: `0 */${min / 60} * * *` } };
  return { fields, note: `interval ${seconds}s has no exact schedule here: ${near[1]} used` };
}

/** The fields the spec requires of url monitors, written for every imported monitor so each reads the same. */
export function basics(e: Entry, displayName: string | undefined, on: boolean): void {
  e.display_name = displayName || e.name;
  e.state = on ? 'on' : 'off';
  e.probe = 'default';
}

export const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(v)));

/** A regex matching the literal text. */
export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The reference a secret gets in the written file (the importer never writes a secret's value). */
export const secretRef = (name: string, field: string) =>
  `\${${`IMPORT_${name}_${field}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}}`;

/** A header map in the api type's "Key:Value,Key:Value" form (values with a comma cannot be expressed: noted). */
export function headerList(h: Record<string, unknown>, notes: string[]): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(h)) {
    const val = String(v);
    if (val.includes(',')) notes.push(`header ${k} has a comma in its value: left out (set it by hand)`);
    else out.push(`${k}:${val}`);
  }
  return out.join(',');
}
