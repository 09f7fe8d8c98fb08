import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../server/config.ts';

describe('loadConfig: demo users', () => {
  it.each([
    ['embedded database: on', {}, true, /on for the embedded/],
    ['DATABASE_URL set: off', { DATABASE_URL: 'postgres://db/x' }, false, /off: DATABASE_URL is set/],
    ['DATABASE_URL set, asked for: on', { DATABASE_URL: 'postgres://db/x', DEMO_USERS: 'true' }, true, /on \(DEMO_USERS=true\)/],
    ['DATABASE_URL set, empty DEMO_USERS: off', { DATABASE_URL: 'postgres://db/x', DEMO_USERS: '' }, false, /off: DATABASE_URL/],
    ['embedded, turned off', { DEMO_USERS: 'false' }, false, /off \(DEMO_USERS=false\)/],
  ])('%s', (_name, env, on, reason) => {
    const config = loadConfig(env);
    expect(config.demoUsers).toBe(on);
    expect(config.demoUsersReason).toMatch(reason);
  });
});

describe('loadConfig: TRUST_PROXY', () => {
  it.each([
    [undefined, ['127.0.0.1', '::1']],
    ['', []],
    ['10.0.0.1, 10.1.0.0/16 ,fd00::/8', ['10.0.0.1', '10.1.0.0/16', 'fd00::/8']],
  ])('%j -> %j', (value, expected) => {
    expect(loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['true', '10.0.0.0/33', 'nginx', '10.0.0.1/8/1', '::1/129'])('refuses %j', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrowError(/TRUST_PROXY/);
  });
});

describe('loadConfig: file URLs', () => {
  it('defaults: off, UPLOAD_MAX_BYTES, 10 s, no allowed private ranges', () => {
    expect(loadConfig({ UPLOAD_MAX_BYTES: '1234' }).fileUrls).toEqual({ fetch: false, maxBytes: 1234, timeoutMs: 10_000, allowCidrs: [] });
  });

  it('reads the settings, and refuses an allowed entry that is not an IP or CIDR', () => {
    expect(loadConfig({ FILE_URL_FETCH: 'true', FILE_URL_MAX_BYTES: '99', FILE_URL_TIMEOUT_MS: '500', FILE_URL_FETCH_ALLOW_CIDRS: '127.0.0.1/32, ::1' }).fileUrls).toEqual({
      fetch: true, maxBytes: 99, timeoutMs: 500, allowCidrs: ['127.0.0.1/32', '::1'],
    });
    expect(() => loadConfig({ FILE_URL_FETCH_ALLOW_CIDRS: 'files.internal' })).toThrowError(/FILE_URL_FETCH_ALLOW_CIDRS/);
  });
});

describe('loadConfig: attachments', () => {
  it('defaults: 100 000 bytes per file, 250 000 per turn, no vision; PDFs: 256 MB per reader, 2 readers, 500 pages, 30 s', () => {
    expect(loadConfig({}).attachments).toEqual({ maxBytesPerFile: 100_000, maxBytesPerTurn: 250_000, vision: false, pdf: { maxMb: 256, workers: 2, maxPages: 500, timeoutMs: 30_000 } });
  });

  it('reads the settings', () => {
    const env = {
      ATTACHMENT_MAX_BYTES_PER_FILE: '4000', ATTACHMENT_MAX_BYTES_PER_TURN: '6000', OPENAI_VISION: 'true',
      ATTACHMENT_PDF_MAX_MB: '128', ATTACHMENT_PDF_WORKERS: '3', ATTACHMENT_PDF_MAX_PAGES: '50', ATTACHMENT_PDF_TIMEOUT_MS: '90000',
    };
    expect(loadConfig(env).attachments).toEqual({ maxBytesPerFile: 4000, maxBytesPerTurn: 6000, vision: true, pdf: { maxMb: 128, workers: 3, maxPages: 50, timeoutMs: 90_000 } });
  });

  it.each([
    ['ATTACHMENT_MAX_BYTES_PER_FILE', '0'],
    ['ATTACHMENT_MAX_BYTES_PER_TURN', 'lots'],
    ['OPENAI_VISION', 'maybe'],
    // A reader takes ~35 MB before its first page: below 64 MB most PDFs would be "too large".
    ['ATTACHMENT_PDF_MAX_MB', '32'],
    ['ATTACHMENT_PDF_WORKERS', '0'],
    ['ATTACHMENT_PDF_MAX_PAGES', '1.5'],
    ['ATTACHMENT_PDF_TIMEOUT_MS', '10'],
  ])('refuses %s=%j', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrowError(new RegExp(name));
  });
});
