/**
 * The fast bytea[] parser gives exactly what node-pg's default parser gives: from a table of
 * shapes, and for any nested array of byte strings and NULLs as PostgreSQL prints it (fast-check).
 */
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseByteaArray } from '../../../../server/db/bytea-array.ts';

const defaultParser = pg.types.getTypeParser(1001 as Parameters<typeof pg.types.getTypeParser>[0], 'text') as (text: string) => unknown;

type Value = Uint8Array | null | Value[];

/** PostgreSQL's text output of a bytea[] with `bytea_output = hex`. */
function printHex(value: Value[]): string {
  const element = (v: Value): string =>
    v === null ? 'NULL' : Array.isArray(v) ? printHex(v) : `"\\\\x${Buffer.from(v).toString('hex')}"`;
  return `{${value.map(element).join(',')}}`;
}

describe('parseByteaArray', () => {
  it.each([
    ['empty', '{}'],
    ['one value', '{"\\\\x00ff"}'],
    ['an empty value and a NULL', '{"\\\\x",NULL}'],
    ['two dimensions (the checkpointer\'s array_agg of arrays)', '{{"\\\\x6d657373","\\\\x6a736f6e","\\\\x7b7d"},{"\\\\x61","\\\\x62",NULL}}'],
    ['three dimensions', '{{{"\\\\x01"}},{{"\\\\x02"}}}'],
    ['escape output (falls back)', '{"abc\\\\\\\\000"}'],
    ['explicit bounds (falls back)', '[0:1]={"\\\\x01","\\\\x02"}'],
    ['odd hex (falls back)', '{"\\\\x0"}'],
    ['not hex (falls back)', '{"\\\\xzz"}'],
  ])('%s', (_, text) => {
    expect(parseByteaArray(text)).toEqual(defaultParser(text));
  });

  it('agrees with the default parser on any nested array of bytes and NULLs', () => {
    const leaf = fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.constant(null));
    const tree = fc.letrec<{ array: Value[] }>((tie) => ({
      array: fc.array(fc.oneof({ depthSize: 'small' }, leaf, tie('array')), { maxLength: 5 }),
    })).array;
    fc.assert(
      fc.property(tree, (value) => {
        const text = printHex(value);
        expect(parseByteaArray(text)).toEqual(defaultParser(text));
      }),
      { numRuns: 500 },
    );
  });

  it('reads a large value as it was written', () => {
    const blob = Buffer.alloc(1 << 20, 0x5c);
    const [[channel, value]] = parseByteaArray(printHex([[Buffer.from('channel'), blob]])) as Buffer[][];
    expect(channel.toString()).toBe('channel');
    expect(value.equals(blob)).toBe(true);
  });
});
