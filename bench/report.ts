import { loadavg } from 'node:os';

/** The load average, for the lines that say under what the figures were measured. */
export const loadAverage = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** Prints rows under a header: the first column left-aligned, the others right-aligned. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const format = (row: string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!)))
      .join('  ');
  console.log(format(header));
  for (const row of rows) console.log(format(row));
}
