/**
 * The floor plan, checked: every import under server/, rolled up to folders (a file at the top of
 * server/ is its own unit), must be an arrow of ARCHITECTURE's dependency table, and every arrow of
 * the table must still be used. The table is acyclic by construction (each unit may import only
 * units listed below it), and the real graph is checked for loops as well.
 *
 * Outside server/ the server may import only the wire module, `src/lib/wire` (a unit of the table,
 * at its floor), which the UI shares: the wire module imports nothing but itself and zod, and the
 * UI takes its zod schemas as types only, so zod stays out of the browser bundle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, normalize, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SERVER = 'server';
/** The wire module: the one folder outside server/ the server may import. */
const WIRE = join('src', 'lib', 'wire');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The unit a path belongs to: under server/, its first folder, or its own name for a top-level
 * file; the wire module as a whole (`src/lib/wire`); anything else under src/ by its folder, which
 * no row of the table names (so an import of it fails).
 */
export function unitOf(path: string): string {
  if (path.startsWith(WIRE + sep)) return 'src/lib/wire';
  if (!path.startsWith(SERVER + sep)) return relative('.', join(path, '..')).split(sep).join('/');
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
      // Code lives under server/ and src/; anything else (the built UI the web role serves) is not an arrow.
      if (!target.startsWith(SERVER + sep) && !target.startsWith('src' + sep)) continue;
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

  it('lists every unit under server/ and the wire module, once', () => {
    const units = new Set([...sourceFiles(SERVER).map(unitOf), 'src/lib/wire']);
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

/** Every import of a file: its specifier, and whether it is erased at build (`import type`, `export type`). */
function importsOf(file: string): Array<{ specifier: string; typeOnly: boolean }> {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => ({
    specifier: m[3] ?? m[4],
    typeOnly: Boolean(m[2]),
  }));
}

/** Where a specifier of `file` points in the project (`$lib` is src/lib); null for a package. */
function resolved(file: string, specifier: string): string | null {
  if (specifier.startsWith('.')) return normalize(join(file, '..', specifier));
  return specifier.startsWith('$lib/') ? normalize(join('src', 'lib', specifier.slice(5))) : null;
}

function uiFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return uiFiles(path);
    return /\.(ts|svelte)$/.test(e.name) ? [path] : [];
  });
}

describe('the wire module (src/lib/wire), shared by the server and the UI', () => {
  it('imports nothing but itself and zod: no server code, no Svelte, no $lib', () => {
    const outside = sourceFiles(WIRE).flatMap((file) =>
      importsOf(file)
        .filter(({ specifier }) => specifier !== 'zod' && !resolved(file, specifier)?.startsWith(WIRE + sep))
        .map(({ specifier }) => `${file}: ${specifier}`),
    );
    expect(outside).toEqual([]);
  });

  it('keeps zod out of the UI: outside chat-metadata.ts, the schemas are imported as types only', () => {
    const schemas = join(WIRE, 'chat-metadata.ts');
    const runtime = uiFiles('src').flatMap((file) =>
      importsOf(file)
        .filter(({ specifier, typeOnly }) => !typeOnly && resolved(file, specifier) === schemas)
        .map(() => file),
    );
    expect(runtime).toEqual([]);
    expect(uiFiles('src').filter((file) => file !== schemas && importsOf(file).some((i) => i.specifier === 'zod'))).toEqual([]);
  });
});

/** File-level import cycles among `files` (type-only imports count: a circle of types is a circle of meaning). */
export function fileCycles(files: string[]): string[][] {
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, importsOf(f).map((i) => resolved(f, i.specifier)).filter((t): t is string => t !== null && known.has(t))]));
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of edges.get(f) ?? []) {
      if (state.get(t) === 'open') cycles.push([...stack.slice(stack.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return cycles;
}

describe('files', () => {
  it('no two files import each other, directly or around a circle (server/ and the wire module)', () => {
    expect(fileCycles([...sourceFiles(SERVER), ...sourceFiles(WIRE)]).map((c) => c.join(' -> '))).toEqual([]);
  });
});

/**
 * CONTRACTS §0's size guideline: a file of server/ or src/ stays within 300 lines, or is listed
 * here with the reason it is not split yet (a file that shrinks below the limit must leave the
 * list, so the list never goes stale).
 */
const OVERSIZED: Record<string, string> = {
  'src/lib/chat/chat.svelte.ts': 'three jobs (history, following another tab, own submits): issue 40 item 2 splits it',
  'server/gradio/bus/pg-bus.ts': 'one LISTEN connection and its replay protocol; split with the bus contract suite',
  'server/agent/runtime.ts': 'the agent runtime: model, tool sources and middleware wired in one closure',
  'server/approvals/decide.ts': 'the decision core under the row lock; issue 40 item 1 (one door) reshapes it',
  'server/db/approvals.ts': "the approvals table's one module (CONTRACTS §0: one module per table)",
  'server/config.ts': 'every setting read and checked in one place (ARCHITECTURE: config.ts); the single sign-on settings (issue 39) took it past 300, and they are the first to move to a file of their own',
};
const MAX_LINES = 300;

describe('file sizes (CONTRACTS §0)', () => {
  const files = [...sourceFiles(SERVER), ...uiFiles('src')];
  const lines = new Map(files.map((f) => [f.split(sep).join('/'), readFileSync(f, 'utf8').split('\n').length - 1]));
  it(`every file is within ${MAX_LINES} lines or listed with a reason`, () => {
    expect([...lines].filter(([f, n]) => n > MAX_LINES && !(f in OVERSIZED)).map(([f, n]) => `${f}: ${n}`)).toEqual([]);
  });
  it('every listed file is still over the limit (the list never goes stale)', () => {
    expect(Object.keys(OVERSIZED).filter((f) => (lines.get(f) ?? 0) <= MAX_LINES)).toEqual([]);
  });
});
