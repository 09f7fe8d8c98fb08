import { describe, expect, it } from 'vitest';
import { approversNote, editFields, placeFieldErrors, readFields } from '../../../../../src/lib/chat/edit-args.ts';

describe('edit-args: the card\'s fields of a paused call', () => {
  it('one field per argument, under its label, keeping its JSON type', () => {
    const fields = editFields({ service: 'checkout-api', replicas: 3, force: false, tags: ['a'] }, { service: 'Service' });
    expect(fields).toEqual([
      { key: 'service', label: 'Service', kind: 'string', text: 'checkout-api' },
      { key: 'replicas', label: 'replicas', kind: 'number', text: '3' },
      { key: 'force', label: 'force', kind: 'boolean', text: 'false' },
      { key: 'tags', label: 'tags', kind: 'json', text: '["a"]' },
    ]);
  });

  it('reads the fields back: unchanged fields give the same arguments, edits their new values', () => {
    const input = { service: 'checkout-api', version: '2.4.0', replicas: 3, force: false, tags: ['a'] };
    const fields = editFields(input);
    expect(readFields(fields)).toEqual({ ok: true, args: input });
    fields[1].text = '2.4.1';
    fields[2].text = '5';
    fields[3].text = 'true';
    expect(readFields(fields)).toEqual({ ok: true, args: { ...input, version: '2.4.1', replicas: 5, force: true } });
  });

  it('refuses, per field, a number that is none and JSON that does not parse', () => {
    const fields = editFields({ replicas: 3, tags: ['a'] });
    fields[0].text = 'three';
    fields[1].text = '[a';
    expect(readFields(fields)).toEqual({ ok: false, errors: { replicas: 'a number, please', tags: 'not valid JSON' } });
  });

  it("places the server's field errors by their fields; the rest (the whole, an argument with no field) above them", () => {
    const fields = editFields({ service: 'checkout-api', flags: { canary: true } });
    expect(
      placeFieldErrors(fields, [
        { path: 'flags.canary', message: 'expected boolean' },
        { path: 'flags', message: 'too many keys' },
        { path: '', message: 'unknown argument colour' },
        { path: 'region', message: 'required' },
      ]),
    ).toEqual({ byKey: { flags: 'expected boolean; too many keys' }, general: ['unknown argument colour', 'region: required'] });
    expect(placeFieldErrors(fields, [])).toEqual({ byKey: {}, general: [] });
  });
});

describe('edit-args: every kind of field round-trips (issue 37 item 2)', () => {
  const input = {
    service: 'orders-api', // string
    environment: 'staging', // an enum's value is a string
    duration_minutes: 30, // integer
    ratio: 0.25, // number
    force: false, // boolean
    flags: { canary: true, steps: [1, 2] }, // nested object
    tags: ['a', 'b'], // array
    note: null, // null is edited as JSON
  };

  it('unchanged fields give the same arguments back, with their JSON types', () => {
    expect(readFields(editFields(input))).toEqual({ ok: true, args: input });
  });

  it('a number input bound with bind:value gives a number (or null when empty): read, not trimmed', () => {
    const fields = editFields(input);
    const duration = fields.find((f) => f.key === 'duration_minutes')!;
    duration.text = 45;
    expect(readFields(fields)).toEqual({ ok: true, args: { ...input, duration_minutes: 45 } });
    duration.text = -5;
    // A negative number is a number: the tool's schema (on the server) says it is out of range.
    expect(readFields(fields)).toEqual({ ok: true, args: { ...input, duration_minutes: -5 } });
    duration.text = null;
    expect(readFields(fields)).toEqual({ ok: false, errors: { duration_minutes: 'a number, please' } });
    duration.text = Number.NaN;
    expect(readFields(fields)).toEqual({ ok: false, errors: { duration_minutes: 'a number, please' } });
    duration.text = ' 12 ';
    expect(readFields(fields)).toEqual({ ok: true, args: { ...input, duration_minutes: 12 } });
    duration.text = '   ';
    expect(readFields(fields)).toEqual({ ok: false, errors: { duration_minutes: 'a number, please' } });
  });

  it('each kind takes an edit: enum value, fraction, boolean, nested object, array, null', () => {
    const fields = editFields(input);
    const set = (key: string, text: string | number | null) => { fields.find((f) => f.key === key)!.text = text; };
    set('environment', 'production');
    set('ratio', 0.5);
    set('force', 'true');
    set('flags', '{"canary": false, "steps": []}');
    set('tags', '[]');
    set('note', '"why"');
    expect(readFields(fields)).toEqual({
      ok: true,
      args: { ...input, environment: 'production', ratio: 0.5, force: true, flags: { canary: false, steps: [] }, tags: [], note: 'why' },
    });
  });
});

describe('approversNote: the editor says when an edit changes who must approve (issue 37 item 3)', () => {
  it('more or fewer approvals, a refusal, or nothing when they are the same', () => {
    expect(approversNote(1, { approvals_required: 2, should_allow: true })).toBe('With these arguments it needs 2 approvals (now 1).');
    expect(approversNote(2, { approvals_required: 1, should_allow: true })).toBe('With these arguments it needs 1 approval (now 2).');
    expect(approversNote(1, { approvals_required: 1, should_allow: true })).toBeNull();
    expect(approversNote(1, { approvals_required: 0, should_allow: true })).toBeNull();
    expect(approversNote(1, { approvals_required: 0, should_allow: false })).toBe('The policy refuses this call with these arguments.');
  });
});
