/**
 * A fast text parser for `bytea[]` results (OID 1001), for the checkpointer's pool.
 *
 * Why: PostgresSaver reads a checkpoint's channel values and pending writes as nested `bytea[]`
 * arrays (`array_agg(array[channel::bytea, type::bytea, blob])`), and node-pg's default parser
 * (postgres-array) walks them a character at a time and copies the rest of the text for every
 * sub-array: 12.7 ms of CPU for one read of a 40-turn thread, on the gateway's one thread, before
 * every run and twice before a resume (`npm run bench -- checkpoint`). PostgreSQL's hex output (`bytea_output = hex`, its default) only ever holds `{`, `}`, `,`,
 * `NULL` and `"\\x<hex>"` in such an array, which this parser reads with `indexOf` and
 * `Buffer.from(hex)`; anything else (escape output, explicit bounds) goes to the default parser.
 * @module
 */
import pg from 'pg';

type TypeId = Parameters<typeof pg.types.getTypeParser>[0];
/** `bytea[]`: array types are not in node-pg's TypeId enum. */
const BYTEA_ARRAY_OID = 1001 as TypeId;
const defaultByteaArray = pg.types.getTypeParser(BYTEA_ARRAY_OID, 'text') as (text: string) => unknown;

type Nested = Array<Buffer | null | Nested>;

/** Parses PostgreSQL's text output of a `bytea[]` (any dimension) into Buffers, nulls and arrays. */
export function parseByteaArray(text: string): Nested {
  return parseHexByteaArray(text) ?? (defaultByteaArray(text) as Nested);
}

/** The hex-output fast path; undefined when `text` is in any other shape. */
export function parseHexByteaArray(text: string): Nested | undefined {
  if (text.charCodeAt(0) !== 123 /* { */) return undefined;
  const open: Nested[] = [];
  let root: Nested | undefined;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const current = open.at(-1);
    if (c === 123 /* { */) {
      const array: Nested = [];
      if (current) current.push(array);
      else if (root) return undefined; // text after the outer array
      else root = array;
      open.push(array);
      i++;
    } else if (c === 125 /* } */) {
      if (!open.pop()) return undefined;
      i++;
    } else if (!current) {
      return undefined;
    } else if (c === 44 /* , */) {
      i++;
    } else if (c === 34 /* " */ && text.startsWith('\\\\x', i + 1)) {
      const start = i + 4;
      const end = text.indexOf('"', start);
      if (end < 0 || (end - start) % 2 !== 0) return undefined;
      const bytes = Buffer.from(text.slice(start, end), 'hex');
      if (bytes.length * 2 !== end - start) return undefined; // Buffer.from stops at the first non-hex character
      current.push(bytes);
      i = end + 1;
    } else if (text.startsWith('NULL', i)) {
      current.push(null);
      i += 4;
    } else {
      return undefined;
    }
  }
  return open.length === 0 ? root : undefined;
}

/** node-pg `types` for a pool whose `bytea[]` results should use the fast parser. */
export const fastByteaArrayTypes = {
  getTypeParser(oid: TypeId, format?: 'text' | 'binary') {
    if (oid === BYTEA_ARRAY_OID && format !== 'binary') return parseByteaArray;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;
