/**
 * Diff operations between successive output values, as Gradio computes them
 * (`gradio.utils.diff`): `append` when a string grows by a suffix, `replace` when a type or scalar
 * changes, recursion into arrays and objects with deletes before adds. Pure.
 * @module
 */
import type { DiffOp } from './types.ts';

type Path = (string | number)[];

function kind(value: unknown): 'null' | 'array' | 'object' | 'string' | 'number' | 'boolean' | 'other' {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  if (t === 'object') return isPlainObject(value) ? 'object' : 'other';
  if (t === 'string' || t === 'number' || t === 'boolean') return t;
  return 'other';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A path as a parent chain, turned into an array only when an op is emitted (no garbage for equal nodes). */
interface PathNode {
  key: string | number;
  parent: PathNode | null;
}

function toPath(node: PathNode | null, last?: string | number): Path {
  const path: Path = last === undefined ? [] : [last];
  for (let n = node; n; n = n.parent) path.push(n.key);
  return path.reverse();
}

function compare(prev: unknown, next: unknown, at: PathNode | null, ops: DiffOp[]): void {
  if (prev === next) return;
  const k = kind(prev);
  if (k === 'null' && kind(next) === 'null') return;
  if (k !== kind(next) || k === 'other' || k === 'null') {
    ops.push(['replace', toPath(at), next === undefined ? null : next]);
    return;
  }
  if (k === 'string') {
    const a = prev as string;
    const b = next as string;
    // slice + === compares flat memory; startsWith walks a cons string (the usual `+=` result) char by char.
    if (b.length > a.length && b.slice(0, a.length) === a) ops.push(['append', toPath(at), b.slice(a.length)]);
    else ops.push(['replace', toPath(at), b]);
    return;
  }
  if (k === 'array') {
    const a = prev as unknown[];
    const b = next as unknown[];
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i++) if (a[i] !== b[i]) compare(a[i], b[i], { key: i, parent: at }, ops);
    // Highest index first, so each splice leaves the indices still to delete in place.
    for (let i = a.length - 1; i >= common; i--) ops.push(['delete', toPath(at, i), null]);
    for (let i = common; i < b.length; i++) ops.push(['add', toPath(at, i), b[i]]);
    return;
  }
  if (k === 'object') {
    const a = prev as Record<string, unknown>;
    const b = next as Record<string, unknown>;
    for (const key of Object.keys(a)) {
      if (a[key] === undefined) continue;
      if (b[key] !== undefined) {
        if (a[key] !== b[key]) compare(a[key], b[key], { key, parent: at }, ops);
      } else ops.push(['delete', toPath(at, key), null]);
    }
    for (const key of Object.keys(b)) {
      if (b[key] !== undefined && a[key] === undefined) ops.push(['add', toPath(at, key), b[key]]);
    }
    return;
  }
  // number / boolean that differ
  ops.push(['replace', toPath(at), next]);
}

/** The operations that turn `prev` into `next` (empty when equal). */
export function diff(prev: unknown, next: unknown): DiffOp[] {
  const ops: DiffOp[] = [];
  compare(prev, next, null, ops);
  return ops;
}

/**
 * A structural copy (arrays and plain objects copied, strings and scalars shared), so a handler
 * that mutates and re-yields one object is still diffed correctly. Cost follows the node count,
 * not the string lengths.
 */
export function snapshot<T>(value: T): T {
  if (Array.isArray(value)) return value.map(snapshot) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = snapshot(value[key]);
    return out as T;
  }
  return value;
}

/** Applies operations the way `@gradio/client` does (`apply_diff`); used by tests and tools. */
export function applyOps(target: unknown, ops: readonly DiffOp[]): unknown {
  let root = target;
  for (const [action, path, value] of ops) {
    if (path.length === 0) {
      if (action === 'replace') root = value;
      else if (action === 'append') root = (root as string) + (value as string);
      else throw new Error(`Unsupported action at the root: ${action}`);
      continue;
    }
    let current = root as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) current = current[path[i]] as Record<string | number, unknown>;
    const last = path[path.length - 1];
    if (action === 'replace') current[last] = value;
    else if (action === 'append') (current[last] as string) += value as string;
    else if (action === 'add') {
      if (Array.isArray(current)) current.splice(Number(last), 0, value);
      else current[last] = value;
    } else if (action === 'delete') {
      if (Array.isArray(current)) current.splice(Number(last), 1);
      else delete current[last];
    } else throw new Error(`Unknown action: ${String(action)}`);
  }
  return root;
}
