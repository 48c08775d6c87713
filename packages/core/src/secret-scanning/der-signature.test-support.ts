/** Raw `r || s` → DER, the inverse of `derToRawSignature`, for signing test alerts as GitHub does. */
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
