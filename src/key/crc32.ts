// CRC-32 (IEEE 802.3, the zlib/PNG polynomial), table-driven. The table holds signed 32-bit values so
// that the loop stays in small integers (an unsigned table makes V8 box values above 2^31).
const TABLE = /* @__PURE__ */ (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** The CRC-32 register before any input. */
export const CRC32_START = -1;

/**
 * Feeds one character code (0-255) into a running CRC-32 register and returns the new register.
 *
 * @example
 * crc32Final(crc32Step(CRC32_START, 0x61)) === crc32('a') // true
 */
export function crc32Step(register: number, code: number): number {
  return (TABLE[(register ^ code) & 0xff] as number) ^ (register >>> 8);
}

/**
 * Feeds the characters `from` (inclusive) to `to` (exclusive) of an ASCII string into a running CRC-32
 * register and returns the new register; {@link crc32Final} turns a register into the checksum.
 * Lets a caller precompute the register of a fixed head (a key's prefix) once.
 *
 * @example
 * crc32Final(crc32Update(crc32Update(CRC32_START, 'mk_', 0, 3), 'live', 0, 4)) === crc32('mk_live') // true
 */
export function crc32Update(register: number, ascii: string, from: number, to: number): number {
  let c = register;
  for (let i = from; i < to; i++) c = crc32Step(c, ascii.charCodeAt(i));
  return c;
}

/**
 * The checksum (an unsigned 32-bit number) of a CRC-32 register.
 *
 * @example
 * crc32Final(crc32Update(CRC32_START, '123456789', 0, 9)) // 0xcbf43926
 */
export function crc32Final(register: number): number {
  return (register ^ -1) >>> 0;
}

/**
 * CRC-32 of the characters of an ASCII string (code units taken as bytes), up to `end` (default: all).
 *
 * @example
 * crc32('123456789') // 0xcbf43926
 */
export function crc32(ascii: string, end: number = ascii.length): number {
  return crc32Final(crc32Update(CRC32_START, ascii, 0, end));
}
