import { describe, expect, it } from 'vitest';
import { asPreview } from '../../../../server/agent/tools/preview.ts';
import { argumentLabels, humanize } from '../../../../server/operations/index.ts';

describe('argument labels (issue 27 item 4)', () => {
  it("a property's title wins; else its name in words", () => {
    expect(argumentLabels({ properties: { duration_minutes: { title: 'Duration (minutes)' }, reason: { description: 'Why' }, dryRun: {} } })).toEqual({
      duration_minutes: 'Duration (minutes)', reason: 'Reason', dryRun: 'Dry run',
    });
  });
  it('no properties: no labels', () => {
    expect(argumentLabels(null)).toEqual({});
    expect(argumentLabels({ type: 'object' })).toEqual({});
  });
  it('humanize', () => expect(humanize('service-name')).toBe('Service name'));
});

describe('asPreview (what the api answered to a dry run)', () => {
  it('keeps a well-formed preview, refuses anything else', () => {
    expect(asPreview({ dry_run: true, preview: { summary: 's', state_hash: 'h', details: { a: 1 } } })).toEqual({ summary: 's', state_hash: 'h', details: { a: 1 } });
    expect(asPreview({ preview: { summary: 's' } })).toBeNull();
    expect(asPreview({ id: 'd1' })).toBeNull();
  });
});
