import { describe, expect, it } from 'vitest';
import { dispositionName } from '../../../../../src/lib/chat/download.ts';

describe("dispositionName: the server's file name (issue 37 item 8)", () => {
  it('reads filename, and filename* (UTF-8) before it', () => {
    expect(dispositionName('attachment; filename="health-of-payments-api.md"')).toBe('health-of-payments-api.md');
    expect(dispositionName(`attachment; filename="r-sum.md"; filename*=UTF-8''r%C3%A9sum%C3%A9.md`)).toBe('résumé.md');
  });

  it('a name, never a path; nothing readable gives null (the caller names the file)', () => {
    expect(dispositionName('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(dispositionName('attachment')).toBeNull();
    expect(dispositionName('attachment; filename=')).toBeNull();
    expect(dispositionName(null)).toBeNull();
  });
});
