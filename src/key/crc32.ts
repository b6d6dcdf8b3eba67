// CRC-32 (IEEE 802.3, the zlib/PNG polynomial), table-driven.
const TABLE = /* @__PURE__ */ (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * CRC-32 of the characters of an ASCII string (code units taken as bytes).
 *
 * @example
 * crc32('123456789') // 0xcbf43926
 */
export function crc32(ascii: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < ascii.length; i++) {
    c = (TABLE[(c ^ ascii.charCodeAt(i)) & 0xff] as number) ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}
