/**
 * Encryption at rest for the private signing keys: a database dump, a backup or a role that can
 * read `signing_keys` learns nothing that forges tokens. AES-256-GCM under a key-encryption key
 * (KEK) from `KEY_ENCRYPTION_KEY` (the same value on every replica and split role) or, unset, a
 * random one kept 0600 in `<DATA_DIR>/key-encryption.key`. The row's kid is the additional data,
 * so a sealed key copied onto another row does not open.
 * @module
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { JWK } from 'jose';
import type { Config } from '../config.ts';

/** What `signing_keys.private_jwk` holds once sealed; plaintext JWKs have `d` instead. */
export interface SealedJwk {
  sealed: 'A256GCM';
  /** First bytes of the KEK's hash: says which KEK sealed it without revealing it. */
  kek: string;
  iv: string;
  data: string;
}

export interface KeyCipher {
  /** Identifies the KEK (not secret). */
  readonly id: string;
  seal(jwk: JWK, kid: string): SealedJwk;
  open(value: SealedJwk | JWK, kid: string): JWK;
  /** A 32-byte key for another purpose (the OIDC flow cookie), from the same secret: the same on every replica. */
  derive(purpose: string): Uint8Array;
}

/** The stored KEK cannot open a key: the setting differs from the one that sealed it. */
export class KeyCipherError extends Error {
  override readonly name = 'KeyCipherError';
}

export function isSealed(value: unknown): value is SealedJwk {
  return typeof value === 'object' && value !== null && (value as SealedJwk).sealed === 'A256GCM';
}

export function createKeyCipher(secret: string): KeyCipher {
  const key = Buffer.from(hkdfSync('sha256', secret, 'airlock', 'signing-key-encryption', 32));
  const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return {
    id,
    derive: (purpose) => new Uint8Array(hkdfSync('sha256', secret, 'airlock', purpose, 32)),
    seal(jwk, kid) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(kid));
      const data = Buffer.concat([cipher.update(JSON.stringify(jwk)), cipher.final(), cipher.getAuthTag()]);
      return { sealed: 'A256GCM', kek: id, iv: iv.toString('base64url'), data: data.toString('base64url') };
    },
    open(value, kid) {
      if (!isSealed(value)) return value; // a plaintext key of an older version (sealed at start)
      if (value.kek !== id) {
        throw new KeyCipherError(`signing key ${kid} was sealed with another key-encryption key (${value.kek}, this process has ${id}): set KEY_ENCRYPTION_KEY to the value used where it was created`);
      }
      try {
        const data = Buffer.from(value.data, 'base64url');
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(value.iv, 'base64url')).setAAD(Buffer.from(kid));
        decipher.setAuthTag(data.subarray(data.length - 16));
        return JSON.parse(Buffer.concat([decipher.update(data.subarray(0, -16)), decipher.final()]).toString()) as JWK;
      } catch (error) {
        throw new KeyCipherError(`signing key ${kid} does not open: its sealed form is damaged`, { cause: error });
      }
    },
  };
}

/** Reads the KEK file, creating it (0600, exclusive: concurrent starts agree) when missing. */
function fileSecret(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = readFileSync(path, 'utf8').trim();
  if (secret.length < 32) throw new KeyCipherError(`${path} is damaged (shorter than 32 characters): restore it from a backup`);
  return secret;
}

const ciphers = new Map<string, KeyCipher>();

/** Where a config's KEK file is (used when KEY_ENCRYPTION_KEY is unset). */
export function kekFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'key-encryption.key');
}

/**
 * The KEK secret itself: the environment's, else DATA_DIR's file (created when missing, unless
 * `create` is false: then null). Also the root of the audit checkpoint key (audit/checkpoint-key.ts).
 */
export function kekSecret(config: Pick<Config, 'keyEncryptionKey' | 'dataDir'>, options: { create?: boolean } = {}): string | null {
  if (config.keyEncryptionKey) return config.keyEncryptionKey;
  const path = kekFile(config);
  if (options.create === false && !existsSync(path)) return null;
  return fileSecret(path);
}

/** The process's cipher for a config: the environment's KEK, else DATA_DIR's file. */
export function keyCipherFor(config: Pick<Config, 'keyEncryptionKey' | 'dataDir'>): KeyCipher {
  const source = config.keyEncryptionKey ?? `file:${kekFile(config)}`;
  let cipher = ciphers.get(source);
  if (!cipher) {
    cipher = createKeyCipher(kekSecret(config)!);
    ciphers.set(source, cipher);
  }
  return cipher;
}
