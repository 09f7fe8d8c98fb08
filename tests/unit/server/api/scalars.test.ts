import { describe, expect, it } from 'vitest';
import { isBigintText, isRealText, isValidTimestamp } from '../../../../server/api/scalars.ts';

describe('isValidTimestamp', () => {
  it.each([
    ['2026-12-03T05:30:13Z', true],
    ['2026-12-03T05:30:13.123456+00:00', true],
    ['2026-12-03 05:30:13.123456+00', true], // PostgreSQL's own text form (conversation cursors)
    ['2024-02-29T00:00:00Z', true],
    ['2000-02-29T00:00:00Z', true],
    ['2026-02-29T00:00:00Z', false],
    ['1900-02-29T00:00:00Z', false],
    ['2026-02-31T00:00:00Z', false],
    ['2026-13-01T00:00:00Z', false],
    ['2026-00-10T00:00:00Z', false],
    ['0000-01-01T00:00:00Z', false],
    ['2026-01-01T24:00:00Z', false],
    ['2026-01-01T23:60:00Z', false],
    ['2026-01-01T00:00:00+99:00', false],
    ['2026-01-01T00:00:00+15:99', false], // issue 30: PostgreSQL refused it (a 500)
    ['2026-01-01T00:00:00-0560', false],
    ['2026-01-01T00:00:00+15:59', true],
    ['2026-01-01T00:00:00+0530', true],
    ['not a date', false],
    ['', false],
  ])('%j -> %s', (text, ok) => expect(isValidTimestamp(text)).toBe(ok));
});

describe('isBigintText', () => {
  it.each([
    ['0', true],
    ['9223372036854775807', true],
    ['9223372036854775808', false],
    ['9999999999999999999', false],
    ['-1', false],
    ['1.5', false],
    ['1e3', false],
    ['', false],
  ])('%j -> %s', (text, ok) => expect(isBigintText(text)).toBe(ok));
});

describe('isRealText', () => {
  it.each([
    ['0', true],
    ['0.0607927', true],
    ['1e-20', true],
    ['1e-50', false],
    ['1e39', false],
    ['1.2.3', false],
    ['e', false],
    ['NaN', false],
    ['Infinity', false],
    ['', false],
  ])('%j -> %s', (text, ok) => expect(isRealText(text)).toBe(ok));
});
