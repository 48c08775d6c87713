/**
 * Signing secret-scanning alerts as GitHub does, for tests: ECDSA P-256 over SHA-256, the
 * signature DER-encoded and base64'd, the public key published as PEM.
 */

/** Raw `r || s` (what Web Crypto signs) → DER (what GitHub sends); the inverse of `derToRawSignature`. */
export function rawToDer(raw: Uint8Array): Uint8Array {
  const half = raw.length / 2;
  const integer = (bytes: Uint8Array): number[] => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const digits = [...bytes.subarray(i)];
    return [0x02, ...((digits[0] as number) & 0x80 ? [digits.length + 1, 0] : [digits.length]), ...digits];
  };
  const body = [...integer(raw.subarray(0, half)), ...integer(raw.subarray(half))];
  return new Uint8Array([0x30, body.length, ...body]);
}

/** A fresh signing key: its public key as PEM (lines of 64), and `sign(body)` giving the `Github-Public-Key-Signature` value. */
export async function githubAlertSigner(): Promise<{ pem: string; sign(body: string): Promise<string> }> {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
  const pem = `-----BEGIN PUBLIC KEY-----\n${btoa(String.fromCharCode(...spki)).replace(/.{64}/g, '$&\n')}\n-----END PUBLIC KEY-----\n`;
  return {
    pem,
    async sign(body: string): Promise<string> {
      const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, new TextEncoder().encode(body)));
      return btoa(String.fromCharCode(...rawToDer(raw)));
    },
  };
}
