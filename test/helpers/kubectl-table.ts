/** table parses kubectl's column output, cutting each row at the header's column starts (so empty cells stay empty). */
export function table(out: string): { header: string[]; rows: Record<string, string>[] } {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const head = lines[0] ?? '';
  const starts = [...head.matchAll(/\S+/g)].map((m) => m.index ?? 0);
  const header = [...head.matchAll(/\S+/g)].map((m) => m[0]);
  const rows = lines
    .slice(1)
    .map((line) => Object.fromEntries(header.map((h, i) => [h, line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim()])));
  return { header, rows };
}
