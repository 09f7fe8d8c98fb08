/**
 * The floor plan, checked: every import under server/, rolled up to folders (a file at the top of
 * server/ is its own unit), must be an arrow of ARCHITECTURE's dependency table, and every arrow of
 * the table must still be used. The table is acyclic by construction (each unit may import only
 * units listed below it), and the real graph is checked for loops as well.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, normalize, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SERVER = 'server';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The unit a path under server/ belongs to: its first folder, or its own name for a top-level file. */
export function unitOf(path: string): string {
  const [first, ...rest] = relative(SERVER, path).split(sep);
  return rest.length === 0 ? first.replace(/\.ts$/, '') : first;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|new URL\(\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every folder-level arrow `from -> to` of the real code, with one file that draws it. */
function realArrows(): Map<string, string> {
  const arrows = new Map<string, string>();
  for (const file of sourceFiles(SERVER)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const target = normalize(join(file, '..', m[1] ?? m[2] ?? m[3]));
      if (!target.startsWith(SERVER + sep)) continue;
      const [from, to] = [unitOf(file), unitOf(target)];
      if (from !== to && !arrows.has(`${from} -> ${to}`)) arrows.set(`${from} -> ${to}`, file);
    }
  }
  return arrows;
}

/** The table between the dependency-table markers of docs/ARCHITECTURE.md: `| unit | may import |` rows. */
function tableArrows(): { order: string[]; arrows: Set<string> } {
  const doc = readFileSync('docs/ARCHITECTURE.md', 'utf8');
  const table = doc.slice(doc.indexOf('<!-- dependency-table -->'), doc.indexOf('<!-- /dependency-table -->'));
  const order: string[] = [];
  const arrows = new Set<string>();
  for (const row of table.split('\n').filter((l) => l.startsWith('| `'))) {
    const [unit, allowed] = row.split('|').slice(1, 3).map((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((x) => x[1]));
    order.push(unit[0]);
    for (const to of allowed) arrows.add(`${unit[0]} -> ${to}`);
  }
  return { order, arrows };
}

describe('the floor plan (docs/ARCHITECTURE.md, "Dependency table")', () => {
  const real = realArrows();
  const { order, arrows } = tableArrows();

  it('lists every unit under server/, once', () => {
    const units = new Set(sourceFiles(SERVER).map(unitOf));
    expect(new Set(order).size).toBe(order.length);
    expect([...units].sort()).toEqual([...order].sort());
  });

  it('has only downward arrows: a unit imports only units listed below it (so no loop can form)', () => {
    const upward = [...arrows].filter((a) => {
      const [from, to] = a.split(' -> ');
      return order.indexOf(to) <= order.indexOf(from);
    });
    expect(upward).toEqual([]);
  });

  it('every import of the code is an arrow of the table', () => {
    const missing = [...real].filter(([arrow]) => !arrows.has(arrow)).map(([arrow, file]) => `${arrow} (${file})`);
    expect(missing).toEqual([]);
  });

  it('every arrow of the table is used by the code (the table tells no stale story)', () => {
    expect([...arrows].filter((a) => !real.has(a))).toEqual([]);
  });
});
