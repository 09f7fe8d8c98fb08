/**
 * The fault suite's report: each fault test records what it did and what was lost, and the file
 * prints one table at the end (`npm run test:faults`; also part of `npm test`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';

export interface FaultRow {
  fault: string;
  outcome: string;
  /** Confirmed actions lost plus actions run twice: must be 0. */
  lost: number;
}

export function createFaultTable(name: string) {
  const rows: FaultRow[] = [];
  return {
    record(row: FaultRow) {
      rows.push(row);
    },
    /** Prints the table and writes it to test-results/faults-<name>.json. */
    print() {
      if (rows.length === 0) return;
      const width = Math.max(...rows.map((r) => r.fault.length), 5);
      const lines = [`${'fault'.padEnd(width)} | outcome | data lost`, ...rows.map((r) => `${r.fault.padEnd(width)} | ${r.outcome} | ${r.lost}`)];
      process.stdout.write(`\n${lines.join('\n')}\n`);
      mkdirSync('test-results', { recursive: true });
      writeFileSync(`test-results/faults-${name}.json`, JSON.stringify(rows, null, 2));
    },
  };
}
