/**
 * A software WebAuthn authenticator for integration tests (issue 28 step-up): one ES256 (P-256)
 * credential, "none" attestation, user present and verified. It answers the options the server
 * sends exactly as a browser's authenticator would (clientDataJSON, authenticatorData, a DER
 * signature over authenticatorData ‖ SHA-256(clientDataJSON)), so the server's real
 * @simplewebauthn/server verification runs. Chromium's virtual authenticator does the same in e2e.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();
const UP_UV = 0x01 | 0x04;
const AT = 0x40;

export class SoftAuthenticator {
  readonly id = randomBytes(16);
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  #counter = 0;

  constructor(readonly origin: string) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get credentialId(): string {
    return b64(this.id);
  }

  #authData(rpId: string, flags: number, extra: Uint8Array = new Uint8Array()): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(++this.#counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), counter, extra]);
  }

  #clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  register(options: PublicKeyCredentialCreationOptionsJSON): RegistrationResponseJSON {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.id.length);
    const authData = this.#authData(options.rp.id!, UP_UV | AT, Buffer.concat([Buffer.alloc(16), idLength, this.id, cose]));
    const attestationObject = isoCBOR.encode(new Map<string, string | Map<string, string> | Uint8Array>([['fmt', 'none'], ['attStmt', new Map<string, string>()], ['authData', new Uint8Array(authData)]]));
    return {
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {},
      response: { clientDataJSON: b64(this.#clientData('webauthn.create', options.challenge)), attestationObject: b64(attestationObject), transports: ['internal'] },
    };
  }

  /** An assertion over `challenge` (default: the options' own). */
  assert(options: PublicKeyCredentialRequestOptionsJSON, challenge = options.challenge): AuthenticationResponseJSON {
    const authData = this.#authData(options.rpId!, UP_UV);
    const clientData = this.#clientData('webauthn.get', challenge);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return {
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {},
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature) },
    };
  }
}
