/** Output for people (aligned tables) and for scripts (`--json`, one JSON document on stdout). */
export interface Out {
  json: boolean;
  write(text: string): void;
  error(text: string): void;
}

export function processOut(json: boolean): Out {
  return {
    json,
    write: (t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n'),
    error: (t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n'),
  };
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: Array<Array<string | number | undefined>>): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === undefined ? '' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function emit(out: Out, data: unknown, human: () => string): void {
  out.write(out.json ? JSON.stringify(data, null, 2) : human());
}
